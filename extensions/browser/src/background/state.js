// The worker's state and where it survives a restart. An MV3 service worker is stopped when
// idle and started again by the next event, with empty memory: the gateway URL and the SDK's
// token store live in chrome.storage.local (they outlive the browser), the shared tabs in
// chrome.storage.session (gone with the browser session, as the tabs are). Every listener
// awaits `loaded` before it reads anything here.
import "../limits.js";

export const L = globalThis.__tapLimits;

export const DEFAULT_GATEWAY_URL = "ws://127.0.0.1:9400";
/** Every connection's provider name: the gateway makes each tab an instance of it. */
export const PROVIDER_NAME = "browser";

export const state = {
  url: DEFAULT_GATEWAY_URL,
  /** The SDK's key → value store (its pairing token), written through to storage.local. */
  sdkStore: {},
  /** tabId → {origin (shared on), currentOrigin (last committed), sharedAt}. */
  shared: new Map(),
  /** A connection waits for the code the user types: {tabId, resolve, reject}. */
  codeWanted: null,
  /** What the last pairing attempt ended with, for #pair-error. */
  pairError: "",
  /** The stored token stopped working (revoked, or a gateway that forgot it). */
  revoked: false,
  /** A pairing failed in a way retrying would repeat (denied, expired): wait for the user. */
  pairingBlocked: false,
  /** The last connection attempt could not reach the gateway. */
  gatewayDown: false,
};

/** Loopback WebSocket URLs only: the extension talks to this machine's gateway and nothing else. */
export function loopbackUrl(text) {
  if (typeof text !== "string" || text.length > L.MAX_GATEWAY_URL_CHARS) return null;
  let u;
  try {
    u = new URL(text.trim());
  } catch {
    return null;
  }
  if (u.protocol !== "ws:" || u.username || u.password || u.search || u.hash) return null;
  if (!["127.0.0.1", "localhost", "[::1]"].includes(u.hostname)) return null;
  if (u.pathname !== "/" && u.pathname !== "") return null;
  return `ws://${u.host}`;
}

export function tokenKey(url = state.url) {
  // The SDK's own key for a token (sdk/typescript/src/browser.ts): per URL and provider name.
  return `tap-provider-token:${url}:${PROVIDER_NAME}`;
}

export function hasToken() {
  return typeof state.sdkStore[tokenKey()] === "string";
}

async function loadState() {
  const local = await chrome.storage.local.get(["gatewayUrl", "sdkStore"]);
  state.url = loopbackUrl(local.gatewayUrl) ?? DEFAULT_GATEWAY_URL;
  state.sdkStore = local.sdkStore && typeof local.sdkStore === "object" ? local.sdkStore : {};
  const session = await chrome.storage.session.get(["shared"]);
  for (const [id, s] of Object.entries(session.shared ?? {})) {
    if (s && typeof s.origin === "string") state.shared.set(Number(id), { origin: s.origin, currentOrigin: s.origin, sharedAt: s.sharedAt ?? 0 });
  }
}

export const loaded = loadState();

export function saveShared() {
  const out = {};
  for (const [id, s] of state.shared) out[id] = { origin: s.origin, sharedAt: s.sharedAt };
  return chrome.storage.session.set({ shared: out });
}

export function saveLocal() {
  return chrome.storage.local.set({ gatewayUrl: state.url, sdkStore: state.sdkStore });
}

/** The text of #status (the popup shows it as is; tests read it). */
export function statusText() {
  if (state.codeWanted) return state.revoked ? "Pairing revoked: pair again" : "Waiting for the pairing code";
  if (state.gatewayDown) return `Gateway not running at ${state.url}`;
  if (hasToken()) return "Paired";
  return state.revoked ? "Pairing revoked: pair again" : "Not paired";
}

/** The origin of a URL the extension may share (http and https pages only), else null. */
export function pageOrigin(url) {
  try {
    const u = new URL(url);
    return u.protocol === "http:" || u.protocol === "https:" ? u.origin : null;
  } catch {
    return null;
  }
}

/** Cuts a string to `max` characters with a visible marker. */
export function cut(text, max) {
  const s = String(text ?? "");
  return s.length <= max ? s : `${s.slice(0, max)}…[cut ${s.length - max} chars]`;
}

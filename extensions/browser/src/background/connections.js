// One gateway connection per shared tab (provider "browser", instance "tab-<id>"), and the
// pairing they share. Only one connection pairs at a time: the others wait until its token is
// stored and then connect with it (one pairing, many connections), so the tray never shows
// several codes for one extension. A token that stops working (revoked) closes every
// connection and starts one pairing again.
import { Provider } from "../../vendor/tap-sdk/browser.js";
import { L, PROVIDER_NAME, cut, hasToken, saveLocal, state, tokenKey } from "./state.js";
import { toolsFor } from "./tools.js";

/** When a connection last bound (ms): a gateway started after it has restarted since. */
let lastBoundAt = 0;
/** tabId → {provider, bound}. */
const conns = new Map();
/** Tabs whose connection is being set up (before it is in `conns`). */
const opening = new Set();
/** tabId → retry timer after a failed start. */
const retries = new Map();
/** Failed starts in a row, for the retry backoff. */
let failures = 0;
/** The tab whose connection is pairing (no token yet), if any. */
let pairingTab = null;
/** Set while we forget the token ourselves (unpair), so it is not taken for a revoke. */
let forgetting = false;
/** The tab that was focused last: its connection sends the keep-alive traffic. */
let focusedTab = null;
let keepAlive = null;

export function connectionOf(tabId) {
  const c = conns.get(tabId);
  return c?.bound ? c.provider : undefined;
}

export function connectionState(tabId) {
  const c = conns.get(tabId);
  if (!c) return retries.has(tabId) ? "retrying" : "none";
  return c.bound ? "connected" : c.provider.state;
}

/** The SDK's token store: the worker's memory, written through to chrome.storage.local. */
const storage = {
  getItem: (key) => state.sdkStore[key] ?? null,
  setItem(key, value) {
    state.sdkStore[key] = String(value);
    state.revoked = false;
    state.pairingBlocked = false;
    state.pairError = "";
    void saveLocal();
    queueMicrotask(sync); // the others may connect now, with this token
  },
  removeItem(key) {
    delete state.sdkStore[key];
    void saveLocal();
    if (forgetting) return;
    // The SDK forgets a stored token the gateway refused: revoked by the user, or a gateway
    // that restarted without remembering it. Every connection holds the same token, so close
    // them all now (before their own retries each open a pairing request) and pair once.
    state.revoked = true;
    closeAll("pairing revoked");
    queueMicrotask(sync);
    void explainLostToken();
  },
};

function platformFor(url) {
  // As the SDK's connectProvider builds it (sdk/typescript/src/browser.ts), with the
  // Provider object in our hands from the start: unsharing a tab must be able to close a
  // connection that is still pairing or waiting for a session.
  return {
    canPair: true,
    url: () => ({ url, source: "the extension's gateway URL" }),
    async token() {
      const t = storage.getItem(tokenKey(url));
      return t ? { token: t, source: "stored pairing token" } : null;
    },
    socket: (u) => new WebSocket(u),
    savePairingToken: (t) => storage.setItem(tokenKey(url), t),
    forgetPairingToken: () => storage.removeItem(tokenKey(url)),
  };
}

/** What the popup's code field resolves; the SDK sends it in `auth.confirm`. */
function askCode(tabId) {
  return new Promise((resolve, reject) => {
    state.codeWanted?.reject(new Error("another pairing started"));
    state.codeWanted = { tabId, resolve, reject };
  });
}

/** The popup's #pair-submit. */
export function submitCode(code) {
  const w = state.codeWanted;
  if (!w) return false;
  state.codeWanted = null;
  state.pairError = "";
  w.resolve(code);
  return true;
}

/**
 * Starts a tab's connection. What decides who pairs is set here, synchronously: the tab look-up
 * below awaits, and a second `sync` meanwhile must see this tab as the one pairing.
 */
function open(tabId) {
  const pairing = !hasToken();
  if (pairing) pairingTab = tabId;
  opening.add(tabId);
  start(tabId)
    .catch((e) => console.warn(`tab ${tabId}: ${e?.message ?? e}`))
    .finally(() => opening.delete(tabId));
}

async function start(tabId) {
  let tab;
  try {
    tab = await chrome.tabs.get(tabId);
  } catch {
    tab = null; // closed meanwhile: sharing.js unshares it
  }
  const s = state.shared.get(tabId);
  if (!tab || !s || conns.has(tabId)) {
    if (pairingTab === tabId) pairingTab = null;
    queueMicrotask(sync); // another tab may pair instead
    return;
  }
  const url = state.url;
  const provider = new Provider({
    name: PROVIDER_NAME,
    instance: `tab-${tabId}`,
    metadata: { title: cut(tab.title || s.origin, L.MAX_TITLE_CHARS), url: cut(tab.url, L.MAX_URL_CHARS), origin: s.origin, tabId },
    tools: toolsFor(tabId),
    url,
    // Default filter of the errors stream (the user changes it with the gateway's stream
    // filters): a missing favicon and a request the page itself cancelled are not errors
    // worth the agent's attention; browser_failed_requests still lists them.
    filters: { "browser-errors": [{ match: "favicon\\.ico", outcome: "drop" }, { match: "failed: net::ERR_ABORTED$", outcome: "drop" }] },
    onPairingCode: () => askCode(tabId),
  }, platformFor(url));
  const entry = { provider, bound: false };
  conns.set(tabId, entry);
  provider.on("bound", () => {
    entry.bound = true;
    lastBoundAt = Date.now();
    failures = 0;
    state.gatewayDown = false;
  });
  provider.on("disconnected", () => { entry.bound = false; });
  provider.on("error", (e) => console.warn(`tab ${tabId}: ${e.code}: ${e.message}`));
  provider.ready.catch((e) => failed(tabId, entry, e));
  await provider.connect();
}

/** The first connection of a tab failed for good (the SDK does not retry those). */
function failed(tabId, entry, e) {
  if (conns.get(tabId) !== entry) return; // closed by us
  conns.delete(tabId);
  const wasPairing = pairingTab === tabId;
  if (wasPairing) pairingTab = null;
  if (state.codeWanted?.tabId === tabId) state.codeWanted = null;
  const msg = String(e?.message ?? e);
  let now = false;
  if (e?.code === "DISCONNECTED" && /reach|refused|unreachable/i.test(msg)) {
    state.gatewayDown = true;
  } else if (wasPairing && /wrong pairing code/i.test(msg)) {
    // The gateway ends a request on a wrong code; a new one (a new code) starts at once.
    state.pairError = "Wrong code: type the new code shown in your Tap tray";
    now = true;
  } else if (wasPairing) {
    // Denied in the tray, expired, abandoned: asking again by itself would nag the user.
    // Opening the popup or sharing a tab asks again.
    state.pairError = `Pairing did not complete: ${cut(msg, L.MAX_POPUP_ERROR_CHARS)}`;
    state.pairingBlocked = true;
  } else {
    console.warn(`tab ${tabId}: could not connect: ${msg}`);
  }
  if (!state.pairingBlocked || !wasPairing) {
    const wait = now ? 0 : Math.min(L.CONNECT_RETRY_MS * 2 ** Math.min(failures++, 10), L.CONNECT_RETRY_MAX_MS);
    retries.set(tabId, setTimeout(() => { retries.delete(tabId); sync(); }, wait));
  }
}

/** Opens what is missing and closes what is no longer shared. */
export function sync() {
  for (const [tabId, c] of conns) {
    if (!state.shared.has(tabId)) close(tabId, c, "tab no longer shared");
  }
  for (const tabId of state.shared.keys()) {
    if (conns.has(tabId) || retries.has(tabId) || opening.has(tabId)) continue;
    if (!hasToken() && (pairingTab !== null || state.pairingBlocked)) continue;
    open(tabId);
  }
  if (state.shared.size > 0 && !keepAlive) {
    keepAlive = setInterval(tick, L.KEEPALIVE_INTERVAL_MS);
    // The keep-alive only works while the worker runs; the alarm (main.js) starts it again.
    void chrome.alarms.create(WAKE_ALARM, { periodInMinutes: L.WAKE_ALARM_MINUTES });
  }
  if (state.shared.size === 0 && keepAlive) {
    clearInterval(keepAlive);
    keepAlive = null;
    void chrome.alarms.clear(WAKE_ALARM);
  }
}

/** The alarm that wakes a stopped worker while tabs are shared. */
export const WAKE_ALARM = "tap-wake";

function close(tabId, c, reason) {
  conns.delete(tabId);
  if (pairingTab === tabId) pairingTab = null;
  if (state.codeWanted?.tabId === tabId) {
    state.codeWanted.reject(new Error(reason));
    state.codeWanted = null;
  }
  void c.provider.close(reason);
}

export function closeAll(reason) {
  for (const [tabId, c] of [...conns]) close(tabId, c, reason);
  for (const t of retries.values()) clearTimeout(t);
  retries.clear();
}

/** The popup's #unpair: forget the token and close every connection. */
export function unpair() {
  forgetting = true;
  try {
    closeAll("unpaired by the user");
    for (const key of Object.keys(state.sdkStore)) delete state.sdkStore[key];
    void saveLocal();
  } finally {
    forgetting = false;
  }
  state.revoked = false;
  state.pairError = "";
}

/** The popup opened or a tab was shared: a blocked pairing may be tried again. */
export function userIsHere() {
  if (state.pairingBlocked) {
    state.pairingBlocked = false;
    sync();
  }
}

/** The gateway URL changed: every connection starts again at the new address. */
export function reconnectAll() {
  closeAll("gateway URL changed");
  failures = 0;
  state.gatewayDown = false;
  state.pairingBlocked = false;
  state.revoked = false; // that was the other gateway's pairing
  state.pairError = "";
  sync();
}

/** Any message a connection sends makes its tab the gateway's default target: say so on focus. */
export function tabFocused(tabId) {
  focusedTab = tabId;
  connectionOf(tabId)?.query([PROVIDER_NAME], 1).catch(() => undefined);
}

function tick() {
  // While tabs are shared the worker must stay up (its memory holds the connections). Traffic
  // on one socket keeps it alive (Chrome 116+), and the focused tab's keeps the gateway's "most
  // recently active" instance the one the user looks at. A connection still waiting for a
  // session or a pairing code has nothing to send, so an extension API call (which also resets
  // the idle timer, Chrome 110+) covers that time.
  const id = conns.has(focusedTab) ? focusedTab : conns.keys().next().value;
  if (id !== undefined) connectionOf(id)?.query([PROVIDER_NAME], 1).catch(() => undefined);
  chrome.runtime.getPlatformInfo().catch(() => undefined);
}

/**
 * A refused token is shown as revoked (the popup's wording); when the gateway in fact
 * restarted since we were last bound (a pairing it was not asked to remember is gone then),
 * #pair-error says so, since revoking is something the user would have done.
 */
async function explainLostToken() {
  try {
    const r = await fetch(`${state.url.replace(/^ws:/, "http:")}/healthz`, { signal: AbortSignal.timeout(L.HEALTH_CHECK_TIMEOUT_MS), credentials: "omit", cache: "no-store" });
    const { uptimeMs } = await r.json();
    if (typeof uptimeMs === "number" && lastBoundAt && uptimeMs < Date.now() - lastBoundAt) {
      state.pairError = "The gateway restarted and did not keep this pairing: type the new code shown in your Tap tray";
    }
  } catch {
    /* no gateway to ask: the status says so */
  }
}

/**
 * Whether a Tap gateway answers at the URL (its /healthz), for the popup's status when no
 * connection says so. A bound connection already proves it.
 */
export async function checkGateway() {
  if ([...conns.values()].some((c) => c.bound)) {
    state.gatewayDown = false;
    return;
  }
  const url = `${state.url.replace(/^ws:/, "http:")}/healthz`;
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(L.HEALTH_CHECK_TIMEOUT_MS), credentials: "omit", cache: "no-store" });
    state.gatewayDown = (await r.json())?.service !== "tap-gateway";
  } catch {
    state.gatewayDown = true;
  }
}

/**
 * The browser build: the page's own WebSocket, and pairing instead of token files. The first
 * connection asks the user for the code shown in the tray ("Type the code from your tray",
 * through `onPairingCode`, by default `window.prompt`); the `ext-…` token the gateway then
 * gives is kept in localStorage so a reload reconnects without a new code.
 */
import { Provider, type Platform, type WebSocketLike } from "./provider.js";
import { DEFAULT_GATEWAY_URL } from "./limits.js";
import type { PairingRequest, ProviderOptions } from "./types.js";

export * from "./types.js";
export { Provider } from "./provider.js";
export { FileResult } from "./calls.js";
export { TapError, RateLimitedError, toErrorResult } from "./errors.js";
export { validate, type JsonSchema, type SchemaError } from "./schema.js";
export * as limits from "./limits.js";

export interface BrowserProviderOptions extends ProviderOptions {
  /** Where the paired token is kept; `false` keeps it in memory only. Default: localStorage. */
  storage?: Pick<Storage, "getItem" | "setItem" | "removeItem"> | false;
}

/** Connects (pairing if needed), binds to a session, and resolves once bound. */
export async function connectProvider(options: BrowserProviderOptions): Promise<Provider> {
  const url = options.url ?? DEFAULT_GATEWAY_URL;
  const key = `tap-provider-token:${url}:${options.name}`;
  const storage = options.storage === false ? undefined : options.storage ?? (globalThis as any).localStorage;
  let memory: string | undefined;
  const ask = options.onPairingCode ?? defaultAsk;
  const platform: Platform = {
    canPair: true,
    url: () => ({ url, source: options.url ? "the 'url' option" : "the default address" }),
    async token() {
      const stored = memory ?? storage?.getItem(key) ?? undefined;
      return stored ? { token: stored, source: "stored pairing token" } : null;
    },
    socket: (u) => new (globalThis as any).WebSocket(u) as WebSocketLike,
    savePairingToken(token) {
      memory = token;
      try { storage?.setItem(key, token); } catch { /* storage full or blocked: memory still works for this page */ }
    },
    forgetPairingToken() {
      memory = undefined;
      try { storage?.removeItem(key); } catch { /* as above */ }
    },
  };
  const provider = new Provider({ ...options, onPairingCode: ask }, platform);
  await provider.connect();
  return provider.ready;
}

function defaultAsk(req: PairingRequest): string {
  const code = (globalThis as any).prompt?.(`${req.message}\n\n${req.prompt}`);
  if (!code) throw new Error("no code entered");
  return code;
}

/**
 * The Node build: `connectProvider` over `ws`, with the gateway and token found on disk and in
 * the environment (see discovery.ts), and `fileResult` for answers too large to send inline.
 */
import WebSocket from "ws";
import { randomBytes } from "node:crypto";
import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Provider, type Platform, type WebSocketLike } from "./provider.js";
import { FileResult } from "./calls.js";
import { TapError } from "./errors.js";
import { discoverToken, discoverUrl, tokenPlaces } from "./discovery.js";
import type { CallContext, ProviderOptions } from "./types.js";

export * from "./types.js";
export { Provider } from "./provider.js";
export { FileResult } from "./calls.js";
export { TapError, RateLimitedError, toErrorResult } from "./errors.js";
export { validate, type JsonSchema, type SchemaError } from "./schema.js";
export { discoverUrl, discoverToken, tapHome, copilotHome } from "./discovery.js";
export * as limits from "./limits.js";

/** Connects, authenticates, binds to a session, and resolves once bound. */
export async function connectProvider(options: ProviderOptions): Promise<Provider> {
  const provider = new Provider(options, nodePlatform(options));
  await provider.connect();
  return provider.ready;
}

function nodePlatform(options: ProviderOptions): Platform {
  let urlSource = "";
  return {
    canPair: Boolean(options.onPairingCode) && !options.token,
    url() {
      if (options.url) return { url: options.url, source: "the 'url' option" };
      const found = discoverUrl(process.env);
      urlSource = found.source;
      return { url: found.value, source: found.source };
    },
    async token() {
      const found = discoverToken(process.env, urlSource);
      if (found) return { token: found.value, source: found.source };
      if (options.onPairingCode) return null; // pair instead
      throw new TapError("AUTH_FAILED", `No provider token found; looked in ${tokenPlaces(process.env)}. Is the gateway running (tap gateway)?`);
    },
    socket(url) {
      return new WebSocket(url) as unknown as WebSocketLike;
    },
  };
}

/**
 * Answers a call with a file: writes `bytes` into the provider's `persistDir` (project trust
 * only; paired providers have none) and returns the `FileResult` to return from the handler.
 * The gateway copies the file and deletes its copy `ttlSeconds` later (1 … 3600).
 */
export function fileResult(ctx: CallContext, bytes: Uint8Array | string, mimeType: string, ttlSeconds?: number): FileResult {
  if (!ctx.persistDir) throw new TapError("UNAUTHORIZED", "File results need a persistDir (project trust); this provider has none");
  const path = join(ctx.persistDir, `result-${ctx.callId.replace(/[^A-Za-z0-9_-]/g, "_")}-${randomBytes(4).toString("hex")}`);
  writeFileSync(path, bytes, { mode: 0o600 });
  return new FileResult({ path, mimeType, size: statSync(path).size, ttl: ttlSeconds });
}

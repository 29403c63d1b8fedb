/**
 * Node only: where the gateway and its provider token are, in the SDK's documented order
 * (docs/sdk/typescript.md, "Discovery"). Every function takes the environment and a file reader
 * so the order is unit-testable without touching the real home directory.
 */
import { readFileSync } from "node:fs";
import { homedir, platform } from "node:os";
import { join } from "node:path";
import { DEFAULT_GATEWAY_URL } from "./limits.js";

export type Env = Record<string, string | undefined>;
export type ReadFile = (path: string) => string | undefined;

/** Reads a file, `undefined` when it is missing or unreadable (the next place is tried). */
export const readIfPresent: ReadFile = (path) => {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
};

/** An empty variable counts as unset, as the gateway treats TAP_HOME and COPILOT_HOME. */
function env(e: Env, name: string): string | undefined {
  const v = e[name];
  return v === undefined || v === "" ? undefined : v;
}

/** `TAP_HOME`, else the platform data dir + `/tap`, exactly as docs/configuration.md says. */
export function tapHome(e: Env, home = homedir(), os = platform()): string {
  const set = env(e, "TAP_HOME");
  if (set) return set;
  if (os === "darwin") return join(home, "Library", "Application Support", "tap");
  if (os === "win32") return join(env(e, "APPDATA") ?? join(home, "AppData", "Roaming"), "tap");
  return join(env(e, "XDG_DATA_HOME") ?? join(home, ".local", "share"), "tap");
}

export function copilotHome(e: Env, home = homedir()): string {
  return env(e, "COPILOT_HOME") ?? join(home, ".copilot");
}

export interface Found { value: string; source: string }

/** 1. TAP_GATEWAY_URL; 2. `address` in $TAP_HOME/gateway.json; 3. ws://127.0.0.1:9400. */
export function discoverUrl(e: Env, read: ReadFile = readIfPresent, home = homedir(), os = platform()): Found {
  const fromEnv = env(e, "TAP_GATEWAY_URL");
  if (fromEnv) return { value: fromEnv, source: "TAP_GATEWAY_URL" };
  const file = join(tapHome(e, home, os), "gateway.json");
  const text = read(file);
  if (text !== undefined) {
    try {
      const address = JSON.parse(text)?.address;
      if (typeof address === "string" && address !== "") return { value: address, source: file };
    } catch {
      // a half-written or foreign file: fall through to the default
    }
  }
  return { value: DEFAULT_GATEWAY_URL, source: "the default address" };
}

/**
 * 1. TAP_PROVIDER_TOKEN; 2. the file TAP_PROVIDER_TOKEN_FILE names; then the two token files:
 * `<COPILOT_HOME>/extensions/tap/.provider-token` and `$TAP_HOME/provider-token`. The Copilot
 * file comes first (write-a-provider.md's order) except when the URL came from
 * `$TAP_HOME/gateway.json`: then `$TAP_HOME/provider-token` is that same gateway's token, while
 * the Copilot file belongs to whichever gateway holds port 9400.
 */
export function discoverToken(e: Env, urlSource: string, read: ReadFile = readIfPresent, home = homedir(), os = platform()): Found | null {
  const fromEnv = env(e, "TAP_PROVIDER_TOKEN");
  if (fromEnv) return { value: fromEnv.trim(), source: "TAP_PROVIDER_TOKEN" };
  const candidates: string[] = [];
  const named = env(e, "TAP_PROVIDER_TOKEN_FILE");
  if (named) candidates.push(named);
  const copilot = join(copilotHome(e, home), "extensions", "tap", ".provider-token");
  const tap = join(tapHome(e, home, os), "provider-token");
  const tapGatewayJson = join(tapHome(e, home, os), "gateway.json");
  if (urlSource === tapGatewayJson) candidates.push(tap, copilot);
  else candidates.push(copilot, tap);
  for (const path of candidates) {
    const text = read(path)?.trim();
    if (text) return { value: text, source: path };
  }
  return null;
}

/** The places `discoverToken` looks, for the error message when none has a token. */
export function tokenPlaces(e: Env, home = homedir(), os = platform()): string {
  return [
    "TAP_PROVIDER_TOKEN",
    "TAP_PROVIDER_TOKEN_FILE",
    join(copilotHome(e, home), "extensions", "tap", ".provider-token"),
    join(tapHome(e, home, os), "provider-token"),
  ].join(", ");
}

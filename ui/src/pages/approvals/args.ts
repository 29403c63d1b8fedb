// A waiting call's arguments as a prompt shows them: pretty JSON, with values that look like
// secrets masked and long values folded.
//
// The user decides from this text, and it is on screen (and in screenshots): a token the
// agent passes to a tool must not be shown in the clear, but the user must still see that one
// is there. So a masked value keeps its place and says how long it was. Masking is by key
// (the argument's name says what it is) and by shape (a value that looks like a bearer token
// or a known key format, whatever its key). Folding keeps a long file body or a 500-item list
// from pushing the buttons off the prompt; `fold: null` shows everything (still masked).
//
// What is masked is defined once, in Rust (crates/tap-protocol/src/masking.rs), which the gateway
// also uses for the prompts it sends to MCP clients and session hosts; ../../generated/masking.ts
// is generated from it. tests/e2e/approvals-args.test.mjs runs this module in Node.

import { MASK_PREFIX, SECRET_KEY, SECRET_VALUE } from "../../generated/masking";

/** Strings longer than this are folded (characters kept, the rest counted). */
export const FOLD_CHARS = 160;
/** Arrays longer than this are folded (items kept, the rest counted). */
export const FOLD_ITEMS = 20;

export interface ShownArgs {
  /** Pretty JSON (2 spaces), masked and, unless `fold` is null, folded. */
  text: string;
  /** How many values were masked. */
  masked: number;
  /** How many values were folded (0 when `fold` is null). */
  folded: number;
}

/** Whether `key` names a secret (`api_key`, `X-Auth-Token`, `password`, …). */
export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key.replace(/[^A-Za-z0-9_]/g, "_"));
}

/** Whether a string value looks like a secret (a bearer token, a known key format, a JWT). */
export function looksSecret(value: string): boolean {
  return SECRET_VALUE.some((re) => re.test(value));
}

/** What a masked value shows instead of itself. */
export function maskText(value: unknown): string {
  // Characters as the gateway counts them (code points), not UTF-16 units.
  const len = [...(typeof value === "string" ? value : JSON.stringify(value ?? null))].length;
  return `${MASK_PREFIX} (${len} chars)`;
}

/**
 * `args` as a prompt shows it. `fold`: the string and array lengths past which values are
 * folded, or null for everything.
 */
export function showArgs(args: unknown, fold: { chars: number; items: number } | null = { chars: FOLD_CHARS, items: FOLD_ITEMS }): ShownArgs {
  const counts = { masked: 0, folded: 0 };
  const walk = (value: unknown, secret: boolean): unknown => {
    // A number or flag under a secret-sounding key is a count or a switch (`max_tokens`), not a secret.
    if (secret && value !== null && value !== "" && typeof value !== "boolean" && typeof value !== "number") {
      counts.masked++;
      return maskText(value);
    }
    if (typeof value === "string") {
      if (looksSecret(value)) {
        counts.masked++;
        return maskText(value);
      }
      if (fold && value.length > fold.chars) {
        counts.folded++;
        return `${value.slice(0, fold.chars)}… (${value.length - fold.chars} more chars)`;
      }
      return value;
    }
    if (Array.isArray(value)) {
      const shown = value.slice(0, fold ? fold.items : value.length).map((v) => walk(v, false));
      if (fold && value.length > fold.items) {
        counts.folded++;
        shown.push(`… (${value.length - fold.items} more items)`);
      }
      return shown;
    }
    if (value !== null && typeof value === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = walk(v, isSecretKey(k));
      return out;
    }
    return value;
  };
  const shown = walk(args, false);
  return { text: JSON.stringify(shown, null, 2) ?? "null", ...counts };
}

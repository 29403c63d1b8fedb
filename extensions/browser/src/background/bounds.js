// Bounds on what the worker hands the gateway. The page scripts bound their own answers, but
// the MAIN world belongs to the page (it can replace `__tapMain`), so the worker never trusts
// an answer to be small: strings, lists and nesting are cut here too, and an answer still too
// big is refused rather than sent.
import { TapError } from "../../vendor/tap-sdk/browser.js";
import { L, cut } from "./state.js";

/** A copy of `value` with strings, lists and depth cut (markers say where). */
export function bound(value, depth = 0) {
  if (typeof value === "string") return cut(value, L.MAX_RESULT_STRING_CHARS);
  if (value === null || typeof value !== "object") return typeof value === "number" && !Number.isFinite(value) ? String(value) : value;
  if (depth >= L.MAX_RESULT_DEPTH) return "…[too deep]";
  if (Array.isArray(value)) {
    const out = value.slice(0, L.MAX_RESULT_LIST_ITEMS).map((v) => bound(v, depth + 1));
    if (value.length > L.MAX_RESULT_LIST_ITEMS) out.push(`…[cut ${value.length - L.MAX_RESULT_LIST_ITEMS} items]`);
    return out;
  }
  const out = {};
  let n = 0;
  let cutKeys = 0;
  for (const [k, v] of Object.entries(value)) {
    if (n++ >= L.MAX_RESULT_LIST_ITEMS) { cutKeys++; continue; }
    out[cut(k, L.MAX_RESULT_KEY_CHARS)] = bound(v, depth + 1);
  }
  if (cutKeys > 0) out["…"] = `[cut ${cutKeys} keys]`;
  // A list cut here makes its object truncated, as the contract's answers say.
  if (!("truncated" in value) && Object.values(value).some((v) => Array.isArray(v) && v.length > L.MAX_RESULT_LIST_ITEMS)) out.truncated = true;
  return out;
}

/** `bound(value)`, refused PAYLOAD_TOO_LARGE when its JSON is still over MAX_RESULT_BYTES. */
export function boundedAnswer(value, what) {
  const out = bound(value);
  const bytes = new TextEncoder().encode(JSON.stringify(out) ?? "null").length;
  if (bytes > L.MAX_RESULT_BYTES) {
    throw new TapError("PAYLOAD_TOO_LARGE", `${what} answered ${bytes} bytes (over ${L.MAX_RESULT_BYTES}): ask for less (a selector, a smaller limit)`);
  }
  return out;
}

/** A `since` argument (ms since the epoch, or an ISO date) as ms; 0 when absent. */
export function sinceMs(since) {
  if (since === undefined || since === null) return 0;
  const t = typeof since === "number" ? since : Date.parse(since);
  if (!Number.isFinite(t)) throw new TapError("INVALID_JSON", `'since' must be ms since the epoch or an ISO date, got ${cut(JSON.stringify(since), L.MAX_ECHO_CHARS)}`);
  return t;
}

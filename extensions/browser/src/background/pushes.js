// What a shared tab pushes into its session: console errors and failed requests to the
// `browser-errors` stream (level keep, rate-limited per tab here; the gateway's budgets and
// the stream's filter apply after), and "Ask the agent" as an inject.
import { L, cut, state } from "./state.js";
import { connectionOf } from "./connections.js";

/** tabId → {start (ms), count, dropped} for the current minute. */
const budgets = new Map();

/** Pushes one error of a shared tab, unless the tab used its budget this minute. */
export function pushError(tabId, kind, text, metadata = {}) {
  const p = connectionOf(tabId);
  if (!p) return;
  const now = Date.now();
  let b = budgets.get(tabId);
  if (!b || now - b.start >= 60_000 /* the minute of MAX_ERROR_PUSHES_PER_MINUTE */) {
    b = { start: now, count: 0, dropped: b?.dropped ?? 0 };
    budgets.set(tabId, b);
  }
  if (b.count >= L.MAX_ERROR_PUSHES_PER_MINUTE) {
    b.dropped++;
    return;
  }
  b.count++;
  const meta = { kind, tabId, origin: state.shared.get(tabId)?.origin, ...metadata };
  if (b.dropped) meta.droppedBefore = b.dropped;
  for (const [k, v] of Object.entries(meta)) if (v === undefined) delete meta[k];
  p.push("keep", cut(text, L.MAX_PUSH_EVENT_CHARS), { stream: "browser-errors", metadata: meta })
    .catch((e) => console.warn(`tab ${tabId}: push refused: ${e.code}: ${e.message}`));
}

export function forgetBudget(tabId) {
  budgets.delete(tabId);
}

/**
 * "Ask the agent" from the inspector: an inject into the tab's session whose prompt carries
 * the question and the picked element (selector, text, React component). Resolves with
 * {ok: true} or {error: {code, message}} (an inject is refused while the agent is busy).
 */
export async function ask(tabId, question, element) {
  const p = connectionOf(tabId);
  if (!p) return { error: { code: "DISCONNECTED", message: "This tab is not connected to the Tap gateway" } };
  const q = cut(String(question ?? "").trim(), L.MAX_ASK_QUESTION_CHARS);
  if (!q) return { error: { code: "INVALID_JSON", message: "Type a question first" } };
  const s = state.shared.get(tabId);
  const el = element && typeof element === "object" ? element : {};
  const parts = [];
  if (typeof el.selector === "string") parts.push(`element: ${el.selector}`);
  if (typeof el.tag === "string") parts.push(`tag: ${el.tag}`);
  if (typeof el.text === "string" && el.text) parts.push(`text: ${JSON.stringify(cut(el.text, L.MAX_ASK_ELEMENT_TEXT_CHARS))}`);
  const react = el.react && typeof el.react === "object" ? el.react : null;
  if (react && typeof react.component === "string") {
    const owners = Array.isArray(react.owners) ? react.owners.filter((o) => typeof o === "string").slice(0, L.MAX_ASK_OWNERS) : [];
    parts.push(`React component: ${react.component}${owners.length ? ` (in ${owners.join(" < ")})` : ""}`);
  }
  const context = cut(parts.join("\n"), L.MAX_ASK_CONTEXT_CHARS);
  const prompt = `The user asks about an element they picked in browser tab tab-${tabId} (${s?.origin ?? "?"}):\n\n${q}\n\n${context}\n\n` +
    `Use the browser tools with target "tab-${tabId}" (browser_picked_element, browser_react_tree, browser_styles) to look at it.`;
  try {
    await p.push("inject", `Question from tab-${tabId}: ${cut(q, L.MAX_PUSH_TITLE_CHARS)}`, {
      stream: "browser", prompt,
      metadata: { kind: "ask", tabId, origin: s?.origin, selector: typeof el.selector === "string" ? cut(el.selector, L.MAX_SELECTOR_CHARS) : undefined },
    });
    return { ok: true };
  } catch (e) {
    return { error: { code: e?.code ?? "INTERNAL", message: String(e?.message ?? e) } };
  }
}

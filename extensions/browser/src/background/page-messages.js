// Messages from the page scripts (isolated.js): console errors to push, and "Ask the agent".
// Accepted only from this extension's content script in the top frame of a shared tab that is
// on its shared origin, only of these two types, and only when small: a page can reach none of
// this (no externally_connectable, and the isolated world is not the page's), and anything
// else is ignored.
import { L, cut, pageOrigin, state } from "./state.js";
import { ask, pushError } from "./pushes.js";

function fromSharedTab(sender) {
  const tabId = sender.tab?.id;
  if (sender.id !== chrome.runtime.id || typeof tabId !== "number" || sender.frameId !== 0) return null;
  const s = state.shared.get(tabId);
  if (!s || s.currentOrigin !== s.origin) return null;
  if ((sender.origin ?? pageOrigin(sender.url)) !== s.origin) return null;
  return tabId;
}

/** Handles one message; returns what to answer, or undefined to ignore it. */
export async function onPageMessage(msg, sender) {
  const tabId = fromSharedTab(sender);
  if (tabId === null) return undefined;
  let size;
  try {
    size = JSON.stringify(msg).length;
  } catch {
    return undefined;
  }
  if (size > L.MAX_CONTENT_MESSAGE_BYTES) return undefined;
  if (msg.type === "tap.console") {
    const e = msg.entry && typeof msg.entry === "object" ? msg.entry : null;
    if (!e || e.level !== "error") return undefined; // only errors go to the stream
    const text = cut(String(e.text ?? ""), L.MAX_PUSH_EVENT_CHARS);
    pushError(tabId, "console", `console.error: ${text}`, {
      level: e.level, url: cut(sender.url, L.MAX_URL_CHARS),
      source: typeof e.source === "string" ? cut(e.source, L.MAX_URL_CHARS) : undefined,
      time: typeof e.time === "number" ? e.time : undefined,
    });
    return { ok: true };
  }
  if (msg.type === "tap.ask") return ask(tabId, msg.question, msg.element);
  return undefined;
}

// Sharing a tab: only after the user clicks Share in the popup; the badge "TAP" shows it;
// Stop sharing (or closing the tab) removes its connection, and so its tools, at once.
// A shared tab keeps the origin it was shared on: the page scripts are injected again on each
// navigation that stays there, and not at all on another origin (its tools answer FORBIDDEN).
import { L, pageOrigin, saveShared, state } from "./state.js";
import { sync, userIsHere } from "./connections.js";
import { inject, topDocument } from "./page-bridge.js";
import { unwatchRequests, watchRequests } from "./network.js";
import { forgetBudget } from "./pushes.js";

const BADGE = "TAP";

function badge(tabId, on) {
  const text = on ? BADGE : "";
  chrome.action.setBadgeText({ tabId, text }).catch(() => undefined); // the tab may be gone
  if (on) chrome.action.setBadgeBackgroundColor({ tabId, color: "#1f6feb" }).catch(() => undefined);
}

/** The popup's Share. Resolves with null or an error message for the popup. */
export async function share(tabId) {
  if (state.shared.has(tabId)) return null;
  if (state.shared.size >= L.MAX_SHARED_TABS) return `At most ${L.MAX_SHARED_TABS} tabs can be shared at once`;
  let tab;
  try {
    tab = await chrome.tabs.get(tabId);
  } catch {
    return "That tab is gone";
  }
  const origin = pageOrigin(tab.url);
  if (!origin) return "Only http and https pages can be shared";
  state.shared.set(tabId, { origin, currentOrigin: origin, sharedAt: Date.now() });
  await saveShared();
  watchRequests(tabId);
  badge(tabId, true);
  try {
    await inject(tabId, await topDocument(tabId, origin));
  } catch (e) {
    // A page the browser protects (the Web Store, an error page): nothing to share there.
    await unshare(tabId);
    return `Cannot run in this tab: ${e?.message ?? e}`;
  }
  userIsHere();
  sync();
  return null;
}

/** The popup's Stop sharing, a closed tab, or unpair. */
export async function unshare(tabId) {
  const was = state.shared.get(tabId);
  if (!was) return;
  state.shared.delete(tabId);
  await saveShared();
  sync(); // closes its connection: the gateway drops its tools
  unwatchRequests(tabId);
  forgetBudget(tabId);
  badge(tabId, false);
  if (was.currentOrigin === was.origin) {
    // Let the page scripts remove their overlays and stop listening.
    chrome.scripting.executeScript({
      target: { tabId, frameIds: [0] }, world: "ISOLATED",
      func: () => { try { globalThis.__tapPage?.unshare?.(); } catch { /* the page is going anyway */ } },
    }).catch(() => undefined);
  }
}

export async function unshareAll() {
  for (const tabId of [...state.shared.keys()]) await unshare(tabId);
}

/** webNavigation.onCommitted: a shared tab's top frame loaded a new document. */
export async function committed(details) {
  // A prerendered document is not what the tab shows (yet): only the active top frame counts.
  if (details.frameId !== 0 || (details.documentLifecycle && details.documentLifecycle !== "active")) return;
  const s = state.shared.get(details.tabId);
  if (!s) return;
  s.currentOrigin = pageOrigin(details.url);
  badge(details.tabId, true); // Chrome may reset a tab's badge when it navigates
  if (s.currentOrigin !== s.origin) return;
  try {
    await inject(details.tabId, details.documentId);
  } catch (e) {
    console.warn(`tab ${details.tabId}: inject after navigation failed: ${e?.message ?? e}`);
  }
}

/**
 * tabs.onReplaced: Chrome swapped the tab's contents for a prerendered or restored one under a
 * new tab id. The old id is gone; the share moves to the new id only if it shows the same
 * origin (the user shared that site in that tab), as a new instance.
 */
export async function replaced(added, removed) {
  const was = state.shared.get(removed);
  if (!was) return;
  await unshare(removed);
  let tab;
  try {
    tab = await chrome.tabs.get(added);
  } catch {
    return;
  }
  if (pageOrigin(tab.url) === was.origin) await share(added);
}

/** After a worker restart: the shared tabs that still exist get their watchers and badge back. */
export async function restoreShared() {
  for (const tabId of [...state.shared.keys()]) {
    let tab;
    try {
      tab = await chrome.tabs.get(tabId);
    } catch {
      state.shared.delete(tabId);
      continue;
    }
    state.shared.get(tabId).currentOrigin = pageOrigin(tab.url);
    watchRequests(tabId);
    badge(tabId, true);
  }
  await saveShared();
  sync();
}

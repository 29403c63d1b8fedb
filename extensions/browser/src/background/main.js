// The extension's service worker. Chrome starts it for an event and stops it when idle, so
// every listener is registered here, synchronously, at the top (a listener added later would
// miss the event that woke the worker), and each waits for the state to load from storage.
// At every start the shared tabs come back from chrome.storage.session and reconnect.
import { loaded, state } from "./state.js";
import { WAKE_ALARM, sync, tabFocused } from "./connections.js";
import { committed, replaced, restoreShared, unshare } from "./sharing.js";
import { fromPopup, onPopupMessage } from "./popup-api.js";
import { onPageMessage } from "./page-messages.js";

chrome.runtime.onMessage.addListener((msg, sender, sendResponse) => {
  if (!msg || typeof msg !== "object" || typeof msg.type !== "string") return false;
  let handler;
  if (msg.type.startsWith("popup.") && fromPopup(sender)) handler = onPopupMessage;
  else if (msg.type.startsWith("tap.") && sender.tab) handler = onPageMessage;
  else return false; // not ours to answer: ignored
  loaded
    .then(() => handler(msg, sender))
    .then((answer) => sendResponse(answer ?? null), (e) => sendResponse({ error: String(e?.message ?? e) }));
  return true; // answered asynchronously
});

// Chrome may stop the worker while tabs are shared; this alarm (set while any is) starts it
// again, and the start restores and reconnects them (below). A running worker just checks
// that every shared tab has its connection.
chrome.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name === WAKE_ALARM) void loaded.then(sync);
});

chrome.webNavigation.onCommitted.addListener((details) => {
  void loaded.then(() => committed(details));
});

chrome.tabs.onRemoved.addListener((tabId) => {
  void loaded.then(() => unshare(tabId));
});

chrome.tabs.onReplaced.addListener((added, removed) => {
  void loaded.then(() => replaced(added, removed));
});

// The gateway's default target is the instance that spoke last: the tab the user turned to.
chrome.tabs.onActivated.addListener(({ tabId }) => {
  void loaded.then(() => { if (state.shared.has(tabId)) tabFocused(tabId); });
});

chrome.windows.onFocusChanged.addListener((windowId) => {
  if (windowId === chrome.windows.WINDOW_ID_NONE) return;
  void loaded
    .then(() => chrome.tabs.query({ active: true, windowId }))
    .then(([tab]) => { if (tab && state.shared.has(tab.id)) tabFocused(tab.id); })
    .catch(() => undefined);
});

// The token lives in storage.local: keep content scripts (ours, in shared pages) away from it
// where the browser allows (chrome.storage.local defaults to every context of the extension).
chrome.storage.local.setAccessLevel?.({ accessLevel: "TRUSTED_CONTEXTS" })?.catch?.(() => undefined);

void loaded.then(restoreShared).catch((e) => console.error(`Tap: could not restore the shared tabs: ${e?.message ?? e}`));

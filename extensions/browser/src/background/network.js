// Failed network requests of shared tabs, from chrome.webRequest: requests that errored
// (onErrorOccurred) and answers with status ≥ 400 (onCompleted). The browser reports these,
// so a page cannot forge or hide them. Listeners are added per shared tab (a filter on its
// tabId) rather than for every tab of the browser, so unshared tabs never wake the worker.
import { L, cut, state } from "./state.js";
import { pushError } from "./pushes.js";

/** tabId → {entries (oldest first), dropped, listeners}. */
const logs = new Map();

function record(tabId, d, extra) {
  const log = logs.get(tabId);
  const s = state.shared.get(tabId);
  // Only while the tab shows the origin it was shared on: another site's traffic is not shared.
  if (!log || !s || s.currentOrigin !== s.origin) return;
  const entry = { time: Math.round(d.timeStamp), method: d.method, url: cut(d.url, L.MAX_URL_CHARS), type: d.type, ...extra };
  log.entries.push(entry);
  if (log.entries.length > L.MAX_FAILED_REQUESTS_PER_TAB) {
    log.entries.shift();
    log.dropped++;
  }
  const why = entry.status !== undefined ? `HTTP ${entry.status}` : entry.error;
  pushError(tabId, "request", `${entry.method} ${entry.url} failed: ${why}`, {
    url: entry.url, method: entry.method, status: entry.status, error: entry.error, type: entry.type,
  });
}

/** Starts watching a tab's requests (on share, and for each shared tab at worker start). */
export function watchRequests(tabId) {
  if (logs.has(tabId)) return;
  const filter = { urls: ["<all_urls>"], tabId };
  const onError = (d) => record(tabId, d, { error: cut(d.error, L.MAX_NET_ERROR_CHARS) });
  const onDone = (d) => { if (d.statusCode >= 400) record(tabId, d, { status: d.statusCode }); };
  chrome.webRequest.onErrorOccurred.addListener(onError, filter);
  chrome.webRequest.onCompleted.addListener(onDone, filter);
  logs.set(tabId, { entries: [], dropped: 0, onError, onDone });
}

export function unwatchRequests(tabId) {
  const log = logs.get(tabId);
  if (!log) return;
  chrome.webRequest.onErrorOccurred.removeListener(log.onError);
  chrome.webRequest.onCompleted.removeListener(log.onDone);
  logs.delete(tabId);
}

/** browser_failed_requests: newest last, at most `limit`, from `since` (ms) on. */
export function failedRequests(tabId, since, limit) {
  const log = logs.get(tabId);
  if (!log) return { requests: [], dropped: 0 };
  const all = log.entries.filter((e) => e.time >= since);
  const requests = all.slice(-limit);
  return { requests, truncated: requests.length < all.length, dropped: log.dropped };
}

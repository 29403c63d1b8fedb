// Calls into a shared tab: injects the page scripts (limits first, then the page files of
// each world, all idempotent) and runs `__tapPage[method]` (ISOLATED world, invisible to
// the page) or `__tapMain[method]` (MAIN world, the page's own: only page data, never
// authority). Every call first checks that the tab is still on the origin it was shared on.
import { TapError } from "../../vendor/tap-sdk/browser.js";
import { pageOrigin, state } from "./state.js";

/**
 * The page scripts, in injection order per world (the order the page files' headers name:
 * each leaves its part for the last one, which defines the API).
 */
export const PAGE_FILES = {
  ISOLATED: ["src/limits.js", "src/page/dom.js", "src/page/console-ring.js", "src/page/inspector.js", "src/page/isolated.js"],
  MAIN: ["src/limits.js", "src/page/values.js", "src/page/react.js", "src/page/main.js"],
};

export const LEFT_ORIGIN = "the tab left the origin it was shared on: share it again";

/** The tab, if it is shared and still on its shared origin; else FORBIDDEN / NOT_FOUND. */
export async function sharedTab(tabId) {
  const s = state.shared.get(tabId);
  if (!s) throw new TapError("NOT_FOUND", "This tab is no longer shared");
  let tab;
  try {
    tab = await chrome.tabs.get(tabId);
  } catch {
    throw new TapError("NOT_FOUND", "The tab was closed");
  }
  // A tab mid-navigation reports the URL it is going to in pendingUrl: either must be the shared origin.
  if (pageOrigin(tab.url) !== s.origin || (tab.pendingUrl && pageOrigin(tab.pendingUrl) !== s.origin)) {
    throw new TapError("FORBIDDEN", LEFT_ORIGIN);
  }
  return { tab, shared: s };
}

/**
 * The tab's top document, when it is on `origin`. Scripts are then run in that document by its
 * id, not in "the tab's top frame": a navigation between this check and the script (to another
 * origin) makes the script fail instead of running in the new page.
 */
export async function topDocument(tabId, origin) {
  const frame = await chrome.webNavigation.getFrame({ tabId, frameId: 0 }).catch(() => null);
  if (!frame?.documentId) throw new TapError("NOT_FOUND", "The tab has no page loaded");
  if (pageOrigin(frame.url) !== origin) throw new TapError("FORBIDDEN", LEFT_ORIGIN);
  return frame.documentId;
}

/** Injects both page scripts into the tab's top document (share, and each committed navigation). */
export async function inject(tabId, documentId) {
  const target = documentId ? { tabId, documentIds: [documentId] } : { tabId, frameIds: [0] };
  for (const world of ["MAIN", "ISOLATED"]) {
    await chrome.scripting.executeScript({ target, world, files: PAGE_FILES[world], injectImmediately: true });
  }
}

// Runs in the page (serialised by executeScript, so no closure): the answer always comes back
// as an envelope, since a thrown Error does not survive executeScript with its `code`.
function callInPage(global, method, args) {
  const api = globalThis[global];
  if (!api) return { missing: true };
  const fn = api[method];
  if (typeof fn !== "function") return { error: { code: "UNAVAILABLE", message: `The page script has no '${method}'` } };
  const envelope = (v) => {
    // isolated.js may answer {ok} / {error} itself; anything else is the value.
    if (v && typeof v === "object" && !Array.isArray(v)) {
      const keys = Object.keys(v);
      if (keys.length === 1 && keys[0] === "ok") return { ok: v.ok };
      if (keys.length === 1 && keys[0] === "error" && v.error && typeof v.error === "object") {
        return { error: { code: String(v.error.code ?? "INTERNAL"), message: String(v.error.message ?? "") } };
      }
    }
    return { ok: v === undefined ? null : v };
  };
  const fail = (e) => ({ error: { code: typeof e?.code === "string" ? e.code : "INTERNAL", message: String(e?.message ?? e) } });
  try {
    const r = fn.call(api, args);
    return r && typeof r.then === "function" ? Promise.resolve(r).then(envelope, fail) : envelope(r);
  } catch (e) {
    return fail(e);
  }
}

async function runIn(tabId, documentId, world, method, args) {
  const global = world === "MAIN" ? "__tapMain" : "__tapPage";
  const [res] = await chrome.scripting.executeScript({
    target: { tabId, documentIds: [documentId] }, world, func: callInPage, args: [global, method, args ?? {}],
  });
  return res?.result;
}

/**
 * `__tapPage[method](args)` (world ISOLATED) or `__tapMain[method](args)` (MAIN) in the tab;
 * resolves with the value or throws a TapError with the page's code.
 */
export async function callPage(tabId, method, args, world = "ISOLATED") {
  const { shared } = await sharedTab(tabId);
  const documentId = await topDocument(tabId, shared.origin);
  let r;
  try {
    r = await runIn(tabId, documentId, world, method, args);
    if (r?.missing) {
      await inject(tabId, documentId); // the worker restarted, or the page navigated before we injected
      r = await runIn(tabId, documentId, world, method, args);
    }
  } catch (e) {
    throw new TapError("UNAVAILABLE", `Cannot run in the tab: ${e?.message ?? e}`);
  }
  if (!r || r.missing) throw new TapError("UNAVAILABLE", "The page scripts are not loaded in this tab (reload it and share it again)");
  if (r.error) {
    const code = /^[A-Z][A-Z0-9_]*$/.test(r.error.code) ? r.error.code : "INTERNAL";
    throw new TapError(code, r.error.message);
  }
  return r.ok;
}

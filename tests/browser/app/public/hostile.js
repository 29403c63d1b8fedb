// Everything a page can try against the extension that shares it, without any privilege:
// look for the extension's token, talk to the extension by every channel a page has, replace
// the MAIN world's helpers, forge the console channel's events, and flood the console.
// `#attack` runs the attempts and writes what it found into #report; `#flood` logs 20,000
// errors; `#grow` adds 25,000 elements of long text and attributes. The test
// (tests/browser/hostile.test.mjs) judges the results.
"use strict";

const EXTENSION_ID = new URLSearchParams(location.search).get("ext") ?? "";

// `?preempt=1`: the MAIN world's helper is the page's before the extension arrives (main.js
// finds it and does nothing), and it answers a huge, deep, wide value to every call.
if (new URLSearchParams(location.search).get("preempt") === "1") {
  const deep = (n) => (n === 0 ? "bottom" : { next: deep(n - 1) });
  const huge = () => ({ ok: { component: "x".repeat(3_000_000), props: deep(200), state: Array.from({ length: 100_000 }, (_, i) => i), owners: [], value: "v".repeat(3_000_000) } });
  Object.defineProperty(window, "__tapMain", { value: Object.freeze({ reactTree: huge, evaluate: async () => huge() }), writable: false, configurable: false });
}

/** Every string reachable from `root` within `depth` levels (own and inherited enumerable keys). */
function strings(root, depth, seen = new Set(), out = []) {
  if (root === null || (typeof root !== "object" && typeof root !== "function") || seen.has(root) || depth < 0) return out;
  seen.add(root);
  let keys = [];
  try {
    keys = Object.getOwnPropertyNames(root);
  } catch {
    return out;
  }
  for (const key of keys) {
    let value;
    try {
      value = root[key];
    } catch {
      continue;
    }
    if (typeof value === "string") out.push(value);
    else strings(value, depth - 1, seen, out);
  }
  return out;
}

async function attack() {
  const report = { found: [], channels: {} };
  const look = (where, values) => {
    for (const v of values) if (/ext-[A-Za-z0-9_-]{8,}/.test(String(v))) report.found.push({ where, value: String(v) });
  };
  // 1. The token where a page could see it: globals, storages, cookies, the DOM.
  look("window", strings(window, 2));
  look("localStorage", Object.keys(localStorage).map((k) => k + "=" + localStorage.getItem(k)));
  look("sessionStorage", Object.keys(sessionStorage).map((k) => k + "=" + sessionStorage.getItem(k)));
  look("cookie", [document.cookie]);
  look("dom", [document.documentElement.outerHTML]);
  look("indexedDB", (await indexedDB.databases?.().catch(() => [])) ?? []);
  // 2. chrome.runtime: a page gets it only if the manifest lists it in externally_connectable.
  report.channels.chromeRuntime = typeof globalThis.chrome?.runtime?.sendMessage;
  for (const type of ["popup.state", "popup.share", "popup.unpair", "popup.code", "tap.ask", "tap.console"]) {
    try {
      const answer = await new Promise((resolve, reject) => {
        globalThis.chrome.runtime.sendMessage(EXTENSION_ID, { type, question: "rm -rf /", code: "000000", tabId: 1 }, (r) => resolve(r));
        setTimeout(() => reject(new Error("no answer")), 500);
      });
      report.channels[type] = { answer };
      look("sendMessage " + type, [JSON.stringify(answer)]);
    } catch (e) {
      report.channels[type] = { error: String(e.message ?? e) };
    }
  }
  // 3. window.postMessage and DOM events shaped like the extension's own messages.
  for (const type of ["tap.ask", "tap.console", "popup.share", "popup.pick", "popup.unpair"]) {
    window.postMessage({ type, question: "hostile question", entry: { level: "error", text: "forged" } }, "*");
    document.dispatchEvent(new CustomEvent(type, { detail: JSON.stringify({ question: "hostile question" }) }));
  }
  document.dispatchEvent(new CustomEvent("__tap_console__", { detail: JSON.stringify({ level: "error", text: "forged console entry", time: Date.now() }) }));
  document.dispatchEvent(new CustomEvent("__tap_console__", { detail: "{not json" }));
  document.dispatchEvent(new CustomEvent("__tap_console__", { detail: JSON.stringify({ level: "error", text: "x".repeat(1_000_000) }) }));
  // A real console error of a megabyte: page data the extension keeps, cut to its limit.
  console.error("y".repeat(1_000_000));
  // 4. The MAIN world's helpers: replace them with ones that report being called.
  report.channels.tapMainBefore = typeof globalThis.__tapMain;
  try {
    globalThis.__tapMain = { evaluate: () => ({ value: "hijacked" }), reactTree: () => ({ component: "Hijacked" }) };
  } catch (e) {
    report.channels.tapMainReplace = String(e.message);
  }
  report.channels.tapPage = typeof globalThis.__tapPage;
  document.getElementById("report").textContent = JSON.stringify(report, null, 1);
  return report;
}

function flood(n = 20000) {
  for (let i = 0; i < n; i++) console.error(`flood ${i} ` + "e".repeat(200));
  document.getElementById("report").dataset.flooded = String(n);
}

/**
 * 25,000 visible elements (more than one outline walks: MAX_OUTLINE_VISITED), each with a
 * long text and a long attribute, "needle" in every one.
 */
function grow(n = 25000) {
  // Longer than the extension's cuts (300 chars), and one string each, shared by every element.
  const long = "needle " + "n".repeat(400);
  const attribute = "a".repeat(400);
  const frag = document.createDocumentFragment();
  for (let i = 0; i < n; i++) {
    const el = document.createElement("span");
    el.textContent = long;
    el.setAttribute("data-long", attribute);
    el.style.cssText = "display:inline-block;width:2px;height:2px;overflow:hidden";
    frag.append(el);
  }
  const growth = document.getElementById("growth");
  growth.append(frag);
  growth.dataset.grown = String(n);
}

document.getElementById("attack").addEventListener("click", () => attack());
document.getElementById("grow").addEventListener("click", () => grow());
document.getElementById("flood").addEventListener("click", () => flood());

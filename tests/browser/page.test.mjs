// The page scripts (extensions/browser/src/page/isolated.js and main.js) in real headless
// Chromium, without the extension: what each tool reads from a real page, picking with the
// real mouse and keyboard, the console ring under a flood, a hostile page, and the React
// component behind an element in react-dom's development and production builds.
//
// Worlds as the extension has them: main.js (after src/limits.js) runs in the page's MAIN
// world, with addInitScript (like an injection at navigation commit, before the page's
// scripts) or addScriptTag (like sharing a loaded tab); isolated.js (after src/limits.js) runs
// in a real isolated world made with CDP's Page.createIsolatedWorld, which is what a content
// script's world is: the same DOM, separate globals the page cannot see. The one part of the
// extension outside this test's reach is `chrome.runtime.sendMessage` (it needs the service
// worker): the isolated world gets a stub that records the messages and answers {ok: true}
// as the worker does. tests/browser/*.test.mjs with the built extension cover that seam.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import vm from "node:vm";
import { chromium } from "playwright-core";
import { chromiumPath } from "../js-support/browser.mjs";
import { waitFor } from "../js-support/wait.mjs";
import { HOST_RULE, SCRIPTS, reactInstalled, reactVersion, serveFixtures } from "./page-fixtures.mjs";

// The limits the scripts run with, read from the file they read them from.
const L = (() => {
  const ctx = vm.createContext({});
  vm.runInContext(readFileSync(SCRIPTS.main[0], "utf8"), ctx);
  return ctx.__tapLimits;
})();
const ISOLATED_SOURCES = SCRIPTS.isolated.map((f) => readFileSync(f, "utf8"));

let browser;
let server;
before(async () => {
  server = await serveFixtures();
  browser = await chromium.launch({
    executablePath: chromiumPath(),
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", HOST_RULE],
  });
});
after(async () => {
  await browser?.close();
  await server?.close();
});

async function injectMain(page) {
  for (const path of SCRIPTS.main) await page.addScriptTag({ path });
}

/**
 * A page with main.js in its MAIN world (`mainFirst`: before the page's scripts) and
 * isolated.js in an isolated world. `call(method, args)` runs `__tapPage[method]`;
 * `sent()` lists what isolated.js passed to chrome.runtime.sendMessage.
 */
async function open(url, { mainFirst = false } = {}) {
  const page = await browser.newPage();
  page.errors = [];
  page.on("pageerror", (e) => page.errors.push(e.message));
  if (mainFirst) for (const path of SCRIPTS.main) await page.addInitScript({ path });
  await page.goto(`${server.url}${url}`);
  if (!mainFirst) await injectMain(page);
  const cdp = await page.context().newCDPSession(page);
  const { frameTree } = await cdp.send("Page.getFrameTree");
  const { executionContextId } = await cdp.send("Page.createIsolatedWorld", { frameId: frameTree.frame.id, worldName: "tap-page-test" });
  const run = async (expression) => {
    const r = await cdp.send("Runtime.evaluate", { expression, contextId: executionContextId, returnByValue: true, awaitPromise: true });
    if (r.exceptionDetails) throw new Error(`isolated world: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`);
    return r.result.value;
  };
  await run(`globalThis.__sent = []; globalThis.chrome = { runtime: { sendMessage(m) {
    globalThis.__sent.push(JSON.parse(JSON.stringify(m))); return Promise.resolve({ ok: true }); } } };`);
  const injectIsolated = async () => {
    for (const source of ISOLATED_SOURCES) await run(source);
  };
  await injectIsolated();
  const call = (method, args = {}) => run(`globalThis.__tapPage.${method}(${JSON.stringify(args)})`);
  const ok = async (method, args) => {
    const r = await call(method, args);
    assert.ok(r && "ok" in r, `${method}: ${JSON.stringify(r)}`);
    return r.ok;
  };
  const fails = async (method, args, code) => {
    const r = await call(method, args);
    assert.equal(r?.error?.code, code, `${method}(${JSON.stringify(args)}): ${JSON.stringify(r)}`);
    return r.error;
  };
  const inMain = (method, args = {}) => page.evaluate(([m, a]) => globalThis.__tapMain?.[m]?.(a), [method, args]);
  return { page, cdp, run, call, ok, fails, inMain, injectIsolated, sent: () => run("globalThis.__sent") };
}

/** The inspector's overlay as CDP sees it (DOM.getDocument pierces closed shadow roots, which no page script can). */
async function overlay(cdp) {
  const { root } = await cdp.send("DOM.getDocument", { depth: -1, pierce: true });
  const find = (n, pred) => {
    if (pred(n)) return n;
    for (const c of [...(n.children ?? []), ...(n.shadowRoots ?? [])]) {
      const f = find(c, pred);
      if (f) return f;
    }
    return null;
  };
  const attr = (n, name) => {
    const a = n?.attributes ?? [];
    const i = a.indexOf(name);
    return i >= 0 ? a[i + 1] : undefined;
  };
  const host = find(root, (n) => attr(n, "data-tap-inspector") !== undefined);
  if (!host) return null;
  const text = (cls) => {
    const el = find(host, (n) => attr(n, "class") === cls);
    return el && find(el, (n) => n.nodeType === 3)?.nodeValue;
  };
  return { state: attr(host, "data-tap-state"), shadowMode: host.shadowRoots?.[0]?.shadowRootType, label: text("label"), status: text("status") };
}

async function centerOf(page, selector) {
  const b = await page.locator(selector).boundingBox();
  return { x: b.x + b.width / 2, y: b.y + b.height / 2 };
}

describe("a plain page", () => {
  let p;
  before(async () => {
    p = await open("/plain.html", { mainFirst: true });
  });
  after(() => p.page.close());

  test("outline: roles, names and own text of visible elements, hidden ones left out, bounded", async () => {
    const o = await p.ok("outline");
    assert.equal(o.title, "Plain fixture");
    assert.match(o.url, /^http:\/\/page\.test:\d+\/plain\.html$/);
    assert.equal(await p.page.evaluate(() => isSecureContext), false, "an http page like most shared tabs");
    const by = (sel) => o.nodes.find((n) => n.selector === sel);
    assert.deepEqual(by("#save"), { depth: by("#save").depth, tag: "button", selector: "#save", role: "button", name: "Save changes" });
    assert.equal(by("#name").role, "textbox");
    assert.equal(by("#name").name, "Name", "named by its <label for>");
    assert.equal(by("#name").text, "Ada");
    assert.equal(by("#pw").text, "••••", "a password is never read");
    const link = o.nodes.find((n) => n.role === "link");
    assert.equal(link.name, "Docs");
    assert.equal(o.nodes.find((n) => n.role === "navigation").name, "Main");
    assert.equal(o.nodes.find((n) => n.role === "heading").name, "Settings");
    assert.ok(o.nodes.some((n) => n.role === "paragraph" && n.text === "Change your here."), "own text only");
    assert.ok(!o.nodes.some((n) => n.name === "Hidden button" || n.text === "Invisible text"), "display:none and visibility:hidden are left out");
    assert.equal(o.nodes.length, L.OUTLINE_DEFAULT_NODES, "400 list items cut at the default");
    assert.equal(o.truncated, true);
    const counts = await p.page.evaluate((sels) => sels.map((s) => document.querySelectorAll(s).length), o.nodes.map((n) => n.selector));
    assert.ok(counts.every((c) => c === 1), "each selector matches exactly one element");
    const small = await p.ok("outline", { selector: "#items", maxNodes: 5 });
    assert.deepEqual(small.nodes.map((n) => n.text), [undefined, "Item 0", "Item 1", "Item 2", "Item 3"]);
    const whole = await p.ok("outline", { maxNodes: 10 * L.OUTLINE_MAX_NODES });
    assert.ok(whole.nodes.length > 400 && whole.nodes.length < L.OUTLINE_MAX_NODES && !whole.truncated, "a maxNodes over the cap is taken as the cap");
    const shallow = await p.ok("outline", { maxDepth: 2 });
    assert.ok(shallow.nodes.every((n) => n.depth < 2) && shallow.truncated);
    await p.fails("outline", { maxNodes: -1 }, "INVALID_JSON");
    await p.fails("outline", { selector: "#nope" }, "NOT_FOUND");
  });

  test("query by selector and by text; bad arguments refused", async () => {
    const q = await p.ok("query", { selector: "li", limit: 3 });
    assert.equal(q.total, 400);
    assert.deepEqual(q.matches.map((m) => m.text), ["Item 0", "Item 1", "Item 2"]);
    assert.equal((await p.ok("query", { selector: "li", limit: 1000 })).matches.length, L.QUERY_MAX_LIMIT);
    const t = await p.ok("query", { text: "save CHANGES" });
    assert.equal(t.total, 1);
    const [m] = t.matches;
    assert.equal(m.selector, "#save");
    assert.equal(m.tag, "button");
    assert.equal(m.attributes["data-testid"], "save-button");
    assert.ok(m.box.width > 0 && m.box.height > 0);
    assert.equal((await p.ok("query", { text: "Ada" })).matches[0].selector, "#name", "an input's value");
    assert.equal((await p.ok("query", { text: "secret" })).total, 0, "never a password");
    await p.fails("query", { selector: "li", text: "x" }, "INVALID_JSON");
    await p.fails("query", {}, "INVALID_JSON");
    await p.fails("query", { selector: "li[" }, "INVALID_JSON");
    await p.fails("query", { selector: "#nope" }, "NOT_FOUND");
  });

  test("styles: the default set, or the properties asked", async () => {
    const s = await p.ok("styles", { selector: "#save" });
    assert.equal(s.styles.color, "rgb(200, 0, 0)");
    assert.equal(s.styles.display, "inline-block");
    assert.equal(s.styles["padding"], "4px 8px");
    assert.ok(Object.keys(s.styles).length >= 30);
    assert.deepEqual(Object.keys((await p.ok("styles", { selector: "#save", properties: ["color"] })).styles), ["color"]);
    await p.fails("styles", { selector: "#save", properties: Array(L.MAX_STYLE_PROPERTIES + 1).fill("color") }, "INVALID_JSON");
  });

  test("click and type reach the page", async () => {
    assert.deepEqual(await p.ok("click", { selector: "#save" }), { clicked: "#save" });
    assert.equal(await p.page.evaluate(() => window.saveClicks), 1);
    assert.deepEqual(await p.ok("type", { selector: "#name", text: "Grace Hopper" }), { typed: 12 });
    assert.equal(await p.page.inputValue("#name"), "Grace Hopper");
    assert.deepEqual(await p.ok("type", { selector: "#q", text: "tap gateway", submit: true }), { typed: 11 });
    assert.equal(await p.page.evaluate(() => window.submitted), "tap gateway", "submit: Enter submits the field's form");
    assert.deepEqual(await p.ok("type", { selector: "#notes", text: "new note ✓" }), { typed: 10 });
    assert.equal(await p.page.textContent("#notes"), "new note ✓", "a contenteditable's content replaced");
    await p.fails("click", { selector: ".gone button" }, "NOT_VISIBLE");
    await p.fails("type", { selector: "#save", text: "x" }, "INVALID_JSON");
    await p.fails("type", { selector: "#name", text: "x".repeat(L.MAX_TYPE_TEXT_CHARS + 1) }, "INVALID_JSON");
    await p.page.evaluate(() => { window.saveClicks = 0; window.pageClicks = 0; window.pageKeys = []; });
  });

  test("picking with the mouse: hover shows the selector, the click picks and never reaches the page, then Ask the agent", async () => {
    await p.fails("picked", {}, "NOT_FOUND");
    assert.deepEqual(await p.ok("pickStart"), { picking: true });
    const at = await centerOf(p.page, "#save");
    await p.page.mouse.move(at.x - 5, at.y);
    await p.page.mouse.move(at.x, at.y);
    const o = await waitFor(async () => (await overlay(p.cdp))?.label?.startsWith("#save") && overlay(p.cdp), "the hover label");
    assert.equal(o.state, "picking");
    assert.equal(o.shadowMode, "closed");
    await p.page.mouse.click(at.x, at.y);
    const picked = await p.ok("picked");
    assert.equal(picked.selector, "#save");
    assert.equal(picked.text, "Save changes");
    assert.ok(Math.abs(Date.now() - picked.pickedAt) < 60_000);
    assert.equal(await p.page.evaluate(() => window.saveClicks), 0, "the button's onclick did not run");
    assert.equal(await p.page.evaluate(() => window.pageClicks), 0, "the page's document listener did not see a click");
    assert.equal((await overlay(p.cdp)).state, "asking");
    // The question field has focus: the user types and presses Enter.
    await p.page.keyboard.type("Why is this red?");
    await p.page.keyboard.press("Enter");
    const ask = await waitFor(async () => (await p.sent()).find((m) => m.type === "tap.ask"), "the tap.ask message");
    assert.equal(ask.question, "Why is this red?");
    assert.equal(ask.element.selector, "#save");
    assert.equal(ask.element.tag, "button");
    assert.equal((await waitFor(async () => (await overlay(p.cdp)).status === "Sent to the agent" && overlay(p.cdp), "Sent")).state, "asking");
    assert.deepEqual(await p.page.evaluate(() => window.pageKeys), [], "keys typed into the question did not reach the page's listeners");
    await p.page.keyboard.press("Escape");
    await waitFor(async () => (await overlay(p.cdp)).state === "idle", "the Ask box closed");
  });

  test("Escape cancels picking: nothing is picked and the page does not see the key", async () => {
    const earlier = await p.call("picked");
    await p.page.evaluate(() => { window.pageClicks = 0; window.pageKeys = []; });
    await p.ok("pickStart");
    const at = await centerOf(p.page, "h1");
    await p.page.mouse.move(at.x, at.y);
    await waitFor(async () => (await overlay(p.cdp))?.label?.includes("h1"), "the hover label on h1");
    await p.page.keyboard.press("Escape");
    assert.equal((await overlay(p.cdp)).state, "idle");
    await p.page.mouse.click(at.x, at.y);
    assert.deepEqual(await p.call("picked"), earlier, "nothing new was picked");
    assert.deepEqual(await p.page.evaluate(() => window.pageKeys), []);
    assert.equal(await p.page.evaluate(() => window.pageClicks), 1, "after Escape the page gets its clicks again");
    assert.deepEqual(await p.ok("pickStop"), { picking: false });
  });

  test("console: levels, substitutions, an uncaught error, an unhandled rejection, entries from before isolated.js listened", async () => {
    const start = Date.now();
    await p.page.evaluate(() => {
      console.log("plain %s and %d", "text", 42, { a: 1 });
      console.info("info");
      console.error(new Error("logged error"));
      setTimeout(() => { throw new Error("kaboom"); });
      Promise.reject(new Error("nope"));
    });
    const errors = await waitFor(async () => {
      const r = await p.ok("consoleEntries", { since: start, levels: ["error"] });
      return r.entries.length >= 3 && r.entries;
    }, "three errors");
    assert.match(errors[0].text, /^Error: logged error/);
    assert.match(errors.find((e) => e.text.startsWith("Uncaught")).text, /Uncaught Error: kaboom/);
    assert.match(errors.find((e) => e.text.startsWith("Unhandled")).text, /Unhandled rejection: Error: nope/);
    assert.ok(errors.every((e) => typeof e.time === "number" && e.time >= start));
    const all = await p.ok("consoleEntries", { since: new Date(start).toISOString() });
    const log = all.entries.find((e) => e.level === "log");
    assert.equal(log.text, 'plain text and 42 {"a":1}');
    assert.match(log.source, /plain\.html|__playwright|eval|:\d+:\d+/);
    assert.ok(all.entries.some((e) => e.level === "info"));
    const early = await p.ok("consoleEntries", { levels: ["warn"] });
    assert.equal(early.entries[0].text, "early warning from the page");
    const debug = (await p.ok("consoleEntries", { levels: ["debug"] })).entries;
    assert.equal(debug.length, L.MAX_EARLY_CONSOLE_ENTRIES - 1, "main.js kept the last MAX_EARLY_CONSOLE_ENTRIES of the 101 logged before isolated.js");
    assert.equal(debug.at(-1).text, "early debug 99");
    const forwarded = (await p.sent()).filter((m) => m.type === "tap.console").map((m) => m.entry.text);
    assert.ok(forwarded.some((t) => t.includes("kaboom")) && forwarded.some((t) => t.includes("nope")), JSON.stringify(forwarded));
    assert.ok(!forwarded.some((t) => t.startsWith("plain")), "only errors are forwarded");
    await p.fails("consoleEntries", { since: "yesterday-ish" }, "INVALID_JSON");
    await p.fails("consoleEntries", { levels: ["fatal"] }, "INVALID_JSON");
  });

  test("a flood of 10,000 console.error: the ring stays bounded, forwards are rate-limited, text is cut", async () => {
    const before = (await p.sent()).filter((m) => m.type === "tap.console").length;
    const t0 = Date.now();
    await p.page.evaluate(() => {
      for (let i = 0; i < 10000; i++) console.error("flood", i);
      console.error("y".repeat(100000));
    });
    const elapsed = Date.now() - t0;
    const r = await p.ok("consoleEntries", { limit: L.LOG_MAX_LIMIT + 1000 });
    assert.equal(r.entries.length, Math.min(L.MAX_CONSOLE_ENTRIES, L.LOG_MAX_LIMIT));
    assert.ok(r.dropped >= 10001 - L.MAX_CONSOLE_ENTRIES, `dropped ${r.dropped}`);
    const last = r.entries.at(-1).text;
    assert.ok(last.startsWith("yyy") && last.length < L.MAX_CONSOLE_TEXT_CHARS + 40, `cut to ${last.length}`);
    assert.equal(r.entries.at(-2).text, "flood 9999");
    const forwarded = (await p.sent()).filter((m) => m.type === "tap.console").length - before;
    const windows = Math.ceil(elapsed / 1000) + 1;
    assert.ok(forwarded >= 1 && forwarded <= L.MAX_CONSOLE_FORWARDS_PER_SECOND * windows, `forwarded ${forwarded} in ${elapsed} ms`);
    assert.ok(r.forwardsDropped >= 10001 - forwarded);
  });

  test("a hostile page: cannot see __tapPage or the overlay's inside, cannot fake a pick or an Escape, forged console events are only console entries", async () => {
    const seen = await p.page.evaluate(() => ({
      tapPage: typeof globalThis.__tapPage,
      chromeRuntimeSend: typeof globalThis.chrome?.runtime?.sendMessage,
      shadow: document.querySelector("[data-tap-inspector]")?.shadowRoot ?? null,
    }));
    assert.deepEqual(seen, { tapPage: "undefined", chromeRuntimeSend: "undefined", shadow: null });
    const earlier = await p.call("picked");
    await p.ok("pickStart");
    const at = await centerOf(p.page, "h1");
    await p.page.evaluate(({ x, y }) => {
      const host = document.querySelector("[data-tap-inspector]");
      const h1 = document.querySelector("h1");
      for (const target of [host, h1, document.elementFromPoint(x, y)]) {
        for (const type of ["pointerdown", "mousedown", "mouseup", "click"]) {
          target.dispatchEvent(new MouseEvent(type, { bubbles: true, composed: true, cancelable: true, clientX: x, clientY: y, button: 0 }));
        }
      }
      window.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
      document.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    }, at);
    assert.deepEqual(await p.call("picked"), earlier, "the forged clicks picked nothing");
    assert.equal((await overlay(p.cdp)).state, "picking", "the forged Escape did not cancel");
    await p.ok("pickStop");
    const t0 = Date.now();
    await p.page.evaluate(() => {
      const fire = (detail) => document.dispatchEvent(new CustomEvent("__tap_console__", { detail }));
      fire(JSON.stringify({ level: "error", text: "forged", time: 0, source: "x".repeat(10000) }));
      fire(JSON.stringify({ level: "root", text: { toString: 1 } }));
      fire("{not json");
      fire("z".repeat(10_000_000));
      document.dispatchEvent(new CustomEvent("__tap_console__", { detail: { level: "error", text: "an object detail" } }));
    });
    const r = await p.ok("consoleEntries", { since: t0 });
    assert.deepEqual(r.entries.map((e) => [e.level, e.text.slice(0, 6)]), [["error", "forged"], ["log", '{"toSt']]);
    assert.ok(r.entries[0].time >= t0, "the time is the isolated world's, not the page's");
    assert.ok(r.entries[0].source.length < L.MAX_CONSOLE_SOURCE_CHARS + 40);
  });

  test("idempotent: injecting both scripts again changes nothing; unshare removes everything and a new share starts afresh", async () => {
    await p.run("globalThis.__first = globalThis.__tapPage");
    await p.injectIsolated();
    assert.equal(await p.run("globalThis.__first === globalThis.__tapPage"), true);
    await injectMain(p.page);
    const t0 = Date.now();
    await p.page.evaluate(() => console.error("once"));
    assert.equal((await p.ok("consoleEntries", { since: t0 })).entries.length, 1, "console wrapped once");
    assert.deepEqual(await p.page.evaluate(() => [Object.keys(window).includes("__tapMain"), Object.isFrozen(window.__tapMain)]), [false, true]);
    await p.ok("pickStart");
    assert.deepEqual(await p.ok("unshare"), { unshared: true });
    assert.equal(await p.run("typeof globalThis.__tapPage"), "undefined");
    assert.equal(await overlay(p.cdp), null, "the overlay is gone");
    await p.run(ISOLATED_SOURCES.at(-1));
    assert.equal(await p.run("typeof globalThis.__tapPage"), "undefined", "isolated.js without the files before it defines nothing");
    await p.injectIsolated();
    await p.fails("picked", {}, "NOT_FOUND");
    assert.equal((await p.ok("consoleEntries")).entries.length, 0);
  });

  test("evaluate in the MAIN world: JSON-safe, bounded, errors with codes; no React here", async () => {
    assert.deepEqual(await p.inMain("evaluate", { expression: "1 + 1" }), { ok: { value: 2 } });
    assert.deepEqual(await p.inMain("evaluate", { expression: "{a: 1}" }), { ok: { value: { a: 1 } } });
    assert.deepEqual(await p.inMain("evaluate", { expression: "Promise.resolve(document.title)" }), { ok: { value: "Plain fixture" } });
    assert.deepEqual(await p.inMain("evaluate", { expression: "let x = 2; x * 3" }), { ok: { value: 6 } });
    const big = (await p.inMain("evaluate", { expression: "const o = {s: 'q'.repeat(1e6), list: Array(1e5).fill(1)}; o.o = o; o" })).ok.value;
    assert.ok(big.s.length < L.MAX_VALUE_STRING_CHARS + 40 && big.list.length === L.MAX_VALUE_ENTRIES + 1 && big.o === "[Circular]");
    assert.equal((await p.inMain("evaluate", { expression: "throw new TypeError('bad')" })).error.code, "EVAL_ERROR");
    assert.equal((await p.inMain("evaluate", { expression: "Promise.reject(new Error('no'))" })).error.code, "EVAL_ERROR");
    assert.equal((await p.inMain("evaluate", { expression: "" })).error.code, "INVALID_JSON");
    assert.equal((await p.inMain("reactTree", {})).error.code, "NOT_REACT");
    assert.equal((await p.inMain("reactTree", { selector: "#save" })).error.code, "NOT_REACT");
    assert.deepEqual(p.page.errors.filter((e) => !/kaboom|nope/.test(e)), []);
  });

  test("evaluate on a page whose CSP forbids eval: EVAL_BLOCKED", async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${server.url}/csp.html`);
      await injectMain(page);
      // Called from a timer, not inside page.evaluate: CDP's own evaluations may eval whatever
      // the CSP says (Runtime.evaluate's allowUnsafeEvalBlockedByCSP), an extension's may not.
      await page.evaluate(() => setTimeout(async () => { window.__result = await globalThis.__tapMain.evaluate({ expression: "1 + 1" }); }));
      const r = await waitFor(() => page.evaluate(() => window.__result), "evaluate's answer");
      assert.equal(r.error?.code, "EVAL_BLOCKED", JSON.stringify(r));
    } finally {
      await page.close();
    }
  });

  test("evaluate: a promise that never settles ends at EVALUATE_TIMEOUT_MS", async () => {
    // A page may plant `__tapLimits` before main.js (limits.js only fills it when absent): here
    // the test does, with a short timeout, to see the named limit end the wait.
    const page = await browser.newPage();
    try {
      await page.goto(`${server.url}/plain.html`);
      await page.evaluate((limits) => { globalThis.__tapLimits = Object.freeze(limits); }, { ...L, EVALUATE_TIMEOUT_MS: 300 });
      await injectMain(page);
      const t0 = Date.now();
      const r = await page.evaluate(() => globalThis.__tapMain.evaluate({ expression: "new Promise(() => {})" }));
      assert.equal(r.error.code, "TIMEOUT");
      assert.ok(Date.now() - t0 < 5000);
    } finally {
      await page.close();
    }
  });
});

describe("a hostile page: every answer bounded", () => {
  let p;
  before(async () => {
    p = await open("/huge.html");
  });
  after(() => p.page.close());
  const small = (r) => assert.ok(JSON.stringify(r).length < L.MAX_RESULT_BYTES, `${JSON.stringify(r).length} bytes`);

  test("outline and query stop at their scan limits; texts, attributes, selectors and styles are cut", async () => {
    const o = await p.ok("outline");
    assert.ok(o.nodes.length <= L.OUTLINE_DEFAULT_NODES && o.truncated);
    small(o);
    const rows = await p.ok("outline", { selector: "#wide", maxNodes: L.OUTLINE_MAX_NODES });
    assert.equal(rows.nodes.length, L.OUTLINE_MAX_NODES);
    assert.ok(rows.truncated);
    small(rows);
    const [attrs] = (await p.ok("query", { selector: "#attrs" })).matches;
    assert.equal(Object.keys(attrs.attributes).length, L.MAX_ATTRIBUTES + 1);
    assert.equal(attrs.attributes["…"], `${102 - L.MAX_ATTRIBUTES} more attributes`);
    assert.ok(Object.values(attrs.attributes).every((v) => v.length < L.MAX_ATTRIBUTE_VALUE_CHARS + 30));
    assert.ok(attrs.text.length < L.MAX_NODE_TEXT_CHARS + 30);
    const font = (await p.ok("styles", { selector: "#attrs", properties: ["font-family"] })).styles["font-family"];
    assert.ok(font.startsWith("Font0") && font.length < L.MAX_STYLE_VALUE_CHARS + 30, font.length);
    const [deepest] = (await p.ok("query", { selector: ".deepest" })).matches;
    assert.equal(deepest.text, "deepest text");
    assert.ok(deepest.selector.startsWith("…") && deepest.selector.length < L.MAX_SELECTOR_CHARS + 30, deepest.selector.length);
    const found = await p.ok("query", { text: "row 1" });
    assert.equal(found.matches.length, L.QUERY_DEFAULT_LIMIT);
    small(found);
    assert.equal((await p.ok("query", { text: "needle-after-the-limit" })).total, 0, "past MAX_QUERY_VISITED nodes a text query does not look");
    assert.equal((await p.ok("query", { selector: "b" })).total, 1, "a selector still finds it");
  });

  test("a forged fiber whose parent is itself: the walk ends, no React", async () => {
    const r = await p.inMain("reactTree", { selector: "#forged" });
    assert.equal(r.error.code, "NOT_REACT");
  });
});

// React: development and production builds; main.js before React (our hook on Window.prototype
// sees the roots commit) and after (the DOM's fiber expandos only).
const reactCases = [
  { env: "development", mainFirst: false },
  { env: "production", mainFirst: false },
  { env: "development", mainFirst: true },
];
const skipReact = reactInstalled() ? false : "react and react-dom are not installed in tests/browser/node_modules (npm ci --prefix tests/browser)";

for (const { env, mainFirst } of reactCases) {
  describe(`React ${skipReact ? "" : reactVersion()} ${env} build, main.js ${mainFirst ? "before" : "after"} React`, { skip: skipReact }, () => {
    let p;
    before(async () => {
      p = await open(`/react.html?env=${env}`, { mainFirst });
      await p.page.locator("#todo-1").waitFor();
    });
    after(() => p.page.close());

    test("the picked element carries its component's name, props, state and owners", async () => {
      await p.ok("pickStart");
      const at = await centerOf(p.page, "#todo-1 .title");
      await p.page.mouse.move(at.x, at.y);
      await p.page.mouse.click(at.x, at.y);
      const picked = await p.ok("picked");
      assert.equal(picked.selector, "#todo-1 > span:nth-of-type(1)");
      const r = picked.react;
      assert.equal(r.component, "TodoItem");
      assert.equal(r.kind, "function");
      assert.deepEqual(r.props.todo, { id: 1, title: "Write tests", done: false });
      assert.equal(r.props.onToggle, "ƒ toggleTodo");
      assert.equal(r.props.icon, "<Badge>");
      assert.equal(r.props.config.cyclic.self, "[Circular]");
      assert.equal(r.props.config.deep.a.b.c, "{…}", "depth bounded");
      assert.ok(r.props.config.long.length < L.MAX_VALUE_STRING_CHARS + 40);
      assert.equal(r.props.config.many.length, L.MAX_VALUE_ENTRIES + 1);
      assert.deepEqual(r.state, [false, 10]);
      assert.deepEqual(r.owners, ["App"]);
      assert.equal(await p.page.textContent("#todo-1 .badge"), "open", "the pick's click did not reach React");
      await p.page.keyboard.type("What is this?");
      await p.page.keyboard.press("Enter");
      const ask = await waitFor(async () => (await p.sent()).find((m) => m.type === "tap.ask"), "tap.ask");
      assert.equal(ask.element.react.component, "TodoItem");
    });

    test("reactTree: state after real clicks, hooks, class state, forwardRef and memo, children, bounded", async () => {
      await p.page.click("#todo-1");
      await p.page.click("#todo-1");
      await p.page.click("#todo-1");
      assert.equal(await p.page.textContent("#todo-1 .badge"), "done");
      const t = (await p.inMain("reactTree", {})).ok; // the element picked above
      assert.equal(t.component, "TodoItem");
      assert.deepEqual(t.state, [true, 13], "the committed state, not the first render's");
      assert.deepEqual(t.hooks.map((h) => h.kind), ["state", "state", "ref", "effect", "memo"]);
      assert.equal(t.hooks[4].value, 26);
      assert.deepEqual(t.hooks[3].value, { deps: [true] });
      assert.deepEqual(t.owners.map((o) => o.name), ["App"]);
      assert.deepEqual(t.children, [{ component: "Badge", kind: "function" }]);
      assert.deepEqual((await p.ok("picked")).react.state, [true, 13], "picked() reads afresh");

      await p.page.click("#class-btn");
      const c = (await p.inMain("reactTree", { selector: "#class-btn" })).ok;
      assert.equal(c.component, "Counter");
      assert.equal(c.kind, "class");
      assert.deepEqual(c.state, { count: 4, label: "clicks" });
      assert.equal(c.hooks, undefined);
      const f = (await p.inMain("reactTree", { selector: "#fancy" })).ok;
      assert.deepEqual([f.component, f.kind, f.props.hint], ["FancyInput", "forwardRef", "type here"]);
      const m = (await p.inMain("reactTree", { selector: "#pure" })).ok;
      assert.deepEqual([m.component, m.kind], ["PureLabel", "memo"]);
      const app = (await p.inMain("reactTree", { selector: "h1" })).ok;
      assert.equal(app.component, "App");
      assert.deepEqual(app.children.map((c) => c.component), ["TodoItem", "TodoItem", "Counter", "FancyInput", "PureLabel", "Search"]);
      assert.deepEqual(app.children[0].children, [{ component: "Badge", kind: "function" }]);
      assert.equal(app.children[0].key, "1");
      assert.equal((await p.inMain("reactTree", { selector: "#nope" })).error.code, "NOT_FOUND");
      assert.equal((await p.inMain("reactTree", { selector: "[" })).error.code, "INVALID_JSON");
    });

    test("type into a controlled React input: onChange runs, the state follows", async () => {
      assert.deepEqual(await p.ok("type", { selector: "#search", text: "hello" }), { typed: 5 });
      await waitFor(async () => (await p.page.textContent("#echo")) === "hello", "React's state to echo the text");
      assert.deepEqual((await p.inMain("reactTree", { selector: "#search" })).ok.state, ["hello"]);
      await p.ok("click", { selector: "#class-btn" });
      assert.equal(await p.page.textContent("#class-btn"), "Count 5");
      assert.deepEqual(p.page.errors, []);
    });

    test("hooks, child components and owners are cut at their limits", async () => {
      const many = (await p.inMain("reactTree", { selector: "#many" })).ok;
      assert.equal(many.component, "ManyHooks");
      assert.equal(many.hooks.length, L.MAX_REACT_HOOKS);
      assert.equal(many.hooksTruncated, true);
      assert.equal(many.state.length, L.MAX_REACT_HOOKS);
      const wide = (await p.inMain("reactTree", { selector: "#wide-list" })).ok;
      assert.equal(wide.children.length, L.MAX_REACT_CHILDREN);
      const nest = (await p.inMain("reactTree", { selector: "#deepest-nest" })).ok;
      assert.equal(nest.component, "Nest");
      assert.equal(nest.owners.length, L.MAX_REACT_OWNERS);
      assert.ok(nest.owners.every((o) => o.name === "Nest"));
    });

    if (mainFirst) {
      test("our hook saw React commit: with nothing picked, reactTree answers the root's first component", async () => {
        await p.ok("unshare");
        await p.page.reload();
        await p.page.locator("#todo-1").waitFor();
        assert.equal(await p.page.evaluate(() => Object.hasOwn(window, "__REACT_DEVTOOLS_GLOBAL_HOOK__")), false, "not an own property: React DevTools can still install its hook");
        assert.equal(await p.page.evaluate(() => __REACT_DEVTOOLS_GLOBAL_HOOK__.renderers.size), 1);
        assert.equal((await p.inMain("reactTree", {})).ok.component, "App");
      });
    }
  });
}

describe("React roots found by scanning the page", { skip: skipReact }, () => {
  // main.js after React: no hook saw a commit, so with nothing picked the roots come from a
  // walk of the page's elements, which stops after MAX_REACT_ROOT_SCAN of them.
  let p;
  before(async () => {
    p = await open("/react.html?env=development", { mainFirst: false });
    await p.page.locator("#todo-1").waitFor();
  });
  after(() => p.page.close());

  test("a root past MAX_REACT_ROOT_SCAN elements is not reached; before it, it is", async () => {
    assert.equal((await p.inMain("reactTree", {})).ok.component, "App");
    await p.page.evaluate((n) => {
      const filler = document.createElement("div");
      filler.id = "filler";
      for (let i = 0; i < n; i++) filler.appendChild(document.createElement("div"));
      document.body.prepend(filler);
    }, L.MAX_REACT_ROOT_SCAN);
    const r = await p.inMain("reactTree", {});
    assert.equal(r.error?.code, "NOT_FOUND", JSON.stringify(r));
    assert.match(r.error.message, /pass a selector/);
    assert.equal((await p.inMain("reactTree", { selector: "#todo-1" })).ok.component, "TodoItem", "a selector still finds it");
    await p.page.evaluate(() => document.getElementById("filler").remove());
    assert.equal((await p.inMain("reactTree", {})).ok.component, "App");
  });
});

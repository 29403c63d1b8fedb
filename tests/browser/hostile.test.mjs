// A hostile page, shared by the user (issue 41, "Done when"): it looks for the extension's
// token everywhere a page can look, talks to the extension by every channel a page has
// (chrome.runtime with the extension's id, window.postMessage, DOM events shaped like the
// extension's own messages, the console channel's event with forged and oversized entries),
// replaces the MAIN world's helpers, floods the console with 20,000 errors, and grows to 25,000
// elements of long text. Nothing
// changes: no call, no inject, no share, no pairing; the token is nowhere in the page; the
// console tool's answers and the error pushes stay within their limits; the gateway and the
// extension's worker keep answering.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import "../../extensions/browser/src/limits.js";
import { pairAndShare, setup, statusIs, tabRow, waitFor, WAIT_MS } from "./support.mjs";

const L = globalThis.__tapLimits;
for (const name of ["LOG_MAX_LIMIT", "CONSOLE_DEFAULT_LIMIT", "MAX_CONSOLE_ENTRIES", "MAX_CONSOLE_TEXT_CHARS", "MAX_RESULT_BYTES", "MAX_ERROR_PUSHES_PER_MINUTE", "OUTLINE_MAX_NODES", "OUTLINE_MAX_DEPTH", "QUERY_MAX_LIMIT", "MAX_NODE_TEXT_CHARS", "MAX_ATTRIBUTE_VALUE_CHARS", "PAGE_TOOL_TIMEOUT_MS", "MAX_RESULT_STRING_CHARS", "MAX_RESULT_LIST_ITEMS", "MAX_RESULT_DEPTH"]) {
  assert.equal(typeof L[name], "number", `extensions/browser/src/limits.js names ${name}`);
}
let h, popup, page, tabId, target, token;

before(async () => {
  h = await setup({ sessionLabel: "browser-hostile" });
  page = await h.openTab(h.appUrl("/hostile.html", { ext: h.extensionId }));
  popup = await h.popup();
  tabId = await h.tabIdOf(page, popup);
  target = `tab-${tabId}`;
  await pairAndShare(h, popup, tabId);
  // The token, where only the extension keeps it (its storage), to look for it in the page.
  const stored = await popup.evaluate(() => chrome.storage.local.get(null));
  token = Object.values(stored).flatMap((v) => JSON.stringify(v).match(/ext-[A-Za-z0-9_-]{8,}/g) ?? [])[0];
  assert.ok(token, `a pairing token in the extension's storage: ${Object.keys(stored)}`);
});

after(async () => {
  await h?.close();
});

/** What the gateway and the extension show that a page must not be able to change. */
async function snapshot() {
  const traces = await h.gateway.tap(["traces", "list", "--session", h.session.id, "--name", "tool.call", "--json", "--limit", "1000"]);
  assert.equal(traces.code, 0, traces.stderr);
  const approvals = JSON.parse((await h.gateway.tap(["approvals", "list", "--json"])).stdout).waiting;
  await popup.reload();
  await statusIs(popup, "Paired");
  const rows = await popup.locator("#tabs li").evaluateAll((lis) => lis.map((li) => `${li.dataset.tabId}:${li.querySelector("button.share")?.textContent.trim()}`));
  return {
    toolCalls: JSON.parse(traces.stdout).length,
    approvals: approvals.length,
    pairings: (await h.gateway.pairings()).map((p) => `${p.origin}:${p.state}`).sort(),
    deliveries: h.session.lines().filter((l) => l.level).length, // surface and inject pushes reaching the agent
    popupRows: rows.sort(),
  };
}

test("the attack: no token in reach of the page, no channel to the extension, nothing changes", async (t) => {
  const before = await snapshot();
  await page.bringToFront();
  const clicked = Date.now();
  await page.click("#attack");
  const report = JSON.parse(await waitFor(async () => {
    const t = await page.textContent("#report");
    return t !== "not run" && t;
  }, "the hostile page's report"));
  t.diagnostic(`the attack took ${Date.now() - clicked} ms`);
  t.diagnostic(`the page's report: ${JSON.stringify(report.channels)}`);
  assert.deepEqual(report.found, [], "tokens the page found");
  assert.notEqual(report.channels.chromeRuntime, "function", "no chrome.runtime.sendMessage for pages (no externally_connectable)");
  for (const type of ["popup.state", "popup.share", "popup.unpair", "popup.code", "tap.ask", "tap.console"]) {
    assert.ok(report.channels[type].error, `${type}: ${JSON.stringify(report.channels[type])}`);
  }
  assert.equal(report.channels.tapPage, "undefined", "the isolated world's __tapPage is not the page's");
  // The token is nowhere in the page's DOM or storages (what the page's own search could miss).
  const inPage = await page.evaluate((token) => [document.documentElement.outerHTML, JSON.stringify(localStorage), JSON.stringify(sessionStorage), document.cookie].some((s) => s.includes(token)), token);
  assert.equal(inPage, false);

  // The forged ask and share messages did nothing the user would see.
  const after = await snapshot();
  assert.deepEqual(after, before);
  assert.ok(!h.session.lines().some((l) => JSON.stringify(l).includes("hostile question")), "no inject from the page");

  // The oversized forged console entry is cut to the extension's limit.
  const entries = (await h.callOk("browser_console", { target, limit: L.LOG_MAX_LIMIT })).entries;
  assert.ok(entries.some((e) => e.text.startsWith("yyyy")), "the megabyte error is kept, cut");
  for (const e of entries) assert.ok(e.text.length <= L.MAX_CONSOLE_TEXT_CHARS + 100, `an entry of ${e.text.length} chars`);
  // The replaced MAIN-world helper is never an authority: the worker still refuses what the
  // page cannot do through it (an action still needs the user's approval).
  assert.equal((await snapshot()).approvals, 0);
});

test("a console flood of 20,000 errors: bounded answers and pushes, the gateway and the worker keep answering", async (t) => {
  const pushedBefore = await errorPushes();
  const started = Date.now();
  await page.bringToFront();
  await page.click("#flood");
  await page.locator("#report[data-flooded='20000']").waitFor({ timeout: WAIT_MS });

  const r = await h.call("browser_console", { target, limit: L.LOG_MAX_LIMIT });
  assert.equal(r.code, 0, r.stdout.slice(0, 500) + r.stderr);
  assert.ok(r.json.entries.length <= Math.min(L.LOG_MAX_LIMIT, L.MAX_CONSOLE_ENTRIES), `${r.json.entries.length} entries`);
  assert.ok(r.json.dropped > 0, `dropped: ${r.json.dropped}`);
  assert.ok(r.stdout.length < L.MAX_RESULT_BYTES, `${r.stdout.length} bytes`);
  const byDefault = await h.callOk("browser_console", { target });
  assert.ok(byDefault.entries.length <= L.CONSOLE_DEFAULT_LIMIT);

  // Still answering: the gateway, the tab's tools, and the worker behind the popup.
  assert.equal((await h.gateway.tap(["status", "--json"])).code, 0);
  const outline = await h.callOk("browser_outline", { target, maxNodes: 10 });
  assert.equal(outline.title, "Hostile page");
  await popup.reload();
  await statusIs(popup, "Paired");
  assert.equal((await tabRow(popup, tabId).locator("button.share").textContent()).trim(), "Stop sharing");
  assert.ok(Date.now() - started < 60000, "answered within a minute of the flood");
  // The browser-errors stream got at most a minute's worth of pushes for this tab (read last,
  // after the calls above: the history is written a moment after each push).
  const pushed = (await errorPushes()) - pushedBefore;
  t.diagnostic(`${r.json.entries.length} entries kept, ${r.json.dropped} dropped, ${pushed} pushes, ${Date.now() - started} ms`);
  assert.ok(pushed > 0, "the flood's first errors were pushed");
  assert.ok(pushed <= L.MAX_ERROR_PUSHES_PER_MINUTE, `${pushed} pushes for 20,000 errors`);
});

test("a page of 25,000 long elements: outline and query answer in bounded time and size, cut and marked", async (t) => {
  const clicked = Date.now();
  await page.click("#grow");
  await page.locator("#growth[data-grown='25000']").waitFor({ timeout: WAIT_MS });
  const started = Date.now();
  t.diagnostic(`grown in ${started - clicked} ms`);
  const r = await h.call("browser_outline", { target, maxNodes: L.OUTLINE_MAX_NODES, maxDepth: L.OUTLINE_MAX_DEPTH });
  assert.equal(r.code, 0, r.stdout.slice(0, 500) + r.stderr);
  assert.ok(r.json.nodes.length <= L.OUTLINE_MAX_NODES, `${r.json.nodes.length} nodes`);
  assert.equal(r.json.truncated, true);
  const longest = Math.max(...r.json.nodes.map((n) => Math.max((n.text ?? "").length, (n.name ?? "").length)));
  assert.ok(longest <= L.MAX_NODE_TEXT_CHARS + 20, `a node text of ${longest} chars`);
  assert.ok(r.stdout.length < L.MAX_RESULT_BYTES, `${r.stdout.length} bytes`);
  const q = await h.callOk("browser_query", { target, text: "needle", limit: L.QUERY_MAX_LIMIT });
  assert.ok(q.matches.length <= L.QUERY_MAX_LIMIT && q.matches.length > 0, `${q.matches.length} matches`);
  for (const m of q.matches) {
    assert.ok(m.text.length <= L.MAX_NODE_TEXT_CHARS + 20, `a match text of ${m.text.length}`);
    for (const v of Object.values(m.attributes ?? {})) assert.ok(String(v).length <= L.MAX_ATTRIBUTE_VALUE_CHARS + 20);
  }
  const tooMany = await h.call("browser_outline", { target, maxNodes: L.OUTLINE_MAX_NODES + 1 });
  assert.notEqual(tooMany.code, 0, "a maxNodes above the limit is refused");
  t.diagnostic(`outline (${r.stdout.length} bytes), query and a refusal in ${Date.now() - started} ms`);
  assert.ok(Date.now() - started < L.PAGE_TOOL_TIMEOUT_MS, `${Date.now() - started} ms`);
});

test("a page that took the MAIN world's helper first answers megabytes, deep and wide: the worker cuts or refuses it, and keeps answering", async (t) => {
  const preempt = await h.openTab(h.appUrl("/hostile.html", { preempt: 1 }));
  await popup.reload();
  const preemptId = await h.tabIdOf(preempt, popup);
  await tabRow(popup, preemptId).locator("button.share").click();
  await waitFor(async () => JSON.stringify((await h.call("list_browser_instances")).json ?? "").includes(`tab-${preemptId}`), "the second tab shared");
  const r = await h.call("browser_react_tree", { target: `tab-${preemptId}` });
  t.diagnostic(`browser_react_tree: exit ${r.code}, ${r.stdout.length} bytes${r.json?.errorCode ? `, ${r.json.errorCode}` : ""}`);
  assert.ok(r.stdout.length < L.MAX_RESULT_BYTES, `${r.stdout.length} bytes`);
  if (r.code === 0) {
    assert.ok(r.json.component.length <= L.MAX_RESULT_STRING_CHARS + 100, `component of ${r.json.component.length} chars`);
    assert.ok(r.json.state.length <= L.MAX_RESULT_LIST_ITEMS + 1, `state of ${r.json.state.length} items`);
    let depth = 0;
    for (let v = r.json.props; v && typeof v === "object"; v = v.next) depth++;
    assert.ok(depth <= L.MAX_RESULT_DEPTH, `props ${depth} deep`);
  } else {
    assert.equal(r.json?.errorCode, "PAYLOAD_TOO_LARGE", r.stdout.slice(0, 300));
  }
  // The first tab and the worker are unaffected.
  assert.equal((await h.callOk("browser_outline", { target, maxNodes: 1 })).title, "Hostile page");
  await tabRow(popup, preemptId).locator("button.share", { hasText: "Stop sharing" }).click();
  await preempt.close();
});

/** Events on this session's browser-errors stream so far. */
async function errorPushes() {
  const r = await h.gateway.tap(["streams", "history", "--session", h.session.id, "--stream", "browser-errors@browser", "--limit", "1000", "--json"]);
  return r.code === 0 ? JSON.parse(r.stdout).length : 0;
}

// The extension's actions on the real React app are asked through the gateway's approvals
// (issue 41): approved, the page changes; denied, it does not, and the extension never sees
// the call. Actions aimed at another origin than the one the tab was shared on are refused.
// A pairing revoked with `tap pairing revoke` stops the extension: its tools leave the
// session and the popup says to pair again, which works with a new code. Unpair in the popup
// unshares and forgets the token; a wrong code gets a new request; a pairing remembered in
// the panel survives a gateway restart, and a stopped gateway shows in the popup. A worker
// Chrome stops while a tab is shared comes back by its wake alarm (without the alarm, the
// tools stayed gone for the 45 s this test waits: seen with a build that lacked it).

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { goTo, openPanel } from "../js-support/browser.mjs";
import { codeFromPanel, pairAndShare, setup, statusIs, tabRow, typeCodeFromPanel, waitFor, waitForShared, WAIT_MS } from "./support.mjs";

let h, popup, app, tabId, target;

before(async () => {
  h = await setup({ sessionLabel: "browser-actions" });
  app = await h.openApp({ tab: "app" });
  popup = await h.popup();
  tabId = await h.tabIdOf(app, popup);
  target = `tab-${tabId}`;
  await pairAndShare(h, popup, tabId);
});

after(async () => {
  await h?.close();
});

/** Calls `tool` (it waits for approval), answers it with `verb`, and resolves with the call's output. */
async function asked(tool, args, verb) {
  const call = h.callAsync(tool, { target, ...args });
  const waiting = await h.waiting(tool);
  assert.match(JSON.stringify(waiting), /destructive/i, `asked because of destructiveHint: ${JSON.stringify(waiting)}`);
  await h.answer(verb, waiting.id);
  const r = await call.done;
  let json;
  try {
    json = JSON.parse(r.stdout);
  } catch {
    json = undefined;
  }
  return { ...r, json };
}

test("browser_type then browser_click, each asked and approved: the app greets the typed name", async () => {
  const typed = await asked("browser_type", { selector: "#name", text: "Ada" }, "approve");
  assert.equal(typed.code, 0, typed.stdout + typed.stderr);
  assert.equal(typed.json.typed, 3);
  assert.equal(await app.inputValue("#name"), "Ada");
  const clicked = await asked("browser_click", { selector: "#greet" }, "approve");
  assert.equal(clicked.code, 0, clicked.stdout + clicked.stderr);
  assert.deepEqual(clicked.json, { clicked: "#greet" });
  await app.locator("#greeting", { hasText: "Hello, Ada!" }).waitFor({ timeout: WAIT_MS });
});

test("a denied click never reaches the page: the counter stays", async () => {
  const before = await app.textContent("#count");
  const denied = await asked("browser_click", { selector: "#increment" }, "deny");
  assert.notEqual(denied.code, 0, denied.stdout);
  assert.match(denied.stdout + denied.stderr, /DENIED|denied/);
  // The counter's state, through the extension's own read tool (a later answer than the denial).
  const tree = await h.callOk("browser_react_tree", { target, selector: "#count" });
  assert.deepEqual(tree.state, { count: Number(before) });
  assert.equal(await app.textContent("#count"), before);
});

test("from the MCP client: a click waits, the user approves it once on the panel's Approvals page, the counter goes up", async () => {
  const client = await h.mcp();
  const before = Number(await app.textContent("#count"));
  const panel = await openPanel(h.ctx, h.gateway, { timeout: WAIT_MS });
  await goTo(panel, "Approvals", WAIT_MS);
  const result = client.callTool({ name: "browser_click", arguments: { target, selector: "#increment" } });
  const card = panel.getByTestId("waiting-call");
  await card.waitFor({ timeout: WAIT_MS });
  assert.match(await card.innerText(), /browser_click/);
  assert.equal(Number(await app.textContent("#count")), before, "nothing happens before the answer");
  await card.getByRole("button", { name: /^Approve once/ }).click();
  const res = await result;
  assert.ok(!res.isError, JSON.stringify(res.content));
  assert.deepEqual(JSON.parse(res.content.find((c) => c.type === "text").text), { clicked: "#increment" });
  await app.locator("#count", { hasText: String(before + 1) }).waitFor({ timeout: WAIT_MS });
  assert.deepEqual(panel.errors, []);
  await panel.close();
});

test("browser_evaluate approved returns the page's value", async () => {
  const r = await asked("browser_evaluate", { expression: "document.querySelector('#greeting').textContent" }, "approve");
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal(r.json.value, "Hello, Ada!");
});

test("browser_navigate to another origin is refused FORBIDDEN even when approved; the tab stays", async () => {
  const other = h.appUrl("/notes.html").replace("127.0.0.1", "localhost"); // same server, another origin
  const r = await asked("browser_navigate", { url: other }, "approve");
  assert.equal(r.json?.errorCode, "FORBIDDEN", r.stdout + r.stderr);
  assert.equal(new URL(app.url()).hostname, "127.0.0.1");
  assert.equal(await app.title(), "Tap test app");
});

test("a tab that left the shared origin: actions are refused FORBIDDEN while it is away; back on the origin it answers again", async () => {
  // The user (not the agent) follows a link to another origin in the shared tab.
  await app.goto(h.appUrl("/notes.html", { tab: "app" }).replace("127.0.0.1", "localhost"));
  const r = await asked("browser_click", { selector: "h1" }, "approve");
  assert.equal(r.json?.errorCode, "FORBIDDEN", r.stdout + r.stderr);
  assert.match(r.json.error, /share it again/);
  await app.goto(h.appUrl("/", { tab: "app" }));
  await app.locator("#greeting").waitFor({ timeout: WAIT_MS });
  // The worker injects the page scripts again on the shared origin's navigation.
  await waitFor(async () => (await h.call("browser_outline", { target, maxNodes: 1 })).json?.title === "Tap test app", "the outline after coming back");
});

test("a pairing the user remembers in the panel survives a gateway restart: the extension reconnects with its token, no new code", async () => {
  const panel = await h.panelPairing();
  const row = panel.locator(`tr[data-pairing-id]`).filter({ hasText: `chrome-extension://${h.extensionId}` });
  await row.getByRole("checkbox", { name: "Remember browser across restarts" }).check();
  await waitFor(async () => (await h.gateway.pairings())[0]?.remember === true, "pairing.configure from the panel");
  await panel.close();

  await h.gateway.restart(); // same port and TAP_HOME; its sessions end with it
  h.session = await h.gateway.openSession("browser-actions-2");
  await waitFor(async () => (await h.call("browser_outline", { target, maxNodes: 1 })).json?.title === "Tap test app", "the tab in the new session");
  await popup.bringToFront();
  await statusIs(popup, "Paired");
  assert.equal(await popup.locator("#pair-form").isVisible(), false, "no code asked");
  assert.deepEqual((await h.gateway.pairings()).map((p) => p.state), ["paired"]);
});

test("a revoked pairing stops the extension: its tools leave, the popup says pair again, and a new code pairs it", async () => {
  const paired = (await h.gateway.pairings()).filter((p) => p.state === "paired");
  assert.equal(paired.length, 1, JSON.stringify(paired));
  assert.equal(paired[0].origin, `chrome-extension://${h.extensionId}`);
  const revoked = await h.gateway.tap(["pairing", "revoke", paired[0].id]);
  assert.equal(revoked.code, 0, revoked.stdout + revoked.stderr);

  await waitFor(async () => !(await h.toolNames()).includes("browser_outline"), "the browser tools to leave the session");
  const r = await h.call("browser_outline", { target });
  assert.notEqual(r.code, 0, r.stdout);
  await popup.bringToFront();
  await statusIs(popup, "Pairing revoked: pair again");
  // Pairing again, as the first time: a new request in the panel, its code typed in the popup.
  await typeCodeFromPanel(h, popup);
  await waitForShared(h, popup, tabId);
  assert.equal((await h.callOk("browser_outline", { target, maxNodes: 1 })).title, "Tap test app");
  assert.equal((await tabRow(popup, tabId).locator("button.share").textContent()).trim(), "Stop sharing");
});

test("Unpair in the popup: the tab is unshared, the token forgotten, and sharing again asks for a new code", async () => {
  await popup.bringToFront();
  await popup.locator("#unpair").click();
  await statusIs(popup, "Not paired");
  await waitFor(async () => !(await h.toolNames()).includes("browser_outline"), "the browser tools to leave the session");
  assert.equal(await h.badge(popup, tabId), "");
  assert.equal((await tabRow(popup, tabId).locator("button.share").textContent()).trim(), "Share");
  const stored = JSON.stringify(await popup.evaluate(() => chrome.storage.local.get(null)));
  assert.doesNotMatch(stored, /ext-[A-Za-z0-9_-]{8,}/, "no token left in the extension's storage");

  await tabRow(popup, tabId).locator("button.share").click();
  await popup.locator("#pair-form").waitFor({ state: "visible", timeout: WAIT_MS });
  const panel = await h.panelPairing();
  await codeFromPanel(panel, h.extensionId); // a new request, its code in the panel
  await panel.close();
});

test("a wrong code: the popup says so, the panel shows a new request, and its code pairs", async () => {
  // Unpair above left a request waiting for its code.
  await popup.bringToFront();
  await popup.locator("#pair-form").waitFor({ state: "visible", timeout: WAIT_MS });
  const panel = await h.panelPairing();
  const first = await codeFromPanel(panel, h.extensionId);
  const firstId = await first.request.getAttribute("data-pairing-id");
  const wrong = first.code.replace(/\d/g, (d) => String((Number(d) + 1) % 10));
  await popup.locator("#code").fill(wrong);
  await popup.locator("#pair-submit").click();
  await popup.locator("#pair-error", { hasText: /wrong code/i }).waitFor({ timeout: WAIT_MS });
  // The gateway ended that request; the extension's next one is another, with another code.
  await waitFor(async () => {
    const id = await first.request.getAttribute("data-pairing-id", { timeout: 1000 }).catch(() => null);
    return id && id !== firstId;
  }, "a new request in the panel");
  const second = await codeFromPanel(panel, h.extensionId);
  await popup.locator("#code").fill(second.code);
  await popup.locator("#pair-submit").click();
  await statusIs(popup, "Paired");
  await panel.close();
  await waitForShared(h, popup, tabId);
});

test("the gateway stops under a shared tab: the popup says it is not running; started again, the tab is back", async (t) => {
  const remember = (await h.gateway.pairings()).find((p) => p.state === "paired");
  const panel = await h.panelPairing();
  await panel.locator(`tr[data-pairing-id="${remember.id}"]`).getByRole("checkbox", { name: "Remember browser across restarts" }).check();
  await waitFor(async () => (await h.gateway.pairings()).find((p) => p.id === remember.id)?.remember === true, "remember");
  await panel.close();
  await h.gateway.stopProcesses();
  await popup.bringToFront();
  await statusIs(popup, `Gateway not running at ${h.gateway.url}`);
  await h.gateway.restart();
  h.session = await h.gateway.openSession("browser-actions-3");
  const started = Date.now();
  await waitFor(async () => (await h.call("browser_outline", { target, maxNodes: 1 })).json?.title === "Tap test app", "the tab in the new session");
  t.diagnostic(`back ${Date.now() - started} ms after the gateway started again`);
  await statusIs(popup, "Paired");
});

test("Chrome stops the extension's worker while a tab is shared: the wake alarm brings the tab's tools back with nobody touching anything", async (t) => {
  // The popup polls the worker, which would wake it: closed here, as a user's is.
  await popup.close();
  const internals = await h.ctx.newPage();
  await internals.goto("chrome://serviceworker-internals/");
  const ours = internals.locator(".serviceworker-registration", { hasText: `chrome-extension://${h.extensionId}/` });
  await ours.getByRole("button", { name: "Stop" }).first().click();
  await waitFor(async () => !(await h.toolNames()).includes("browser_outline"), "the tools to leave with the stopped worker");
  const stopped = Date.now();
  // Nothing but the alarm (L.WAKE_ALARM_MINUTES, 30 s) wakes it now: no tab is opened, closed
  // or switched to until the tools are back (any tabs event would start the worker too).
  await waitFor(async () => (await h.call("browser_outline", { target, maxNodes: 1 })).json?.title === "Tap test app", "the tab's tools back", 45000, 500);
  t.diagnostic(`back ${Date.now() - stopped} ms after the worker stopped`);
  await internals.close();
  popup = await h.popup();
});

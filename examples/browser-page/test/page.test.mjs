// The template in real Chromium: serve.mjs serves the page, the page pairs through the code a
// user reads in the gateway's panel (logged in with `tap ui --no-open`'s link, Pairing page, in
// the same Chromium) typed into its form, then `tap call` reaches its tools and the Bookmark
// button stores an event on the session's stream.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { startGateway, openSession, run, waitFor, WAIT_MS } from "./helpers/gateway.mjs";
import { openPanelPairing, codeFromPanel, pendingRequest } from "./helpers/panel.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"];

let gw, session, server, pageUrl, browser, page;
const errors = [];
const call = async (tool, args = {}) => {
  const r = await gw.tap(["call", "--session", session.id, tool, JSON.stringify(args)]);
  assert.equal(r.code, 0, `${tool}: ${r.stdout} ${r.stderr}`);
  return JSON.parse(r.stdout);
};

before(async () => {
  gw = await startGateway();
  session = await openSession(gw, "browser-page-test");
  server = run(process.execPath, [join(ROOT, "serve.mjs")], { ...process.env, PORT: "0" });
  const base = await waitFor(() => server.out.stdout.match(/serving (http:\S+)/)?.[1], `serve.mjs's address (stderr: ${server.out.stderr})`);
  pageUrl = `${base}?gw=${encodeURIComponent(gw.url)}`;
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  page = await browser.newPage();
  page.on("pageerror", (e) => errors.push(String(e)));
});

after(async () => {
  await browser?.close();
  server?.child.kill("SIGTERM");
  await server?.done;
  await session?.close();
  await gw?.stop();
});

test("serve.mjs serves the page and the SDK, nothing else", async () => {
  const base = new URL(pageUrl).origin;
  assert.equal((await fetch(`${base}/sdk/browser.js`)).status, 200);
  for (const path of ["/serve.mjs", "/package.json", "/sdk/..%2F..%2Fpackage.json", "/sdk/../package.json"]) {
    assert.equal((await fetch(`${base}${path}`)).status, 404, path);
  }
});

test("the page pairs with the code from the panel typed into its form", async () => {
  const login = await gw.tap(["ui", "--no-open"]);
  assert.equal(login.code, 0, login.stderr);
  const panel = await openPanelPairing(browser, login.stdout);
  const origin = new URL(pageUrl).origin;
  await page.goto(pageUrl);
  await page.locator("#pairing").waitFor({ state: "visible", timeout: WAIT_MS });
  assert.equal(await page.textContent("#pairing-message"), "Type the code from your tray");
  const code = await codeFromPanel(panel, { origin, name: "browser-page" });
  // A typo is caught by the form before it costs one of the gateway's code attempts.
  await page.fill("#code", "12");
  await page.click("#pair-button");
  assert.equal(await page.textContent("#pairing-hint"), "The code is 6 digits.");
  await page.fill("#code", code);
  await page.click("#pair-button");
  await page.waitForFunction((sid) => document.getElementById("status").textContent === `Connected to session ${sid}`, session.id, { timeout: WAIT_MS });
  // Paired: the request leaves the panel's pending list.
  await pendingRequest(panel, origin).waitFor({ state: "detached", timeout: WAIT_MS });
  assert.deepEqual(panel.errors, []);
  await panel.close();
});

test("`tap call` reaches page_title and page_text", async () => {
  // The tools reach the session a moment after the bind: poll until the call is answered.
  const title = await waitFor(async () => {
    const r = await gw.tap(["call", "--session", session.id, "page_title"]);
    return r.code === 0 && JSON.parse(r.stdout);
  }, "page_title");
  assert.equal(title.title, "Tap browser page example");
  assert.equal(title.url, new URL(pageUrl).href);

  const whole = await call("page_text");
  assert.equal(whole.source, "page");
  assert.match(whole.text, /^Release notes, version 2\.4/);
  assert.doesNotMatch(whole.text, /Connected to session/); // the Tap panel is not page content
  assert.equal(whole.truncated, false);

  const cut = await call("page_text", { maxChars: 20 });
  assert.equal(cut.text, "Release notes, versi");
  assert.equal(cut.truncated, true);

  await page.evaluate(() => window.getSelection().selectAllChildren(document.querySelector("main ul li")));
  const selected = await call("page_text");
  assert.deepEqual([selected.source, selected.text], ["selection", "Exports are now streamed, so large reports start downloading at once."]);

  const bad = await gw.tap(["call", "--session", session.id, "page_text", '{"maxChars":0}']);
  assert.equal(JSON.parse(bad.stdout).errorCode, "INVALID_JSON");
});

test("the Bookmark button stores a keep event on stream page", async () => {
  await page.click("#bookmark");
  await page.waitForFunction(() => document.getElementById("bookmark-status").textContent === "Saved to the session.", null, { timeout: WAIT_MS });
  // The history is written a moment after the push: ask until it is there.
  const event = await waitFor(async () => {
    const r = await gw.tap(["streams", "history", "--session", session.id, "--stream", "page@browser-page", "--json"]);
    return JSON.parse(r.stdout)[0];
  }, "the bookmark in the history");
  assert.equal(event.outcome, "keep");
  assert.equal(event.text, "bookmarked: Tap browser page example");
  assert.equal(event.metadata.title, "Tap browser page example");
  assert.deepEqual(errors, []);
});

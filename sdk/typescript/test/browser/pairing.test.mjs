// The browser build in real Chromium: the page pairs through the code a user reads in the
// gateway's panel (logged in with `tap ui --no-open`'s link, Pairing page, in the same Chromium)
// and types into the page's callback, then `tap call` reaches its handler.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { readFileSync } from "node:fs";
import { join, dirname, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { launchChromium } from "../../../../tests/js-support/browser.mjs";
import { startGateway } from "../../../../tests/js-support/gateway.mjs";
import { WAIT_MS } from "../../../../tests/js-support/wait.mjs";
import { openHost, tap } from "../helpers/gateway.mjs";
import { openPanelPairing, codeFromPanel, pendingRequest } from "../helpers/panel.mjs";

const DIST = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "dist");

const PAGE = `<!doctype html><title>Tap test page</title><p id="status">loading</p>
<script type="module">
import { connectProvider } from "/sdk/browser.js";
const status = document.getElementById("status");
const url = new URLSearchParams(location.search).get("gw");
connectProvider({
  name: "page-tools", url, storage: false, metadata: { title: document.title },
  onPairingCode: ({ message }) => { status.textContent = message; return new Promise((r) => { window.enterCode = r; }); },
  tools: { page_title: { description: "The page's title", handler: (_args, ctx) => { document.body.dataset.calls = String(Number(document.body.dataset.calls || 0) + 1); ctx.progress("reading"); return document.title; } } },
}).then((p) => { status.textContent = "bound to " + p.sessionId; }, (e) => { status.textContent = "failed: " + e.code + ": " + e.message; });
</script>`;

let gw, host, server, browser;
before(async () => {
  gw = await startGateway();
  host = await openHost(gw);
  server = createServer((req, res) => {
    const path = new URL(req.url, "http://x").pathname;
    if (path === "/") { res.writeHead(200, { "content-type": "text/html" }); return res.end(PAGE); }
    const file = normalize(join(DIST, path.replace(/^\/sdk\//, "")));
    if (!path.startsWith("/sdk/") || !file.startsWith(DIST)) { res.writeHead(404); return res.end(); }
    try { res.writeHead(200, { "content-type": "text/javascript" }); res.end(readFileSync(file)); } catch { res.writeHead(404); res.end(); }
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  browser = await launchChromium(chromium);
});
after(async () => {
  await browser?.close();
  server?.close();
  host?.close();
  await gw?.stop();
});

test("the browser build imports nothing from Node", () => {
  const seen = new Set();
  const walk = (file) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const [, spec] of readFileSync(join(DIST, file), "utf8").matchAll(/(?:from|import)\s*["']([^"']+)["']/g)) {
      assert.ok(spec.startsWith("./"), `${file} imports ${spec}`);
      walk(spec.slice(2));
    }
  };
  walk("browser.js");
  assert.ok(seen.size > 3);
});

test("pairs through the code read in the panel, then `tap call` reaches the page's handler", async () => {
  const s = await host.register("s-page");
  const login = await tap(gw, ["ui", "--no-open"]).done;
  assert.equal(login.code, 0, login.stderr);
  const panel = await openPanelPairing(browser, login.stdout);
  const origin = `http://127.0.0.1:${server.address().port}`;
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(`${origin}/?gw=${encodeURIComponent(gw.url)}`);
  await page.waitForFunction(() => document.getElementById("status").textContent === "Type the code from your tray", null, { timeout: WAIT_MS });
  const code = await codeFromPanel(panel, { origin, name: "page-tools" });
  await page.evaluate((code) => window.enterCode(code), code);
  await page.waitForFunction((sid) => document.getElementById("status").textContent === `bound to ${sid}`, s, { timeout: WAIT_MS });
  // Paired: the request leaves the panel's pending list.
  await pendingRequest(panel, origin).waitFor({ state: "detached", timeout: WAIT_MS });
  await host.toolsInclude(s, "page_title");
  const called = await tap(gw, ["call", "--session", s, "page_title"]).done;
  assert.equal(called.stdout, '"Tap test page"');
  assert.equal(await page.evaluate(() => document.body.dataset.calls), "1");
  const paired = JSON.parse((await tap(gw, ["pairing", "list", "--json"]).done).stdout).find((e) => e.name === "page-tools");
  assert.equal(paired.state, "paired");
  assert.deepEqual(errors, []);
  assert.deepEqual(panel.errors, []);
  await page.close();
  await panel.close();
});

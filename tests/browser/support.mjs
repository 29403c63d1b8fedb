// The browser extension's end-to-end harness: the real parts, each on 127.0.0.1 port 0.
//
// - the test app (app-build.mjs): built once per run (scripts/test-browser.sh builds it into
//   TAP_BROWSER_APP_DIR; a file run alone builds its own), served by a static server;
// - the extension, built by `node extensions/browser/build.mjs OUT` (with the TypeScript SDK's
//   browser build, which scripts/test-browser.sh makes);
// - `tap gateway` serving the panel (tests/js-support/gateway.mjs) and a `tap session open`
//   for the extension's connections to bind to;
// - Debian's Chromium, headless, with the unpacked extension in a persistent profile; the
//   extension's popup page opened in a tab and driven like a user; the gateway's panel in
//   another tab, where the user reads the pairing code.
//
// One Chromium, one gateway and one session per test file (setup() ... close()).

import { once } from "node:events";
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import { PNG } from "pngjs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { chromiumPath, goTo, openPanel } from "../js-support/browser.mjs";
import { startGateway, tapBin } from "../js-support/gateway.mjs";
import { remove, run, start, tempDir } from "../js-support/process.mjs";
import { MAX_FOREIGN_BLOCK, largestForeignBlock } from "../js-support/uniform-blocks.mjs";
import { waitFor, WAIT_MS } from "../js-support/wait.mjs";
import { buildApp, serveDir } from "./app-build.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(HERE, "../..");
export const EXTENSION_SOURCE = path.join(ROOT, "extensions/browser");
export const UI_DIST = path.join(ROOT, "ui/dist");
export const SCREENSHOTS = path.join(ROOT, "docs/screenshots");
export { WAIT_MS, waitFor };

/** The Chromium flags the contract names for an unpacked extension, headless. */
export function extensionArgs(dir) {
  return ["--no-sandbox", "--disable-gpu", "--disable-background-networking", `--disable-extensions-except=${dir}`, `--load-extension=${dir}`];
}

/** The built test app: TAP_BROWSER_APP_DIR when the run built it, else a build into `dir`. */
async function appDir(dir) {
  const shared = process.env.TAP_BROWSER_APP_DIR;
  if (shared) {
    assert.ok(existsSync(path.join(shared, "index.html")), `TAP_BROWSER_APP_DIR=${shared} holds no built app`);
    return shared;
  }
  return buildApp(path.join(dir, "app"));
}

/** Builds the extension into `out` with its own build script; throws with its output on failure. */
export async function buildExtension(out) {
  const r = await run(process.execPath, [path.join(EXTENSION_SOURCE, "build.mjs"), out], { cwd: ROOT, timeout: 60000 });
  if (r.code !== 0) throw new Error(`extensions/browser/build.mjs failed (${r.code}): ${r.stdout}${r.stderr}`);
  assert.ok(existsSync(path.join(out, "manifest.json")), `build.mjs wrote no manifest.json into ${out}`);
  return out;
}

/**
 * A port nothing listens on: bound on 127.0.0.1 then closed, so a fetch to it is refused by
 * this machine's TCP stack (what the app's "Fetch a closed port" button needs).
 */
export async function closedPort() {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address();
  server.close();
  await once(server, "close");
  return port;
}

/**
 * Starts everything for one test file: { dir, app, appUrl(path, query), gateway, session,
 * ctx, extensionId, extensionDir, refusedPort, openTab(), openApp(), panelPairing(), popup(),
 * tabIdOf(), badge(), call(), callOk(), callAsync(), waiting(), answer(), toolNames(), mcp(),
 * close() }. `sessionLabel` labels the session. close() stops and removes all of it.
 */
export async function setup({ sessionLabel = "browser-test" } = {}) {
  assert.ok(existsSync(path.join(UI_DIST, "index.html")), `${UI_DIST}/index.html is missing: run \`npm run build --prefix ui\` first`);
  const dir = tempDir("tap-browser-");
  const closers = [];
  const close = async () => {
    for (const c of closers.splice(0).reverse()) {
      try {
        await c();
      } catch (e) {
        console.error(`teardown: ${e.message}`);
      }
    }
    remove(dir);
  };
  try {
    // TAP_BROWSER_EXTENSION_DIR: an extension built beforehand (an unzipped release, or a
    // copy changed on purpose to see a test fail) instead of building extensions/browser.
    const extensionDir = process.env.TAP_BROWSER_EXTENSION_DIR || (await buildExtension(path.join(dir, "extension")));
    const app = await serveDir(await appDir(dir));
    closers.push(() => app.close());
    const refusedPort = await closedPort();
    const gateway = await startGateway({ prefix: "tap-browser-gw-", env: { TAP_UI_DIR: UI_DIST, DISPLAY: undefined, WAYLAND_DISPLAY: undefined } });
    closers.push(() => gateway.stop());
    const session = await gateway.openSession(sessionLabel);

    const ctx = await chromium.launchPersistentContext(path.join(dir, "profile"), {
      executablePath: chromiumPath(),
      headless: true,
      viewport: { width: 1000, height: 700 },
      args: extensionArgs(extensionDir),
    });
    closers.push(() => ctx.close());
    const worker = ctx.serviceWorkers().find((w) => w.url().startsWith("chrome-extension://")) ?? (await ctx.waitForEvent("serviceworker", { timeout: WAIT_MS }));
    const extensionId = new URL(worker.url()).host;

    const h = {
      dir,
      app,
      gateway,
      session,
      ctx,
      extensionId,
      extensionDir,
      refusedPort,
      close,
      /** The app's URL: `path` on the static server, the closed port for the refused fetch, and `query`. */
      appUrl(pathname = "/", query = {}) {
        const u = new URL(pathname, app.url);
        u.searchParams.set("refused", String(refusedPort));
        for (const [k, v] of Object.entries(query)) u.searchParams.set(k, String(v));
        return u.href;
      },
      /** Opens `url` in a new tab; the page's `errors` collects its uncaught exceptions. */
      async openTab(url) {
        const page = await ctx.newPage();
        page.errors = [];
        page.on("pageerror", (e) => page.errors.push(e.message));
        await page.goto(url);
        return page;
      },
      /** The app (index.html) in a new tab, once React rendered it. */
      async openApp(query = {}) {
        const page = await h.openTab(h.appUrl("/", query));
        await page.locator("#greeting").waitFor({ timeout: WAIT_MS });
        return page;
      },
      /** The panel, logged in, on its Pairing page. */
      async panelPairing() {
        const panel = await openPanel(ctx, gateway, { timeout: WAIT_MS });
        await goTo(panel, "Pairing", WAIT_MS);
        return panel;
      },
      /**
       * The extension's popup page in a tab (what a user gets from the toolbar icon; its body
       * has the popup's fixed width). Not resized: in headless Chromium a tab's viewport size
       * changed the size of the next tab's captureVisibleTab.
       */
      async popup() {
        const page = await ctx.newPage();
        page.errors = [];
        page.on("pageerror", (e) => page.errors.push(e.message));
        page.on("console", (m) => m.type() === "error" && page.errors.push(`console: ${m.text()}`));
        await page.goto(`chrome-extension://${extensionId}/src/popup/popup.html`);
        await page.locator("#status").waitFor({ timeout: WAIT_MS });
        return page;
      },
      /** Chrome's id of the tab showing `page` (asked from an extension page, as the popup does). */
      async tabIdOf(page, popup) {
        const url = page.url();
        return waitFor(async () => {
          const tabs = await popup.evaluate(() => chrome.tabs.query({}));
          const hits = tabs.filter((t) => t.url === url);
          assert.ok(hits.length <= 1, `two tabs show ${url}: give each a distinct query`);
          return hits[0]?.id;
        }, `the tab id of ${url}`);
      },
      /** The badge text of tab `tabId` ("" when none), read from an extension page. */
      badge(popup, tabId) {
        return popup.evaluate((tabId) => chrome.action.getBadgeText({ tabId }), tabId);
      },
      /** `tap call --session S TOOL ARGS`: { code, stdout, stderr, json }. */
      async call(tool, args = {}) {
        const r = await gateway.tap(["call", "--session", h.session.id, tool, JSON.stringify(args)], 60000);
        try {
          r.json = JSON.parse(r.stdout);
        } catch {
          r.json = undefined;
        }
        return r;
      },
      /** A successful call's parsed answer (fails the test with the output otherwise). */
      async callOk(tool, args = {}) {
        const r = await h.call(tool, args);
        assert.equal(r.code, 0, `${tool}: ${r.stdout}${r.stderr}`);
        assert.ok(!r.json?.errorCode, `${tool}: ${r.stdout}`);
        return r.json;
      },
      /** `tap call` left running (an approval holds it): { child, output, done: Promise<{code, stdout, stderr}> }. */
      callAsync(tool, args = {}) {
        const p = start(tapBin(), ["call", "--session", h.session.id, tool, JSON.stringify(args)], { env: gateway.env }, `tap call ${tool}`);
        p.done = p.output.exited.then((code) => ({ code, stdout: p.output.stdout, stderr: p.output.stderr }));
        closers.push(() => p.stop("SIGKILL", 1000));
        return p;
      },
      /** The call of `tool` waiting for approval (`tap approvals list --json`), once there. */
      waiting(tool) {
        return waitFor(async () => {
          const r = await gateway.tap(["approvals", "list", "--json"]);
          return r.code === 0 && JSON.parse(r.stdout).waiting.find((w) => w.tool === tool);
        }, `${tool} waiting for approval`);
      },
      /** `tap approvals approve|deny ID`. */
      async answer(verb, id) {
        const r = await gateway.tap(["approvals", verb, id]);
        assert.equal(r.code, 0, `tap approvals ${verb} ${id}: ${r.stdout}${r.stderr}`);
      },
      /** The session's tool names now (`tap status --json`). */
      async toolNames() {
        const status = await gateway.status();
        const s = (status.sessions ?? []).find((x) => x.id === h.session.id);
        return (s?.tools ?? []).map((t) => (typeof t === "string" ? t : t.name));
      },
      /** The official MCP TypeScript SDK's client on the session's endpoint (`/mcp/<session>`, host token). */
      async mcp() {
        const client = new Client({ name: "tap-browser-test", version: "1.0.0" });
        const transport = new StreamableHTTPClientTransport(new URL(`/mcp/${h.session.id}`, gateway.httpBase), {
          requestInit: { headers: { Authorization: `Bearer ${gateway.hostToken}` } },
        });
        await client.connect(transport);
        closers.push(() => client.close());
        return client;
      },
    };
    return h;
  } catch (e) {
    await close();
    throw e;
  }
}

/**
 * The pending pairing request from the extension (origin chrome-extension://ID) on the
 * panel's Pairing page: waits for exactly one, checks the origin and name the panel shows,
 * and returns the six digits the user reads there.
 */
export async function codeFromPanel(panel, extensionId) {
  const origin = `chrome-extension://${extensionId}`;
  const request = panel.locator("li.request").filter({ has: panel.getByTestId("pairing-origin").getByText(origin, { exact: true }) });
  await request.waitFor({ timeout: WAIT_MS }); // strict: a second request from the extension fails here
  const facts = await request.locator("dl.facts").evaluate((dl) =>
    Object.fromEntries([...dl.querySelectorAll("dt")].map((dt) => [dt.textContent, dt.nextElementSibling?.textContent])));
  assert.equal(facts.Origin, origin, "the origin the panel shows");
  assert.equal(facts.Name, "browser", "the name the panel shows");
  const code = request.getByTestId("pairing-code");
  const digits = (await code.locator(".digit").allTextContents()).join("");
  assert.match(digits, /^\d{6}$/, "six digits in the panel");
  return { code: digits, request };
}

/** The popup's row for tab `tabId` (it may not be there yet). */
export const tabRow = (popup, tabId) => popup.locator(`#tabs li[data-tab-id="${tabId}"]`);

/** Waits until the popup's `#status` reads `text` (a string or RegExp). */
export async function statusIs(popup, text) {
  const status = popup.locator("#status");
  await waitFor(async () => {
    const now = (await status.textContent())?.trim();
    return typeof text === "string" ? now === text : text.test(now);
  }, `the popup's status to read ${text} (it reads "${await status.textContent().catch(() => "?")}")`);
}

/** Points the extension at the test's gateway through the popup's URL field. */
export async function setGatewayUrl(popup, url) {
  await popup.locator("#gateway-url").fill(url);
  await popup.locator("#save-url").click();
}

/**
 * Shares `tabId` from the popup (its row's Share button) and waits until the row offers
 * "Stop sharing"; pairing, when the extension asks for it, is the caller's.
 */
export async function clickShare(popup, tabId) {
  const row = tabRow(popup, tabId);
  await row.waitFor({ timeout: WAIT_MS });
  await row.locator("button.share").click();
}

/**
 * The first pairing, as a user does it: the gateway URL typed into the popup, the app tab
 * shared, the code read from the panel's Pairing page typed into the popup. Resolves once the
 * popup says "Paired" and the tab's tools are in the session.
 */
export async function pairAndShare(h, popup, tabId) {
  await setGatewayUrl(popup, h.gateway.url);
  await clickShare(popup, tabId);
  await typeCodeFromPanel(h, popup);
  await waitForShared(h, popup, tabId);
}

/**
 * With the popup asking for a code: the code of the extension's request on the panel's Pairing
 * page typed into the popup, as a user does. Resolves once the popup says "Paired" and the
 * request left the panel.
 */
export async function typeCodeFromPanel(h, popup) {
  await popup.locator("#pair-form").waitFor({ state: "visible", timeout: WAIT_MS });
  const panel = await h.panelPairing();
  const { code, request } = await codeFromPanel(panel, h.extensionId);
  await popup.locator("#code").fill(code);
  await popup.locator("#pair-submit").click();
  await statusIs(popup, "Paired");
  await request.waitFor({ state: "detached", timeout: WAIT_MS });
  assert.deepEqual(panel.errors, [], "the panel's errors");
  await panel.close();
}

/** Waits until `tabId` is shared: its row says "Stop sharing", its badge is "TAP", and its instance is in list_browser_instances. */
export async function waitForShared(h, popup, tabId) {
  await tabRow(popup, tabId).locator("button.share", { hasText: "Stop sharing" }).waitFor({ timeout: WAIT_MS });
  await waitFor(async () => (await h.badge(popup, tabId)) === "TAP", `the badge TAP on tab ${tabId}`);
  return waitFor(async () => {
    const r = await h.call("list_browser_instances");
    return r.code === 0 && JSON.stringify(r.json ?? "").includes(`tab-${tabId}`) && r.json;
  }, `tab-${tabId} in list_browser_instances`);
}

/**
 * Writes docs/screenshots/NAME.png from a PNG buffer (TAP_SCREENSHOTS=1 runs only), after the
 * docs' check that nothing large and flat is drawn over the page (tests/js-support/uniform-blocks.mjs).
 */
export async function saveScreenshot(name, png) {
  const block = largestForeignBlock(PNG.sync.read(png));
  assert.ok(!block || block.share <= MAX_FOREIGN_BLOCK, `${name}.png: a flat block over the page: ${JSON.stringify(block)}`);
  await mkdir(SCREENSHOTS, { recursive: true });
  await writeFile(path.join(SCREENSHOTS, `${name}.png`), png);
}

/** The popup as Chromium shows it from the toolbar: its body's box (fixed width, as tall as its content, at most 600 px). */
export async function popupScreenshot(popup) {
  const box = await popup.evaluate(() => {
    const r = document.body.getBoundingClientRect();
    return { x: 0, y: 0, width: Math.ceil(r.right), height: Math.min(600, Math.ceil(r.bottom)) };
  });
  return popup.screenshot({ clip: box });
}

// WebDriver (tauri-driver + WebKitWebDriver) drives the real panel in the app's webview:
// it connects to the in-process gateway with the token the app hands over, shows live
// data, talks to the app through the desktop bridge, and the control token round-trips
// through the session's unlocked gnome-keyring while the `tap` CLI still authenticates.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import path from "node:path";
import { WebSocketServer } from "ws";
import { gatewayJson, openSession } from "../js-support/gateway.mjs";
import { remove } from "../js-support/process.mjs";
import { waitFor } from "../js-support/wait.mjs";
import {
  QUIT_BOUND_MS,
  SCREENSHOTS,
  freshHome,
  keyringLookup,
  saveWebviewScreenshot,
  startApp,
  tap,
  tokenProvider,
  webdriverSession,
} from "./support.mjs";

/** Calls one of the app's IPC commands from the page (what `desktop` in transport.ts does). */
function invoke(browser, command, args = {}) {
  return browser.executeAsync(
    (command, args, done) => {
      window.__TAURI_INTERNALS__
        .invoke(command, args)
        .then((value) => done({ value: value ?? null }))
        .catch((e) => done({ error: String(e) }));
    },
    command,
    args,
  );
}

/** Clicks a page in the navigation and waits for its heading. */
async function goTo(browser, title) {
  const link = await browser.$(`//nav[@aria-label="Pages"]//a[starts-with(normalize-space(.), "${title}")]`);
  await link.click();
  await browser.waitUntil(async () => (await (await browser.$("main h1")).getText()) === title, {
    timeout: 10000,
    timeoutMsg: `the ${title} page`,
  });
}

const autostartEntry = () => path.join(process.env.HOME, ".config", "autostart", "tap-desktop.desktop");

describe("the panel in the app's webview", () => {
  let h, session, browser, info;

  before(async () => {
    h = await freshHome("webdriver");
    session = await webdriverSession(h.env, ["--show"]);
    browser = session.browser;
    info = await gatewayJson(h.home);
  });

  after(async () => {
    await session?.stop();
    if (h) await remove(h.dir);
  });

  test("it connects to the in-process gateway with the token the app hands over (no login link)", async () => {
    assert.equal(await browser.getUrl(), "tauri://localhost");
    const live = await browser.$('nav [role="status"]');
    await browser.waitUntil(async () => (await live.getText()).includes("Live"), { timeout: 15000, timeoutMsg: "Live" });
    assert.equal(await (await browser.$('[data-testid="overview-address"]')).getText(), info.address);
    // The token came over IPC: it is in no URL and in no storage.
    const leaks = await browser.execute(() => [location.href, JSON.stringify(sessionStorage), JSON.stringify(localStorage)].join(" "));
    assert.doesNotMatch(leaks, /ctk-/);
    // The docs' picture of the panel: WebKit's own, so nothing drawn over the window shows.
    await saveWebviewScreenshot(browser, path.join(SCREENSHOTS, "desktop-panel.png"));
  });

  test("WebDriver walks the pages and reads live data", async () => {
    for (const title of ["Pairing", "Sessions", "Providers", "Streams", "Overview"]) await goTo(browser, title);
    await goTo(browser, "Providers");
    assert.doesNotMatch(await (await browser.$("main")).getText(), /desktop-e2e-provider/);
    // A provider connects: the page shows it without a reload.
    await browser.execute(() => (window.__notReloaded = true));
    const session = await openSession(h.env, "desktop-e2e-session");
    const provider = await tokenProvider(info.address, h.home, "desktop-e2e-provider", session.id);
    await browser.waitUntil(async () => (await (await browser.$("main")).getText()).includes("desktop-e2e-provider"), {
      timeout: 15000,
      timeoutMsg: "the provider on the Providers page",
    });
    assert.equal(await browser.execute(() => window.__notReloaded), true);
    await saveWebviewScreenshot(browser, path.join(SCREENSHOTS, "desktop-providers.png"));
    await goTo(browser, "Sessions");
    assert.match(await (await browser.$("main")).getText(), /desktop-e2e-session/);
    await goTo(browser, "Providers");
    provider.close();
    // It leaves the live table (the history lists it below, greyed, as disconnected).
    const liveRowsName = async () => {
      for (const row of await browser.$$("tr[data-provider-id]")) if ((await row.getText()).includes("desktop-e2e-provider")) return true;
      return false;
    };
    await browser.waitUntil(async () => !(await liveRowsName()), {
      timeout: 15000,
      timeoutMsg: "the provider gone from the live table",
    });
    await session.stop();
  });

  test("the webview's WebSockets carry Origin tauri://localhost", async () => {
    // A stand-in server records the handshake's Origin (the gateway allows exactly this one).
    const server = createServer();
    const wss = new WebSocketServer({ server });
    const origins = [];
    wss.on("connection", (_ws, req) => origins.push(req.headers.origin));
    await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address();
    try {
      await browser.execute((port) => {
        new WebSocket(`ws://127.0.0.1:${port}/`);
      }, port);
      await waitFor(() => origins.length > 0, "the webview's WebSocket");
      assert.deepEqual(origins, ["tauri://localhost"]);
    } finally {
      wss.close();
      server.close();
    }
  });

  test("the control token round-trips through the unlocked keyring and the CLI authenticates with it", async () => {
    const endpoint = await invoke(browser, "control_endpoint");
    assert.equal(endpoint.value.url, `${info.address}/control`);
    const token = endpoint.value.token;
    assert.match(token, /^ctk-[A-Za-z0-9_-]{43}$/);
    assert.equal(info.controlTokenStore, "keyring");
    assert.ok(!existsSync(path.join(h.home, "control-token")), "no control-token file next to a keyring");
    assert.equal(await keyringLookup(`control-token:${h.home}`), token);
    assert.deepEqual(await invoke(browser, "secret_storage_notice"), { value: null });
    // The CLI finds it there.
    const list = await tap(h.env, ["pairing", "list", "--json"]);
    assert.equal(list.code, 0, list.stderr);
    assert.deepEqual(JSON.parse(list.stdout), []);
    const status = await tap(h.env, ["status", "--json"]);
    assert.equal(status.code, 0, status.stderr);
    assert.equal(JSON.parse(status.stdout).address, info.address);
  });

  test("the login item is switched through the app's bridge, and a later start leaves it off; quit is quick", async (t) => {
    assert.deepEqual(await invoke(browser, "get_autostart"), { value: true }, "on after the first run");
    assert.match(await readFile(autostartEntry(), "utf8"), /--hidden/);
    assert.deepEqual(await invoke(browser, "set_autostart", { on: false }), { value: null });
    assert.deepEqual(await invoke(browser, "get_autostart"), { value: false });
    assert.ok(!existsSync(autostartEntry()), "the entry is gone");

    // Quit (the session ends the app) after everything above, with a session open and a
    // provider bound to it that never acknowledges the session's end (a graceful stop would
    // wait SHUTDOWN_DEADLINE, 10 s, for it): the quit stays quick, and the keyring entry
    // leaves with the gateway.
    const stuckSession = await openSession(h.env, "quit-with-a-stuck-provider");
    const stuck = await tokenProvider(info.address, h.home, "never-acks", stuckSession.id);
    const quitMs = await session.stop();
    session = null;
    t.diagnostic(`quit after the whole panel walk: ${quitMs} ms`);
    assert.ok(quitMs !== null && quitMs < QUIT_BOUND_MS, `quit took ${quitMs} ms (bound ${QUIT_BOUND_MS} ms)`);
    stuck.close();
    await stuckSession.stop();
    await waitFor(async () => (await keyringLookup(`control-token:${h.home}`)) === null, "the keyring entry removed on quit");
    // A later start is not a first run: the user's choice stands.
    const app = await startApp(h.env);
    try {
      assert.ok(!existsSync(autostartEntry()), "not turned on again");
    } finally {
      const asked = performance.now();
      assert.equal(await app.stop(), 0);
      t.diagnostic(`quit of an idle app: ${Math.round(performance.now() - asked)} ms`);
    }
  });
});

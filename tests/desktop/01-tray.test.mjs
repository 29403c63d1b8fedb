// The app in the tray: no tray host, no display, starting hidden, the login item, the
// tray menu, the panel window (made when opened, destroyed when closed), a second launch,
// Quit.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { gatewayJson, openSession, tapBin } from "../js-support/gateway.mjs";
import { remove, start, stopChild } from "../js-support/process.mjs";
import { waitFor } from "../js-support/wait.mjs";
import {
  SCRATCH,
  SCREENSHOTS,
  appBin,
  closeNotifications,
  closeWindow,
  descendants,
  freshHome,
  mapState,
  monitorNotifications,
  renderedShot,
  screenshotX,
  startApp,
  startTrayer,
  tap,
  trayIconWindow,
  trayMenu,
  windowId,
  windowTree,
} from "./support.mjs";

const PANEL = "Tap Gateway";

/** `tap status --json` against `env`'s gateway, parsed; asserts success. */
async function status(env) {
  const r = await tap(env, ["status", "--json"]);
  assert.equal(r.code, 0, `tap status failed: ${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** A picture of the panel window once it shows a rendered page. */
async function renderedPanelShot(file) {
  const id = await windowId(PANEL);
  assert.ok(id, "the panel window exists");
  return renderedShot(file, id);
}

describe("without a tray host or a display", () => {
  test("with no tray host (a bare X server) the app serves and quits cleanly", async () => {
    assert.doesNotMatch(await windowTree(), /"trayer"/, "no tray host runs yet");
    const h = await freshHome("bare-x");
    const app = await startApp(h.env);
    try {
      assert.equal((await status(h.env)).address, app.info.address);
      // The tray icon falls back to a plain status window; the app does not crash.
      await trayIconWindow();
      assert.equal(app.child.exitCode, null, "still running");
    } finally {
      assert.equal(await app.stop(), 0, app.output.stderr);
    }
    assert.ok(!existsSync(path.join(h.home, "gateway.json")), "gateway.json removed on quit");
    await remove(h.dir);
  });

  test("a start refused (another gateway runs for this TAP_HOME) exits 2 and says why, also in a notification", async () => {
    const h = await freshHome("refused");
    const monitor = await monitorNotifications();
    const { child: gateway, output: gatewayOut } = start(tapBin(), ["gateway", "--listen", "127.0.0.1:0"], { env: h.env }, "tap gateway");
    try {
      const info = await gatewayJson(h.home, gateway.pid);
      const app = await startApp(h.env, [], { waitForGateway: false });
      assert.equal(await app.output.exited, 2, app.output.stderr);
      const why = `another Tap gateway is already running for ${h.home} at ${info.address.replace("ws://", "")}`;
      assert.ok(app.output.stderr.includes(why), app.output.stderr);
      await waitFor(() => monitor.text().includes('string "Tap Gateway could not start"'), "the Notify call");
      assert.ok(monitor.text().includes(why), monitor.text());
      // The running gateway is untouched.
      assert.equal((await status(h.env)).address, info.address);
    } finally {
      await stopChild(gateway, gatewayOut, "SIGINT");
      await monitor.stop();
    }
    await remove(h.dir);
  });

  test("with no display at all the app runs the gateway headless", async () => {
    const h = await freshHome("no-display");
    delete h.env.DISPLAY;
    delete h.env.WAYLAND_DISPLAY;
    const app = await startApp(h.env);
    try {
      assert.equal((await status(h.env)).address, app.info.address);
      assert.match(app.output.stderr, /no display .*running the gateway without tray or windows/);
    } finally {
      assert.equal(await app.stop(), 0, app.output.stderr);
    }
    assert.ok(!existsSync(path.join(h.home, "gateway.json")));
    await remove(h.dir);
  });
});

describe("in the tray (trayer)", () => {
  let trayer, h, app;

  before(async () => {
    trayer = await startTrayer();
    h = await freshHome("tray");
    app = await startApp(h.env);
  });

  after(async () => {
    if (app) await app.stop();
    await trayer?.stop();
    if (h) await remove(h.dir);
  });

  test("it starts hidden: its icon is embedded in the tray and no panel window is shown", async () => {
    const icon = await trayIconWindow();
    // Embedded: the icon window is a child of trayer's panel, not a top-level window.
    const tree = await windowTree();
    const panelLine = tree.split("\n").findIndex((l) => / "panel": \("panel" "trayer"\)/.test(l));
    const iconLine = tree.split("\n").findIndex((l) => l.includes(icon));
    assert.ok(panelLine >= 0 && iconLine > panelLine, `icon ${icon} under trayer's panel:\n${tree}`);
    const indent = (i) => tree.split("\n")[i].search(/\S/);
    assert.ok(indent(iconLine) > indent(panelLine), "the icon is nested in the panel");
    // Hidden means no window at all: no panel, so no webview and no WebKit web process.
    assert.equal(await mapState(PANEL), null, "no panel window at start");
    const children = await descendants(app.child.pid);
    assert.ok(!children.some((n) => n.startsWith("WebKit")), `no WebKit process at start: ${children}`);
  });

  test("the first run writes the login item, launching the app with --hidden", async () => {
    const entry = path.join(process.env.HOME, ".config", "autostart", "tap-desktop.desktop");
    const text = await waitFor(() => readFile(entry, "utf8"), "the autostart entry");
    assert.match(text, /^\[Desktop Entry\]$/m);
    assert.match(text, new RegExp(`^Exec=${appBin().replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} --hidden$`, "m"));
    assert.ok(existsSync(path.join(h.home, "desktop-autostart-default-applied")), "the first-run marker");
  });

  test("the tray menu's Open panel shows the panel, and it renders", async () => {
    // An X capture takes whatever is on screen there: no notification may be up.
    await closeNotifications();
    await trayMenu(1, async (menu) => {
      await screenshotX(path.join(SCREENSHOTS, "desktop-tray-menu.png"), menu);
    });
    await waitFor(async () => (await mapState(PANEL)) === "IsViewable", "the panel to be shown");
    // Checked on screen, kept out of the docs (03 takes the docs' picture through WebDriver,
    // which a notification on top cannot spoil).
    const b = await renderedPanelShot(path.join(SCRATCH, "panel-rendered.png"));
    assert.ok(b.mean > 0.2 && b.sd > 0.03, `not blank: ${JSON.stringify(b)}`);
  });

  test("closing the panel destroys it and its web process; opening it again makes a new one", async () => {
    // `comm` is cut at 15 characters: "WebKitWebProces".
    const webProcesses = async () => (await descendants(app.child.pid)).filter((n) => n.startsWith("WebKitWebProc")).length;
    assert.ok((await webProcesses()) > 0, "the shown panel has a web process");
    assert.ok(await closeWindow(PANEL), "the panel window to close");
    await waitFor(async () => (await mapState(PANEL)) === null, "the panel window to be destroyed");
    await waitFor(async () => (await webProcesses()) === 0, "the panel's WebKitWebProcess to exit");
    assert.equal(app.child.exitCode, null, "the app runs on with no window");
    await closeNotifications();
    await trayMenu(1);
    await waitFor(async () => (await mapState(PANEL)) === "IsViewable", "the panel to be shown again");
    const b = await renderedPanelShot(path.join(SCRATCH, "panel-reopened.png"));
    assert.ok(b.mean > 0.2 && b.sd > 0.03, `not blank: ${JSON.stringify(b)}`);
    assert.match(app.output.stderr, /page rendered/, "the page reported its first render");
  });

  test("a second launch exits at once and shows the first instance's panel", async () => {
    // Start over with the panel hidden.
    assert.equal(await app.stop(), 0);
    app = await startApp(h.env);
    await trayIconWindow();
    assert.notEqual(await mapState(PANEL), "IsViewable");

    const launch = (args) => start(appBin(), args, { env: h.env }, "second").output.exited;
    // At login (--hidden), a second instance just leaves.
    assert.equal(await launch(["--hidden"]), 0);
    assert.notEqual(await mapState(PANEL), "IsViewable", "--hidden does not show the panel");
    // Launched by hand, it hands over to the first one, which shows its panel.
    assert.equal(await launch([]), 0);
    await waitFor(async () => (await mapState(PANEL)) === "IsViewable", "the first instance's panel");
    assert.match(app.output.stderr, /second instance started; showing the panel/);
    assert.equal(app.child.exitCode, null, "the first instance runs on");
  });

  test("Quit in the tray menu stops the gateway and exits 0", async () => {
    const running = app;
    // A live session: stopping ends it, and the events that causes reach the tray while
    // the main thread waits for the engine (this must not deadlock).
    const session = await openSession(h.env, "quit-test");
    // Open panel, Connect a client…, Start at login, Quit (the disabled lines are skipped).
    await trayMenu(4);
    assert.equal(await running.output.exited, 0, running.output.stderr);
    app = null;
    assert.match(running.output.stderr, /Quit chosen in the tray menu/);
    await session.stop();
    assert.ok(!existsSync(path.join(h.home, "gateway.json")), "gateway.json removed");
    assert.ok(!existsSync(path.join(h.home, "control-token")), "no control-token file left");
  });
});

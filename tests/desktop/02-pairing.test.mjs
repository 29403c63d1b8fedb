// A browser provider asks to pair: a desktop notification (observed on the session bus),
// the tray icon asks for attention, the popup opens by itself with the code, and it hides
// when the last request is resolved, wherever that happens.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import {
  SCREENSHOTS,
  freshHome,
  gatewayInfo,
  mapState,
  monitorNotifications,
  pairings,
  pairingProvider,
  remove,
  run,
  screenshotX,
  startTrayer,
  tap,
  trayIconWindow,
  trayMenu,
  waitFor,
  webdriverSession,
} from "./support.mjs";

const POPUP = "Tap — pairing requests";
const ORIGIN = "http://127.0.0.1:8765";

/** The mean red and blue (0..1) of the tray icon: idle is grey (r ≈ b), attention orange (r ≫ b). */
async function trayColour() {
  const file = path.join(process.env.TAP_DESKTOP_SCRATCH ?? "/tmp", "tray-icon.png");
  await screenshotX(file, await trayIconWindow());
  const r = await run("/usr/bin/convert", [file, "-format", "%[fx:mean.r] %[fx:mean.b]", "info:"]);
  const [red, blue] = r.stdout.trim().split(/\s+/).map(Number);
  return { red, blue };
}

/** Switches WebDriver to the popup window (a second webview of the app). */
async function toPopup(browser) {
  return waitFor(async () => {
    for (const handle of await browser.getWindowHandles()) {
      await browser.switchToWindow(handle);
      if ((await browser.getUrl()).includes("view=popup")) return handle;
    }
    return null;
  }, "the popup's webview");
}

describe("pairing from the tray", () => {
  let trayer, monitor, h, session, address;

  before(async () => {
    trayer = await startTrayer();
    monitor = await monitorNotifications();
    h = await freshHome("pairing");
    // Launched through WebDriver (hidden: no --show) so the popup's page can be read.
    session = await webdriverSession(h.env, []);
    address = (await gatewayInfo(h.home)).address;
    await trayIconWindow();
  });

  after(async () => {
    await session?.stop();
    await monitor?.stop();
    await trayer?.stop();
    if (h) await remove(h.dir);
  });

  test("a request notifies without the code, turns the tray orange and opens the popup with the code", async () => {
    const idle = await trayColour();
    assert.ok(Math.abs(idle.red - idle.blue) < 0.1, `idle icon is grey: ${JSON.stringify(idle)}`);
    assert.notEqual(await mapState(POPUP), "IsViewable");

    const provider = await pairingProvider(address, { origin: ORIGIN, name: "page-tools" });
    const [entry] = (await pairings(h.env)).filter((p) => p.state === "pending");
    assert.equal(entry.origin, ORIGIN);
    assert.match(entry.code, /^\d{6}$/);

    // The notification: app name, summary, body; never the code.
    const seen = await waitFor(() => monitor.text().includes(`string "Pairing request from ${ORIGIN}"`) && monitor.text(), "the Notify call");
    assert.match(seen, /string "Tap Gateway"/);
    assert.match(seen, /Open the Tap tray popup to see the code to type into the page/);
    assert.ok(!seen.includes(entry.code), "the code is not in the notification");

    await waitFor(async () => {
      const c = await trayColour();
      return c.red - c.blue > 0.2;
    }, "the tray icon's attention state");

    await waitFor(async () => (await mapState(POPUP)) === "IsViewable", "the popup window");
    const browser = session.browser;
    await toPopup(browser);
    const code = await browser.$('[data-testid="pairing-code"]');
    await code.waitForExist({ timeout: 15000 });
    assert.equal(await code.getAttribute("data-code"), entry.code);
    assert.equal(await (await browser.$('[data-testid="pairing-origin"]')).getText(), ORIGIN);
    // WebKit's own picture of the page: a notification on top of the window does not hide it.
    await browser.saveScreenshot(path.join(SCREENSHOTS, "desktop-popup.png"));

    // The popup hides itself (the desktop bridge's hideWindow); the tray menu's
    // "1 pairing request…" item brings it back.
    const hidden = await browser.executeAsync((done) => {
      window.__TAURI_INTERNALS__.invoke("hide_window").then(() => done(null), (e) => done(String(e)));
    });
    assert.equal(hidden, null);
    await waitFor(async () => (await mapState(POPUP)) !== "IsViewable", "the popup to hide itself");
    await trayMenu(2, (menu) => screenshotX(path.join(SCREENSHOTS, "desktop-tray-menu-pending.png"), menu));
    await waitFor(async () => (await mapState(POPUP)) === "IsViewable", "the popup from the tray menu");

    // Resolved elsewhere (the CLI denies it): the provider is refused and the popup hides.
    const denied = await tap(h.env, ["pairing", "deny", entry.id]);
    assert.equal(denied.code, 0, denied.stderr);
    await provider.closed;
    assert.equal(provider.inbox.at(-1).code, "AUTH_FAILED");
    await waitFor(async () => (await mapState(POPUP)) !== "IsViewable", "the popup to hide");
    await waitFor(async () => {
      const c = await trayColour();
      return Math.abs(c.red - c.blue) < 0.1;
    }, "the tray icon back to idle");
  });

  test("typing the code pairs the provider, and the popup hides again", async () => {
    const provider = await pairingProvider(address, { origin: ORIGIN, name: "page-tools-2" });
    await waitFor(async () => (await mapState(POPUP)) === "IsViewable", "the popup to open again");
    const browser = session.browser;
    await toPopup(browser);
    const code = await browser.$('[data-testid="pairing-code"]');
    await code.waitForExist({ timeout: 15000 });
    // The user reads the code in the popup and types it into the page.
    provider.confirm(await code.getAttribute("data-code"));
    const sessions = await waitFor(() => provider.inbox.find((m) => m.type === "sessions" || m.type === "error"), "the pairing's answer");
    assert.equal(sessions.type, "sessions", JSON.stringify(sessions));
    assert.match(sessions.token, /.+/);
    await waitFor(async () => (await mapState(POPUP)) !== "IsViewable", "the popup to hide");
    const [paired] = await pairings(h.env);
    assert.equal(paired.state, "paired");
    provider.close();
  });

  test("with notifications off in settings.json, a request opens the popup but shows no notification", async () => {
    await writeFile(path.join(h.home, "settings.json"), JSON.stringify({ port: 9400, notifications: false }));
    const before = monitor.text().split("member=Notify").length;
    const provider = await pairingProvider(address, { origin: "http://127.0.0.1:8766", name: "quiet" });
    await waitFor(async () => (await mapState(POPUP)) === "IsViewable", "the popup");
    // The app's log (tauri-driver passes the app's stderr through).
    const log = await waitFor(
      () => session.driverOutput.stderr.includes("notifications are off in Settings") && session.driverOutput.stderr,
      "the app's decision not to notify",
    );
    assert.match(log, /notification not shown: notifications are off in Settings/);
    assert.equal(monitor.text().split("member=Notify").length, before, "no Notify call");
    provider.close();
    await waitFor(async () => (await mapState(POPUP)) !== "IsViewable", "the popup to hide once the request is gone");
  });
});

// A browser provider asks to pair: the tray icon asks for attention, the popup opens by
// itself with the code (in the bottom right corner, away from where notification daemons
// draw, sized to its content), and it hides when the last request is resolved, wherever
// that happens. The popup is the notification: a desktop notification (observed on the
// session bus) comes only when the request is still pending after a while, here shortened
// to REMIND_MS through TAP_DESKTOP_NOTIFY_AFTER_MS.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { gatewayJson, pairings } from "../js-support/gateway.mjs";
import { remove, run } from "../js-support/process.mjs";
import { waitFor } from "../js-support/wait.mjs";
import {
  SCREENSHOTS,
  closeNotifications,
  freshHome,
  mapState,
  monitorNotifications,
  pairingProvider,
  saveWebviewScreenshot,
  screenshotX,
  startTrayer,
  tap,
  trayIconWindow,
  trayMenu,
  webdriverSession,
} from "./support.mjs";

const POPUP = "Tap — pairing requests";
const ORIGIN = "http://127.0.0.1:8765";
/** The app's reminder delay in these tests (the real one is popup::NOTIFY_AFTER, a minute). */
const REMIND_MS = 4000;
/** The Xvfb screen run.sh makes. */
const SCREEN = { width: 1280, height: 800 };

/** The popup window's geometry on the screen (xwininfo). */
async function popupGeometry() {
  const r = await run("xwininfo", ["-name", POPUP]);
  const n = (label) => Number(new RegExp(`${label}:\\s*(-?\\d+)`).exec(r.stdout)?.[1]);
  return { x: n("Absolute upper-left X"), y: n("Absolute upper-left Y"), width: n("Width"), height: n("Height") };
}

/** The popup's wanted height (its page reports it) and the window's height, once they agree. */
async function fittedHeight(browser) {
  return waitFor(async () => {
    const wanted = Number(await (await browser.$("main.popup")).getAttribute("data-wanted-height"));
    const { height } = await popupGeometry();
    // The window takes the wanted height within the app's bounds (never below 200 px).
    if (wanted > 0 && Math.abs(height - Math.max(wanted, 200)) <= 1) return { wanted, height };
    throw new Error(`wanted ${wanted} px, the window is ${height} px`); // shown on timeout
  }, "the popup window sized to its content");
}

/** The mean red and blue (0..1) of the tray icon: idle is grey (r ≈ b), attention orange (r ≫ b). */
async function trayColour() {
  const file = path.join(process.env.TAP_DESKTOP_SCRATCH ?? "/tmp", "tray-icon.png");
  // The icon's window is in the tree before the tray has mapped it, and X refuses to read an
  // unmapped window's image ("Resource temporarily unavailable"): retry until a capture works.
  await waitFor(async () => Boolean(await screenshotX(file, await trayIconWindow())), "a capture of the tray icon", 10000);
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
    h = await freshHome("pairing", { TAP_DESKTOP_NOTIFY_AFTER_MS: String(REMIND_MS) });
    // Launched through WebDriver (hidden: no --show) so the popup's page can be read.
    session = await webdriverSession(h.env, []);
    address = (await gatewayJson(h.home)).address;
    await trayIconWindow();
  });

  after(async () => {
    await session?.stop();
    await monitor?.stop();
    await trayer?.stop();
    if (h) await remove(h.dir);
  });

  test("a request turns the tray orange and opens the popup with the code; a notification only if it waits", async () => {
    const idle = await trayColour();
    assert.ok(Math.abs(idle.red - idle.blue) < 0.1, `idle icon is grey: ${JSON.stringify(idle)}`);
    assert.notEqual(await mapState(POPUP), "IsViewable");

    // Taken before the request exists, so the app's own clock for it starts later.
    const arrived = Date.now();
    const provider = await pairingProvider(address, { origin: ORIGIN, name: "page-tools" });
    const [entry] = (await pairings(h.env)).filter((p) => p.state === "pending");
    assert.equal(entry.origin, ORIGIN);
    assert.match(entry.code, /^\d{6}$/);

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
    // The popup is the notification: nothing on the bus while it shows the code.
    assert.ok(Date.now() - arrived < REMIND_MS, "checked before the reminder was due");
    assert.doesNotMatch(monitor.text(), /member=Notify/, "no notification over the shown popup");

    // Sized to one request, in the bottom right corner (notification daemons draw at the
    // top right; Linux's AppIndicator gives no tray position).
    const one = await fittedHeight(browser);
    const g = await popupGeometry();
    assert.ok(g.x + g.width <= SCREEN.width && g.x + g.width >= SCREEN.width - 40, `at the right edge: ${JSON.stringify(g)}`);
    assert.ok(g.y + g.height <= SCREEN.height && g.y + g.height >= SCREEN.height - 40, `at the bottom edge: ${JSON.stringify(g)}`);
    // WebKit's own picture of the page: a notification on top of the window does not hide it.
    // Taken once the webview itself has the new size: X resizes the window first, and a
    // picture taken before WebKit lays out again shows the old viewport and black below it.
    await waitFor(async () => {
      const inner = await browser.execute(() => window.innerHeight);
      if (Math.abs(inner - one.height) <= 1) return true;
      throw new Error(`the webview is ${inner} px, the window ${one.height} px`); // shown on timeout
    }, "the popup's webview laid out at the window's height");
    await saveWebviewScreenshot(browser, path.join(SCREENSHOTS, "desktop-popup.png"));

    // A second request: the window grows (up from its corner) and shows both.
    const second = await pairingProvider(address, { origin: "http://127.0.0.1:8769", name: "docs-helper" });
    await waitFor(async () => (await browser.$$("li.popup-request")).length === 2, "two requests in the popup");
    const two = await waitFor(async () => {
      const f = await fittedHeight(browser);
      return f.height > one.height ? f : null;
    }, "the popup to grow");
    const g2 = await popupGeometry();
    assert.ok(g2.y + g2.height >= SCREEN.height - 40 && g2.y + g2.height <= SCREEN.height, `still at the bottom: ${JSON.stringify(g2)}`);
    // Deny all and both Deny buttons inside the window (the page's own layout, in WebKit).
    const inView = await browser.execute(() =>
      [...document.querySelectorAll("main.popup button")]
        .filter((b) => /^(Deny|Deny all)$/.test(b.textContent.trim()))
        .map((b) => ({ label: b.textContent.trim(), inside: b.getBoundingClientRect().bottom <= innerHeight })),
    );
    assert.deepEqual(
      inView.filter((b) => b.inside).map((b) => b.label).sort(),
      ["Deny", "Deny", "Deny all"],
      `in a ${two.height} px window: ${JSON.stringify(inView)}`,
    );
    second.close();
    await waitFor(async () => (await browser.$$("li.popup-request")).length === 1, "the second request gone");

    // Still pending after the delay: one reminder, which never carries the code.
    const seen = await waitFor(() => monitor.text().includes(`string "Pairing request from ${ORIGIN}"`) && monitor.text(), "the reminder's Notify call", REMIND_MS + 20000);
    assert.ok(Date.now() - arrived >= REMIND_MS, "not before the delay");
    assert.match(seen, /string "Tap Gateway"/);
    assert.match(seen, /Open the Tap tray popup to see the code to type into the page/);
    assert.ok(!seen.includes(entry.code), "the code is not in the notification");

    // The popup closes itself (the desktop bridge's hideWindow); the tray menu's
    // "1 pairing request…" item brings it back. The window is destroyed, so the call's
    // answer may never reach the script: the window going away is the answer.
    await browser.execute(() => void window.__TAURI_INTERNALS__.invoke("hide_window")).catch(() => {});
    await waitFor(async () => (await mapState(POPUP)) === null, "the popup to close itself");
    // The reminder notification is up: close it before an X capture of the menu.
    await closeNotifications();
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

  test("with notifications off in settings.json, a request opens the popup and its reminder is not shown", async () => {
    await writeFile(path.join(h.home, "settings.json"), JSON.stringify({ port: 9400, notifications: false }));
    const before = monitor.text().split("member=Notify").length;
    const provider = await pairingProvider(address, { origin: "http://127.0.0.1:8766", name: "quiet" });
    await waitFor(async () => (await mapState(POPUP)) === "IsViewable", "the popup");
    // The app's log (tauri-driver passes the app's stderr through).
    const log = await waitFor(
      () => session.driverOutput.stderr.includes("notifications are off in Settings") && session.driverOutput.stderr,
      "the app's decision not to notify",
      REMIND_MS + 20000,
    );
    assert.match(log, /notification not shown: notifications are off in Settings/);
    assert.equal(monitor.text().split("member=Notify").length, before, "no Notify call");
    provider.close();
    await waitFor(async () => (await mapState(POPUP)) !== "IsViewable", "the popup to hide once the request is gone");
  });
});

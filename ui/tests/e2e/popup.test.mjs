// The tray popup view (`/?view=popup`): only the pending pairing requests, live, with the
// code in large digits, the origin, a countdown, a session picker, Deny and Deny all. In a
// browser it is logged in like the panel; with a stand-in for the desktop app's bridge
// (the Tauri IPC object transport.ts looks for) it hides its window when the last request
// goes, and "Open panel" asks the app, and the panel shows the app's secret-storage notice
// and its start-at-login switch.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { goTo } from "../../../tests/js-support/browser.mjs";
import { waitFor } from "../../../tests/js-support/wait.mjs";
import { launchBrowser, popupLoginUrl, screenshot, startGateway } from "./support.mjs";

/** A provider script (no Origin) asking to pair; resolves once the gateway prompted it. */
async function pairingRequest(gateway, name) {
  const ws = new WebSocket(`ws://${gateway.hostPort}/`);
  const frames = [];
  let closed = false;
  ws.addEventListener("message", (e) => frames.push(JSON.parse(String(e.data))));
  ws.addEventListener("close", () => (closed = true));
  await new Promise((r) => ws.addEventListener("open", r, { once: true }));
  ws.send(JSON.stringify({ type: "auth", mode: "pair", name }));
  await waitFor(() => frames.find((f) => f.type === "auth.pairing"), `${name}: auth.pairing`);
  return {
    frames,
    refused: () =>
      waitFor(() => closed && frames.find((f) => f.type === "error" && f.code === "AUTH_FAILED"), `${name} refused with AUTH_FAILED`),
  };
}

/** Opens `url` in a new page collecting errors and dialogs (there must be none). */
async function newPage(context, url) {
  const page = await context.newPage();
  page.errors = [];
  page.on("pageerror", (e) => page.errors.push(`page error: ${e.message}`));
  page.on("console", (m) => m.type() === "error" && page.errors.push(`console: ${m.text()}`));
  page.on("dialog", (d) => page.errors.push(`a ${d.type()} dialog`));
  await page.goto(url);
  return page;
}

describe("the popup view", () => {
  let gateway, session, browser, context, popup;

  before(async () => {
    gateway = await startGateway();
    session = await gateway.openSession("popup");
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 420, height: 640 } });
    popup = await newPage(context, await popupLoginUrl(gateway));
    await popup.getByText("No pending requests").waitFor();
    await popup.evaluate(() => (window.__notReloaded = true));
  });

  after(async () => {
    await browser?.close();
    await gateway?.stop();
  });

  test("a request appears live with its code, origin, countdown and session picker; Deny refuses it", async () => {
    assert.equal(new URL(popup.url()).search, "?view=popup", "still the popup after login");
    assert.equal(new URL(popup.url()).hash, "", "no login code left in the address bar");
    assert.equal(await popup.getByRole("navigation").count(), 0, "only the requests, no navigation");

    const provider = await pairingRequest(gateway, "script-tool");
    const request = popup.locator("li.popup-request");
    await request.waitFor();
    const [listed] = await gateway.pairings();
    const code = request.getByTestId("pairing-code");
    assert.equal(await code.getAttribute("data-code"), listed.code);
    const size = await code.locator(".digit").first().evaluate((el) => parseFloat(getComputedStyle(el).fontSize));
    assert.ok(size >= 28, `large digits (${size}px)`);
    assert.match(await request.getByTestId("pairing-countdown").innerText(), /expires in [45]:\d\d/);
    assert.equal(await request.getByTestId("pairing-origin").innerText(), "a local program (no origin)");
    assert.match(await request.innerText(), /script-tool/);
    const picker = request.getByRole("combobox", { name: /Session for/ });
    assert.match(await picker.locator("option:checked").innerText(), /Foreground session: popup/);
    await picker.selectOption(session.id);
    await waitFor(async () => (await gateway.pairings())[0].session === session.id, "the session choice reached the gateway");
    // Pictured as the desktop app shows it: the window as tall as the page asks.
    const viewport = popup.viewportSize();
    const wanted = Number(await popup.locator("main.popup").getAttribute("data-wanted-height"));
    await popup.setViewportSize({ width: viewport.width, height: wanted });
    await screenshot(popup, "popup");
    await popup.setViewportSize(viewport);

    await request.getByRole("button", { name: `Deny request ${listed.code}` }).click();
    await request.getByRole("button", { name: "Yes, deny" }).click();
    await provider.refused();
    await popup.getByText("No pending requests").waitFor();
    assert.deepEqual(await gateway.pairings(), []);
  });

  test("Deny all refuses every pending request", async () => {
    const a = await pairingRequest(gateway, "first");
    const b = await pairingRequest(gateway, "second");
    await waitFor(async () => (await popup.locator("li.popup-request").count()) === 2, "two requests");
    await popup.getByRole("button", { name: "Deny all" }).click();
    await popup.getByRole("button", { name: "Deny all" }).last().click();
    await a.refused();
    await b.refused();
    await popup.getByText("No pending requests").waitFor();
    assert.equal(await popup.evaluate(() => window.__notReloaded), true, "live, no reload");
    assert.deepEqual(popup.errors, []);
  });

  describe("with the desktop app's bridge", () => {
    let app;

    before(async () => {
      const token = (await readFile(path.join(gateway.env.TAP_HOME, "control-token"), "utf8")).trim();
      app = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      // What the Tauri webview injects before any page script, answering like the app.
      await app.addInitScript(
        ({ url, token }) => {
          window.__calls = [];
          let autostart = true;
          window.__TAURI_INTERNALS__ = {
            async invoke(command, args) {
              window.__calls.push(args ? `${command} ${JSON.stringify(args)}` : command);
              switch (command) {
                case "control_endpoint":
                  return { url, token };
                case "get_autostart":
                  return autostart;
                case "set_autostart":
                  autostart = args.on;
                  return null;
                case "secret_storage_notice":
                  return "No OS keyring is available: secrets are kept in files readable only by you.";
                default:
                  return null;
              }
            },
          };
        },
        { url: `ws://${gateway.hostPort}/control`, token },
      );
    });

    after(() => app?.close());

    const calls = (page) => page.evaluate(() => window.__calls);

    test("the popup hides its window when the last request is resolved elsewhere, and opens the panel", async () => {
      const page = await newPage(app, `${gateway.httpBase}/?view=popup`);
      await page.getByText("No pending requests").waitFor();
      const provider = await pairingRequest(gateway, "elsewhere");
      await page.locator("li.popup-request").waitFor();
      assert.ok(!(await calls(page)).includes("hide_window"), "not hidden while a request is pending");
      const [listed] = await gateway.pairings();
      const denied = await gateway.tap(["pairing", "deny", listed.id]);
      assert.equal(denied.code, 0, denied.stderr);
      await provider.refused();
      await page.getByText("No pending requests").waitFor();
      await waitFor(async () => (await calls(page)).includes("hide_window"), "hide_window");
      await page.getByRole("button", { name: "Open panel" }).click();
      await waitFor(async () => (await calls(page)).includes("open_panel"), "open_panel");
      assert.deepEqual(page.errors, []);
      await page.close();
    });

    test("the panel shows the secret-storage notice and drives start at login", async () => {
      const page = await newPage(app, `${gateway.httpBase}/`);
      await page.getByRole("status").filter({ hasText: "Live" }).waitFor();
      assert.match(await page.getByTestId("secret-storage-notice").innerText(), /No OS keyring is available/);
      await goTo(page, "Settings");
      const box = page.getByRole("checkbox", { name: /Start Tap when I log in/ });
      await waitFor(() => box.isEnabled(), "the switch is enabled in the app");
      assert.equal(await box.isChecked(), true);
      await box.uncheck();
      await waitFor(async () => (await calls(page)).includes('set_autostart {"on":false}'), "set_autostart");
      assert.equal(await box.isChecked(), false);
      assert.deepEqual(page.errors, []);
      await page.close();
    });
  });
});

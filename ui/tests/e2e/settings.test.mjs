// The Settings page against the real gateway: the port (saved to $TAP_HOME/settings.json,
// applies after restart), notifications, and start at login (a desktop-app setting,
// disabled in a browser). Everything through in-page controls, from the keyboard too.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { goTo, openPanel } from "../../../tests/js-support/browser.mjs";
import { waitFor } from "../../../tests/js-support/wait.mjs";
import { launchBrowser, panelInNewContext, screenshot, startGateway } from "./support.mjs";

describe("Settings", () => {
  let gateway, browser, context, panel, file;

  before(async () => {
    gateway = await startGateway();
    file = path.join(gateway.env.TAP_HOME, "settings.json");
    browser = await launchBrowser();
    ({ context, panel } = await panelInNewContext(browser, gateway));
    panel.on("dialog", (d) => panel.errors.push(`unexpected ${d.type()} dialog`));
  });

  after(async () => {
    await browser?.close();
    await gateway?.stop();
  });

  const saved = async () => JSON.parse(await readFile(file, "utf8"));
  const runningPort = () => Number(gateway.hostPort.split(":")[1]);

  test("Settings shows where the token and state files are (they moved there from the Overview)", async () => {
    const home = gateway.env.TAP_HOME;
    await goTo(panel, "Settings");
    const files = panel.getByRole("table", { name: "Token and state files" });
    const row = (label) => files.locator(`td[data-file="${label}"]`);
    assert.equal(await row("Provider token").innerText(), path.join(home, "provider-token"));
    assert.equal(await row("Provider token (Copilot)").innerText(), path.join(gateway.env.COPILOT_HOME, "extensions", "tap", ".provider-token"));
    assert.equal(await row("Session-host token").innerText(), path.join(home, "host-token"));
    assert.equal(await row("Control token").innerText(), path.join(home, "control-token"));
    assert.equal(await row("Settings").innerText(), file);
    assert.match(await panel.getByText(/readable only by you/).innerText(), new RegExp(home.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")));
  });

  test("the defaults show, with the port the gateway runs on and 'applies after restart'", async () => {
    await goTo(panel, "Settings");
    const port = panel.getByRole("spinbutton", { name: /port/ });
    assert.equal(await port.inputValue(), "9400");
    const help = await panel.locator("#port-help").innerText();
    assert.match(help, /Applies after restart/);
    assert.match(help, new RegExp(`port ${runningPort()} until`));
    assert.equal(await panel.getByRole("checkbox", { name: /notifications/ }).isChecked(), true);
    assert.match(await panel.getByText(/Saved in/).innerText(), /settings\.json/);
  });

  test("a new port is saved to settings.json and needs a restart", async () => {
    const port = panel.getByRole("spinbutton", { name: /port/ });
    const save = panel.getByRole("button", { name: "Save port" });
    await port.fill("0");
    assert.equal(await save.isDisabled(), true, "port 0 cannot be saved");
    await panel.getByText("A port is a number from 1 to 65535.").waitFor();
    await port.fill("9555");
    // From the keyboard: Enter submits the form.
    await port.press("Enter");
    await waitFor(async () => (await panel.getByTestId("settings-saved").innerText()) === "Port saved.", "saved");
    assert.deepEqual(await saved(), { port: 9555, notifications: true, historyDays: 30, historyMaxMib: 1024 });
    assert.match(await panel.getByTestId("restart-required").innerText(), new RegExp(`9555 applies after restart \\(now running on ${runningPort()}\\)`));
    assert.equal(await save.isDisabled(), true, "nothing left to save");
  });

  test("notifications switch off and on, saved at once", async () => {
    const box = panel.getByRole("checkbox", { name: /notifications/ });
    await box.uncheck();
    await waitFor(async () => (await saved()).notifications === false, "notifications off in settings.json");
    assert.equal(await box.isChecked(), false);
    await box.focus();
    await panel.keyboard.press("Space");
    await waitFor(async () => (await saved()).notifications === true, "notifications on again");
  });

  test("the history limits are checked in the page and saved to settings.json", async () => {
    const days = panel.getByRole("spinbutton", { name: /Keep history for/ });
    const mib = panel.getByRole("spinbutton", { name: /At most/ });
    const save = panel.getByRole("button", { name: "Save history limits" });
    assert.equal(await days.inputValue(), "30");
    assert.equal(await mib.inputValue(), "1024");
    assert.equal(await save.isDisabled(), true, "nothing to save yet");
    await days.fill("0");
    await panel.getByText("Days are a whole number from 1 to 3650.").waitFor();
    assert.equal(await save.isDisabled(), true, "0 days cannot be saved");
    await days.fill("7");
    await mib.fill("8");
    await panel.getByText("The size is a whole number of MiB from 16 to 1048576.").waitFor();
    assert.equal(await save.isDisabled(), true, "8 MiB cannot be saved");
    await mib.fill("64");
    await mib.press("Enter");
    await waitFor(async () => (await panel.getByTestId("settings-saved").innerText()) === "History limits saved.", "saved");
    const file = await saved();
    assert.equal(file.historyDays, 7);
    assert.equal(file.historyMaxMib, 64);
    assert.equal(await save.isDisabled(), true, "nothing left to save");
  });

  test("start at login is a desktop-app setting: shown, disabled, and says why", async () => {
    const box = panel.getByRole("checkbox", { name: /Start Tap when I log in/ });
    assert.equal(await box.isDisabled(), true);
    assert.match(await panel.getByTestId("autostart-help").innerText(), /desktop-app setting/);
    await screenshot(panel, "settings");
  });

  test("a change made elsewhere shows up live", async () => {
    const other = await openPanel(context, gateway);
    await goTo(other, "Settings");
    const port = other.getByRole("spinbutton", { name: /port/ });
    await port.fill("9600");
    await other.getByRole("button", { name: "Save port" }).click();
    await waitFor(async () => (await panel.getByRole("spinbutton", { name: /port/ }).inputValue()) === "9600", "the first panel follows");
    assert.equal((await saved()).port, 9600);
    await other.close();
  });

  test("no dialog was opened and nothing was logged as an error", async () => {
    assert.deepEqual(panel.errors, []);
  });
});

// A profile's "Also ask approvals in the client" toggle on the Clients page (issue 39,
// docs/approvals.md "Answering in the client"), against a real gateway: off for a profile
// made without it, with words saying what it does and why it is off; turned on and saved, the
// real `tap profiles --json` and profiles.json have `approvalsInClient: true` and the page
// reads it back after a reload; turned off and saved, the key leaves the file (what `tap
// profiles set` without the flag writes). Set from the command line, the open page shows it
// on without a reload (status.changed), and saving another change keeps it.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { openPanel } from "../../../tests/js-support/browser.mjs";
import { waitFor } from "../../../tests/js-support/wait.mjs";
import { launchBrowser, startGateway } from "./support.mjs";

describe("a profile's approvals-in-client toggle", () => {
  let gateway, browser, panel;

  /** The profile `coding` as `tap profiles --json` gives it. */
  const coding = async () => {
    const r = await gateway.tap(["profiles", "--json"]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    return JSON.parse(r.stdout).profiles.find((p) => p.name === "coding");
  };
  const inFile = () => JSON.parse(readFileSync(path.join(gateway.tapHome, "profiles.json"), "utf8")).profiles.coding;
  const toggle = () => panel.getByRole("checkbox", { name: "Also ask approvals in the client that made the call" });
  const editor = () => panel.locator('section.profile-editor[data-editing="coding"]');
  const save = async () => {
    await editor().getByRole("button", { name: "Save" }).click();
    await waitFor(async () => !/unsaved/.test(await panel.getByTestId("profile-total").innerText()), "saved");
  };

  before(async () => {
    gateway = await startGateway();
    const r = await gateway.tap(["profiles", "set", "coding", "--description", "for the editor"]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
    panel = await openPanel(context, gateway);
  });

  after(async () => {
    await browser?.close();
    await gateway?.stop();
  });

  test("off by default, saying what it does and why it is off", async () => {
    await panel.evaluate(() => (location.hash = "#/clients/coding"));
    await editor().waitFor();
    assert.equal(await toggle().isChecked(), false);
    assert.equal((await coding()).def.approvalsInClient, undefined);
    const help = await panel.getByTestId("approvals-in-client-help").innerText();
    assert.match(help, /shown as a form in the MCP client that made them/);
    assert.match(help, /Off by default: the gateway cannot tell your answer from the client's/);
    assert.match(help, /would approve every call/);
    assert.equal(await toggle().getAttribute("aria-describedby"), "approvals-in-client-help");
  });

  test("turned on and saved: tap profiles --json and the file have it; a reload reads it back", async () => {
    await toggle().check();
    assert.match(await panel.getByTestId("profile-total").innerText(), /unsaved/, "a change to save");
    await save();
    const saved = await coding();
    assert.equal(saved.def.approvalsInClient, true);
    assert.equal(saved.def.description, "for the editor", "the rest kept");
    assert.equal(inFile().approvalsInClient, true);
    await panel.reload();
    await panel.getByRole("status").filter({ hasText: "Live" }).waitFor();
    await editor().waitFor();
    assert.equal(await toggle().isChecked(), true);
  });

  test("turned off and saved: the key leaves the file", async () => {
    await toggle().uncheck();
    await save();
    assert.equal((await coding()).def.approvalsInClient, undefined);
    assert.equal("approvalsInClient" in inFile(), false);
  });

  test("set from the command line: shown without a reload, and kept when another change is saved", async () => {
    const r = await gateway.tap(["profiles", "set", "coding", "--description", "for the editor", "--approvals-in-client"]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    await waitFor(() => toggle().isChecked(), "the toggle on, from status.changed");
    await editor().getByRole("textbox", { name: "Description" }).fill("for the editor, asked there");
    await save();
    const saved = await coding();
    assert.equal(saved.def.approvalsInClient, true);
    assert.equal(saved.def.description, "for the editor, asked there");
    assert.deepEqual(panel.errors, []);
  });
});

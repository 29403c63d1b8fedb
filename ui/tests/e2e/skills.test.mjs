// The Clients page's Skills section (`skills.list`) against a real `tap gateway` whose
// COPILOT_HOME is a temporary directory: the four skills in the gateway's order, each an MCP
// prompt, not yet installed for the Copilot CLI; connecting the Copilot CLI from the page
// installs them (its diff shows them, the files appear, the section turns "installed" on the
// gateway's status.changed); a skill the user replaces with their own file shows as theirs.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { goTo, openPanel } from "../../../tests/js-support/browser.mjs";
import { remove, tempDir } from "../../../tests/js-support/process.mjs";
import { waitFor } from "../../../tests/js-support/wait.mjs";
import { launchBrowser, startGateway } from "./support.mjs";

const SKILLS = ["tap-goal", "tap-loop", "tap-monitor", "tap-orchestrate"];

describe("the Clients page's Skills section", () => {
  let dir, gateway, browser, panel;
  const skillFile = (name) => path.join(gateway.copilotHome, "skills", name, "SKILL.md");
  /** The section's rows: skill → the Copilot CLI's pill text. */
  const rows = () =>
    panel.locator("table.skill-rows tbody tr").evaluateAll((trs) =>
      trs.map((tr) => [tr.dataset.skill, tr.querySelector('[data-client="copilot"] .pill')?.textContent ?? null]),
    );
  const showing = async (want, what) => {
    await waitFor(async () => JSON.stringify(await rows()) === JSON.stringify(want), `${what}: ${JSON.stringify(want)}`);
  };

  before(async () => {
    dir = tempDir("tap-e2e-skills-");
    gateway = await startGateway({ ownHome: true, dir });
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    panel = await openPanel(context, gateway);
    await goTo(panel, "Clients");
  });

  after(async () => {
    await browser?.close();
    await gateway?.stop();
    if (dir) remove(dir);
  });

  test("four skills, each an MCP prompt, not yet the Copilot CLI's", async () => {
    await showing(SKILLS.map((s) => [s, "not installed"]), "at start");
    const monitor = panel.locator('tr[data-skill="tap-monitor"]');
    const text = await monitor.innerText();
    assert.match(text, /MCP prompt tap-monitor/);
    assert.match(text, /REVIEW RECORD/, "the skill's own description");
  });

  test("connecting the Copilot CLI installs them; a file of the user's shows as theirs", async () => {
    const copilot = panel.locator('li.client-row[data-client="copilot"]');
    await copilot.getByRole("button", { name: "Connect GitHub Copilot CLI", exact: true }).click();
    const diff = await copilot.getByTestId("client-diff").innerText();
    assert.ok(diff.includes("+name: tap-orchestrate"), diff);
    assert.ok(!existsSync(skillFile("tap-goal")), "nothing written before Write the change");
    await copilot.getByRole("button", { name: "Write the change", exact: true }).click();
    await showing(SKILLS.map((s) => [s, "installed"]), "after connecting");
    for (const s of SKILLS) assert.match(readFileSync(skillFile(s), "utf8"), new RegExp(`^---\\nname: ${s}\\n`));

    writeFileSync(skillFile("tap-loop"), "---\nname: tap-loop\ndescription: my own loop\n---\nloop\n");
    await panel.reload();
    await showing(SKILLS.map((s) => [s, s === "tap-loop" ? "yours" : "installed"]), "after the user's edit");
    const title = await panel.locator('tr[data-skill="tap-loop"] [data-client="copilot"]').getAttribute("title");
    assert.equal(title, `${skillFile("tap-loop")}: a file tap did not write is there: the agent gets that one`);
  });
});

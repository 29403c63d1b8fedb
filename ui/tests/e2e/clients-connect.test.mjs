// The Clients page connecting real clients' files, against a real `tap gateway` whose HOME
// and XDG_CONFIG_HOME are a temporary directory holding realistic configurations: Cursor's
// mcp.json with another server, VS Code's JSONC with comments and trailing commas, Claude
// Code's ~/.claude.json whose `tap` entry launches another tap (drifted), Windsurf's file
// broken. Connect shows the diff first and writes only when asked: the file then holds the
// entry and everything it held; Disconnect gives the same bytes back; the drifted entry is
// repaired; a file broken between the diff and the write is refused with its reason, and
// left alone; the Copilot CLI is connected (tap's extension, with a profile) and disconnected. At each step the page's states are those of `tap connect --json` for the
// same HOME. A client's live session links to the Sessions page. Saves clients-connect.png
// (the repair's diff, 1100x900).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import path from "node:path";
import { goTo, openPanel } from "../../../tests/js-support/browser.mjs";
import { remove, tempDir } from "../../../tests/js-support/process.mjs";
import { waitFor } from "../../../tests/js-support/wait.mjs";
import { launchBrowser, screenshot, startGateway } from "./support.mjs";

const CURSOR = `{
  "mcpServers": {
    "github": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": { "GITHUB_TOKEN": "ghp_example" } }
  }
}
`;

const VSCODE = `// Servers for every workspace
{
  "servers": {
    // fetches pages for the agent
    "fetch": { "type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"] },
  },
  "inputs": [],
}
`;

const OLD_TAP = "/opt/tap-0.0.9/bin/tap";

describe("connecting clients from the Clients page", () => {
  let dir, home, xdg, gateway, browser, panel;
  const tap = realpathSync(process.env.TAP_BIN);
  const file = {
    cursor: () => path.join(home, ".cursor/mcp.json"),
    vscode: () => path.join(xdg, "Code/User/mcp.json"),
    claude: () => path.join(home, ".claude.json"),
    windsurf: () => path.join(home, ".codeium/windsurf/mcp_config.json"),
    gemini: () => path.join(home, ".gemini/settings.json"),
  };
  const write = (p, text) => {
    mkdirSync(path.dirname(p), { recursive: true });
    writeFileSync(p, text);
  };
  const row = (id) => panel.locator(`li.client-row[data-client="${id}"]`);
  /** `tap connect --json` with the gateway's environment (same HOME): client → state. */
  const cliStates = async () => {
    const r = await gateway.tap(["connect", "--json"]);
    assert.equal(r.code, 0, `tap connect --json: ${r.stdout}${r.stderr}`);
    return Object.fromEntries(JSON.parse(r.stdout).map((c) => [c.client, { state: c.state, profile: c.profile ?? null }]));
  };
  /** The page's rows: client → state (and the profile its entry names). */
  const pageStates = async () =>
    Object.fromEntries(
      await panel.locator("li.client-row").evaluateAll((els) =>
        els.map((e) => [e.dataset.client, { state: e.dataset.state, profile: e.querySelector("[data-entry-profile]")?.dataset.entryProfile ?? null }]),
      ),
    );
  /** Waits until the page agrees with `tap connect --json` (the page refreshes on status.changed). */
  const agree = async (what) => {
    const cli = await cliStates();
    // In client order (the page folds the clients not found below the others).
    const sorted = (o) => JSON.stringify(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
    await waitFor(async () => sorted(await pageStates()) === sorted(cli), `${what}: the page shows ${JSON.stringify(cli)}`);
    return cli;
  };
  const backups = (p) => readdirSync(path.dirname(p)).filter((n) => n.startsWith(`${path.basename(p)}.tap-backup-`));

  before(async () => {
    dir = tempDir("tap-e2e-connect-");
    home = path.join(dir, "home");
    xdg = path.join(dir, "xdg");
    gateway = await startGateway({ ownHome: true, dir, env: { XDG_CONFIG_HOME: xdg, CODEX_HOME: path.join(dir, "home/.codex") } });
    write(file.cursor(), CURSOR);
    write(file.vscode(), VSCODE);
    write(file.claude(), JSON.stringify({ numStartups: 3, mcpServers: { tap: { type: "stdio", command: OLD_TAP, args: ["mcp", "--session", "claude-code"] } } }, null, 2));
    write(file.windsurf(), '{ "mcpServers": { "x": { "command": "y" } ');
    write(file.gemini(), '{ "theme": "Default" }\n');
    writeFileSync(path.join(gateway.tapHome, "profiles.json"), JSON.stringify({ profiles: { review: { servers: ["github"] } } }));
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    panel = await openPanel(context, gateway);
    await goTo(panel, "Clients");
  });

  after(async () => {
    await browser?.close();
    await gateway?.stop();
    if (dir) remove(dir);
  });

  test("every client with the state tap connect gives it, the drifted one with why", async () => {
    const cli = await agree("at start");
    assert.equal(cli.cursor.state, "installed");
    assert.equal(cli.vscode.state, "installed");
    assert.equal(cli["claude-code"].state, "drifted");
    assert.equal(cli.windsurf.state, "invalid");
    assert.match(await row("claude-code").innerText(), new RegExp(`it launches ${OLD_TAP}, not this tap`));
    assert.match(await row("windsurf").innerText(), /not valid JSON at line 1/);
    assert.equal(await row("windsurf").getByRole("button", { name: /^Connect/ }).count(), 0, "a broken file offers no Connect");
    assert.match(await row("cursor").innerText(), new RegExp(file.cursor().replaceAll(".", "\\.")));
    // The Copilot CLI (its COPILOT_HOME is the gateway's): its command and its Connect.
    const copilot = row("copilot");
    assert.equal(cli.copilot.state, "installed");
    assert.match(await copilot.innerText(), /tap connect copilot/);
    assert.equal(await copilot.getByRole("button", { name: "Connect GitHub Copilot CLI", exact: true }).count(), 1);
  });

  test("Connect shows the change, writes it when asked, and keeps the other server", async () => {
    const cursor = row("cursor");
    await cursor.getByRole("button", { name: "Connect Cursor", exact: true }).click();
    const diff = cursor.getByTestId("client-diff");
    await diff.waitFor();
    assert.match(await diff.innerText(), new RegExp(`\\+\\s+"command": "${tap.replaceAll("/", "\\/")}"`));
    assert.equal(readFileSync(file.cursor(), "utf8"), CURSOR, "nothing written before Write the change");
    await cursor.getByRole("button", { name: "Write the change", exact: true }).click();
    await cursor.getByRole("status").waitFor();
    assert.match(await cursor.getByRole("status").innerText(), /Connected Cursor: restart it.*The previous file is kept as/);
    const v = JSON.parse(readFileSync(file.cursor(), "utf8"));
    assert.deepEqual(v.mcpServers.tap, { command: tap, args: ["mcp", "--session", "cursor"] });
    assert.equal(v.mcpServers.github.env.GITHUB_TOKEN, "ghp_example");
    assert.equal(backups(file.cursor()).length, 1);
    const cli = await agree("after connecting Cursor");
    assert.equal(cli.cursor.state, "connected");
  });

  test("VS Code's JSONC keeps its comments, with the profile chosen in the row", async () => {
    const vscode = row("vscode");
    await vscode.getByRole("combobox", { name: "Profile for VS Code" }).selectOption("review");
    await vscode.getByRole("button", { name: "Connect VS Code", exact: true }).click();
    await vscode.getByTestId("client-diff").waitFor();
    assert.match(await vscode.getByTestId("client-diff").innerText(), /"--profile",\s*\n?\s*\+?\s*"review"/);
    await vscode.getByRole("button", { name: "Write the change", exact: true }).click();
    await vscode.getByRole("status").waitFor();
    const text = readFileSync(file.vscode(), "utf8");
    assert.ok(text.startsWith("// Servers for every workspace"), text);
    assert.ok(text.includes("// fetches pages for the agent"), text);
    assert.ok(text.includes('"--profile"') && text.includes('"review"'), text);
    const cli = await agree("after connecting VS Code");
    assert.deepEqual(cli.vscode, { state: "connected", profile: "review" });
    // Its profile links to the profile's editor, with each tool and its cost.
    await vscode.locator('[data-entry-profile="review"]').click();
    await panel.locator('section.profile-editor[data-editing="review"]').waitFor();
    assert.match(panel.url(), /#\/clients\/review$/);
  });

  test("a drifted entry shows Repair, which points it at this tap", async () => {
    const claude = row("claude-code");
    await claude.getByRole("button", { name: "Repair Claude Code", exact: true }).click();
    const diff = await claude.getByTestId("client-diff").innerText();
    assert.ok(diff.includes(`-      "command": "${OLD_TAP}"`) && diff.includes(`+      "command": "${tap}"`), diff);
    await screenshot(panel, "clients-connect");
    await claude.getByRole("button", { name: "Write the change", exact: true }).click();
    await claude.getByRole("status").waitFor();
    const v = JSON.parse(readFileSync(file.claude(), "utf8"));
    assert.equal(v.mcpServers.tap.command, tap);
    assert.equal(v.numStartups, 3);
    const cli = await agree("after the repair");
    assert.equal(cli["claude-code"].state, "connected");
  });

  test("a file broken after the diff is refused with its reason and left alone", async () => {
    const gemini = row("gemini");
    await gemini.getByRole("button", { name: "Connect Gemini CLI", exact: true }).click();
    await gemini.getByTestId("client-diff").waitFor();
    const broken = '{ "theme": "Default", oops }\n';
    writeFileSync(file.gemini(), broken);
    await gemini.getByRole("button", { name: "Write the change", exact: true }).click();
    const alert = gemini.getByRole("alert");
    await alert.waitFor();
    assert.match(await alert.innerText(), /settings\.json cannot be changed: it is not valid JSON at line 1.*it was left as it is/);
    assert.equal(readFileSync(file.gemini(), "utf8"), broken);
    assert.equal(backups(file.gemini()).length, 0);
    await gemini.getByRole("button", { name: "Cancel", exact: true }).click();
  });

  test("the Copilot CLI connects through tap's extension, with the profile, and disconnects", async () => {
    const copilot = row("copilot");
    const extension = path.join(dir, "copilot/extensions/tap/extension.mjs");
    await copilot.getByRole("combobox", { name: "Profile for GitHub Copilot CLI" }).selectOption("review");
    await copilot.getByRole("button", { name: "Connect GitHub Copilot CLI", exact: true }).click();
    const diff = await copilot.getByTestId("client-diff").innerText();
    assert.ok(diff.includes('+const INSTALLED_PROFILE = "review";'), diff);
    assert.ok(diff.includes('"EXTENSIONS": true'), diff);
    assert.ok(!existsSync(extension), "nothing written before Write the change");
    await copilot.getByRole("button", { name: "Write the change", exact: true }).click();
    await copilot.getByRole("status").waitFor();
    assert.match(await copilot.getByRole("status").innerText(), /Connected GitHub Copilot CLI.*new Copilot CLI sessions connect/);
    assert.ok(readFileSync(extension, "utf8").includes('\nconst INSTALLED_PROFILE = "review";\n'));
    let cli = await agree("after connecting the Copilot CLI");
    assert.deepEqual(cli.copilot, { state: "connected", profile: "review" });

    await copilot.getByRole("button", { name: "Disconnect GitHub Copilot CLI", exact: true }).click();
    assert.match(await copilot.getByTestId("client-diff").innerText(), /-\/\/ tap-gateway copilot extension/);
    await copilot.getByRole("button", { name: "Remove the extension", exact: true }).click();
    await waitFor(() => !existsSync(extension), "the extension removed");
    cli = await agree("after disconnecting the Copilot CLI");
    assert.deepEqual(cli.copilot, { state: "installed", profile: null });
  });

  test("a client's live session links to the Sessions page", async () => {
    const session = await gateway.openSession("cursor");
    const link = row("cursor").locator(`a[data-session="${session.id}"]`);
    await link.waitFor();
    assert.equal(await link.innerText(), "live now");
    await link.click();
    await panel.getByRole("heading", { level: 1, name: "Sessions" }).waitFor();
    await panel.locator(`tr[data-session-id="${session.id}"][aria-current="true"]`).waitFor();
    await goTo(panel, "Clients");
  });

  test("Disconnect gives each file its bytes back", async () => {
    for (const [id, name, p, before] of [
      ["cursor", "Cursor", file.cursor(), CURSOR],
      ["vscode", "VS Code", file.vscode(), VSCODE],
    ]) {
      const r = row(id);
      await r.getByRole("button", { name: `Disconnect ${name}`, exact: true }).click();
      assert.match(await r.getByTestId("client-diff").innerText(), /-\s+"tap": \{/);
      await r.getByRole("button", { name: "Remove the entry", exact: true }).click();
      await waitFor(() => readFileSync(p, "utf8") === before, `${name}'s file as it was`);
      await waitFor(async () => (await r.getAttribute("data-state")) === "installed", `${name} installed again`);
    }
    const cli = await agree("after disconnecting");
    assert.equal(cli.cursor.state, "installed");
    assert.ok(existsSync(file.vscode()));
  });
});

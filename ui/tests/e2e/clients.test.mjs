// The Clients page against the real gateway with a real MCP stdio server: the gateway starts
// with a user `mcp.json` naming the fixture tests/mcp/servers/good.py and a session is open,
// so it offers good's five tools besides its own. The page shows every client with its
// `tap connect` command and a copy button (connecting from the page is
// clients-connect.test.mjs), and every tool's token cost as `profiles.list` counts it
// (read back with the real `tap profiles --json`). A profile made with New profile, one tool
// switched off with its toggle and saved, is what `tap profiles --json` then shows: that tool
// not visible, a lower total, the one the page showed. A profile made from the command line
// appears without a reload (status.changed, no polling); Delete removes one. A client token
// made in the page for `editor`, held to a profile, is shown once (`mtk-…`, with its HTTP
// entry), listed by `tap tokens list --json` without its value, opens an MCP session on the
// endpoint (a wrong token gets 401); revoked in the page it gets 401 too, and after a reload
// the token is nowhere in the page.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { goTo, openPanel } from "../../../tests/js-support/browser.mjs";
import { remove, tempDir } from "../../../tests/js-support/process.mjs";
import { waitFor } from "../../../tests/js-support/wait.mjs";
import { launchBrowser, recordFrames, screenshot, startGateway, watchIdle } from "./support.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const GOOD = path.resolve(here, "../../../tests/mcp/servers/good.py");
/** The Python the other MCP tests use (scripts/test.sh sets it), else `python3`. */
const PYTHON = process.env.TAP_TEST_PYTHON || "python3";
const SIZE = { width: 1100, height: 760 };
/** The tool the test's profile hides. */
const HIDDEN = "good__slow";

describe("the Clients page", () => {
  let dir, gateway, browser, context, panel, frames;

  /** `tap profiles --json` of the test's gateway, parsed. */
  const profiles = async () => {
    const r = await gateway.tap(["profiles", "--json"]);
    assert.equal(r.code, 0, `tap profiles --json: ${r.stdout}${r.stderr}`);
    return JSON.parse(r.stdout);
  };
  const tokensOf = async (locator) => Number(await locator.getAttribute("data-tokens"));
  const card = (name) => panel.locator(`li.profile-card[data-profile="${name}"]`);
  const total = () => panel.getByTestId("profile-total");
  /** `tap tokens list --json` of the test's gateway: its tokens, parsed. */
  const tokenList = async () => {
    const r = await gateway.tap(["tokens", "list", "--json"]);
    assert.equal(r.code, 0, `tap tokens list --json: ${r.stdout}${r.stderr}`);
    const parsed = JSON.parse(r.stdout);
    return { raw: r.stdout, tokens: Array.isArray(parsed) ? parsed : parsed.tokens };
  };
  /** An MCP `initialize` on the endpoint as client `editor` with `token`: the HTTP status. */
  const initialize = async (token) => {
    const r = await fetch(`${gateway.httpBase}/mcp/editor`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, Accept: "application/json, text/event-stream", "Content-Type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "clients-e2e", version: "1.0.0" } },
      }),
    });
    await r.body?.cancel();
    return r.status;
  };

  before(async () => {
    dir = tempDir("tap-e2e-clients-");
    mkdirSync(path.join(dir, "tap"));
    writeFileSync(path.join(dir, "tap", "mcp.json"), JSON.stringify({ mcpServers: { good: { command: PYTHON, args: [GOOD] } } }, null, 2));
    gateway = await startGateway({ ownHome: true, dir });
    // A user MCP server's tools are offered in live sessions: open one, wait for good's tools.
    await gateway.openSession("clients-e2e");
    await waitFor(async () => (await profiles()).tools.filter((t) => t.server === "good").length === 5, "good's five tools offered", 20000);
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: SIZE, colorScheme: "light" });
    await context.grantPermissions(["clipboard-read", "clipboard-write"]);
    frames = recordFrames(context);
    panel = await openPanel(context, gateway);
  });

  after(async () => {
    await browser?.close();
    await gateway?.stop();
    if (dir) remove(dir);
  });

  test("the connect commands, each with a copy button, and every tool's total", async () => {
    await goTo(panel, "Clients");
    const list = await profiles();
    const rows = panel.locator("section.connect li.client-row");
    await panel.getByRole("list", { name: "Clients" }).waitFor();
    const items = await rows.evaluateAll((els) => els.map((e) => e.dataset.client));
    assert.deepEqual(items.sort(), ["claude-code", "claude-desktop", "codex", "copilot", "cursor", "gemini", "opencode", "vscode", "windsurf", "zed"]);
    // The clients not found in this empty HOME are folded away, named in the summary.
    const absent = panel.locator("details.clients-absent");
    if ((await absent.count()) > 0) await absent.locator("summary").click();
    const commands = panel.locator("section.connect");
    // No profile selected: the plain command; Copy puts it on the clipboard.
    await commands.getByRole("button", { name: "Copy tap connect claude-code" }).click();
    assert.equal(await panel.evaluate(() => navigator.clipboard.readText()), "tap connect claude-code");
    await waitFor(async () => (await tokensOf(panel.getByTestId("profile-every").locator("[data-tokens]"))) === list.tokens, "every tool's total");
    assert.match(await panel.getByTestId("profile-every").innerText(), new RegExp(`${list.tools.length} tools`));
    assert.match(await panel.getByTestId("profiles-count").innerText(), /^0 profiles in .*profiles\.json · updated live/);
  });

  test("New profile checks the name, then makes one that sees every tool, each with the cost profiles.list gives", async () => {
    await panel.getByRole("button", { name: "New profile" }).click();
    const form = panel.getByRole("form", { name: "New profile" });
    await form.getByRole("textbox", { name: "Profile name" }).fill("no spaces!");
    await form.getByRole("button", { name: "Create" }).click();
    assert.match(await form.getByRole("alert").innerText(), /1 to 64 letters, digits/);
    assert.equal((await profiles()).profiles.length, 0, "nothing was written");
    await form.getByRole("textbox", { name: "Profile name" }).fill("web");
    await form.getByRole("textbox", { name: "Description" }).fill("The browser agent: no slow tools");
    await form.getByRole("button", { name: "Create" }).click();
    await panel.locator('section.profile-editor[data-editing="web"]').waitFor();
    assert.match(panel.url(), /#\/clients\/web$/);

    const list = await profiles();
    const web = list.profiles.find((p) => p.name === "web");
    assert.equal(web.def.description, "The browser agent: no slow tools");
    assert.equal(web.tokens, list.tokens, "a new profile sees every tool");
    // Each tool on the page, with the gateway's own count next to it.
    const shown = await panel.locator("li.tool-row").evaluateAll((els) =>
      els.map((e) => ({ name: e.dataset.tool, tokens: Number(e.querySelector(".tool-tokens").dataset.tokens) })),
    );
    assert.deepEqual(
      [...shown].sort((a, b) => a.name.localeCompare(b.name)),
      list.tools.map((t) => ({ name: t.name, tokens: t.tokens })).sort((a, b) => a.name.localeCompare(b.name)),
    );
    assert.equal(await tokensOf(total()), list.tokens);
    assert.equal(await tokensOf(card("web").locator("[data-tokens]")), list.tokens);
    // The commands now name the selected profile (Copilot's too: its extension carries it).
    const commands = panel.locator("section.connect");
    assert.match(await commands.locator('li[data-client="zed"]').innerText(), /tap connect zed --profile web/);
    assert.match(await commands.locator('li[data-client="copilot"]').innerText(), /tap connect copilot --profile web$/m);
  });

  test("toggles update the total at once; Save hides the tool for real", async () => {
    const list = await profiles();
    const cost = (name) => list.tools.find((t) => t.name === name).tokens;
    const gatewayOwn = list.tools.filter((t) => t.provider === "tap").reduce((n, t) => n + t.tokens, 0);

    // The server's toggle: only the gateway's own tools left; then back.
    await panel.getByRole("checkbox", { name: "Show server good" }).uncheck();
    assert.equal(await tokensOf(total()), gatewayOwn);
    assert.ok(await panel.getByRole("checkbox", { name: "Show good__echo" }).isDisabled(), "a server's tools follow its toggle");
    await panel.getByRole("button", { name: "Discard changes" }).click();
    assert.equal(await tokensOf(total()), list.tokens);

    await panel.getByRole("checkbox", { name: `Show ${HIDDEN}` }).uncheck();
    const expected = list.tokens - cost(HIDDEN);
    assert.equal(await tokensOf(total()), expected, "the estimate follows the toggle without asking the gateway");
    assert.match(await total().innerText(), /unsaved/);
    await panel.getByRole("button", { name: "Save" }).click();
    await waitFor(async () => !/unsaved/.test(await total().innerText()), "saved");

    const after = await profiles();
    const web = after.profiles.find((p) => p.name === "web");
    assert.ok(!web.visible.includes(HIDDEN), `${HIDDEN} is not visible`);
    assert.ok(web.visible.includes("good__echo"));
    assert.equal(web.visible.length, after.tools.length - 1);
    assert.ok(web.tokens < after.tokens, "a lower total");
    assert.equal(web.tokens, expected, "the total the page showed");
    assert.deepEqual(web.def.hideTools, [HIDDEN]);
    assert.deepEqual([web.def.servers ?? [], web.def.providers ?? []], [[], []], "every server and provider on: no list");
    const file = JSON.parse(readFileSync(path.join(gateway.tapHome, "profiles.json"), "utf8"));
    assert.deepEqual(file.profiles.web.hideTools, [HIDDEN]);
    await waitFor(async () => (await tokensOf(card("web").locator("[data-tokens]"))) === web.tokens, "the card's total");
    assert.equal(await tokensOf(total()), web.tokens);
    assert.equal(await panel.getByRole("checkbox", { name: `Show ${HIDDEN}` }).isChecked(), false, "the saved profile reads back as saved");
  });

  test("Clients get a search: the total is what such a client lists, Save writes the surface", async () => {
    const list = await profiles();
    const before = list.profiles.find((p) => p.name === "web");
    const own = list.tools.filter((t) => t.provider === "tap").reduce((n, t) => n + t.tokens, 0);
    const search = list.searchTools.reduce((n, t) => n + t.tokens, 0);
    assert.deepEqual(list.searchTools.map((t) => t.name).sort(), ["tap_call_tool", "tap_find_tools"]);

    await panel.getByLabel("Clients get").selectOption("search");
    assert.equal(await tokensOf(total()), own + search, "the gateway's own tools and the two search tools");
    assert.match(await panel.getByTestId("profile-full-tokens").innerText(), new RegExp(`${before.tokens.toLocaleString("en-US")} tokens`));
    await panel.getByRole("button", { name: "Save" }).click();
    await waitFor(async () => !/unsaved/.test(await total().innerText()), "saved");
    const web = (await profiles()).profiles.find((p) => p.name === "web");
    assert.equal(web.def.surface, "search");
    assert.equal(web.tokens, own + search, "the total the page showed");
    assert.equal(web.fullTokens, before.tokens);
    assert.deepEqual(web.visible, before.visible, "the same tools, found instead of listed");
    const file = JSON.parse(readFileSync(path.join(gateway.tapHome, "profiles.json"), "utf8"));
    assert.equal(file.profiles.web.surface, "search");

    // Back to every tool listed: the key leaves the file.
    await panel.getByLabel("Clients get").selectOption("tools");
    await panel.getByRole("button", { name: "Save" }).click();
    await waitFor(async () => !/unsaved/.test(await total().innerText()), "saved");
    const back = JSON.parse(readFileSync(path.join(gateway.tapHome, "profiles.json"), "utf8"));
    assert.equal(back.profiles.web.surface, undefined);
    assert.equal(await tokensOf(total()), before.tokens);
  });

  test("screenshots, light and dark", async () => {
    await panel.getByRole("checkbox", { name: "Show good__fails" }).uncheck(); // an unsaved change, as a user sees one
    // The profiles and the editor: the clients above them are clients-connect.png's.
    await panel.evaluate(() => {
      for (const d of document.querySelectorAll("details.clients-absent")) d.open = false;
      document.querySelector(".clients .section-head")?.scrollIntoView({ block: "start" });
    });
    await screenshot(panel, "clients");
    await panel.emulateMedia({ colorScheme: "dark" });
    await screenshot(panel, "clients-dark");
    await panel.emulateMedia({ colorScheme: "light" });
    await panel.getByRole("button", { name: "Discard changes" }).click();
  });

  test("it fits 800x600 without page-level horizontal scroll", async () => {
    await panel.setViewportSize({ width: 800, height: 600 });
    try {
      await panel.locator('section.profile-editor[data-editing="web"]').waitFor();
      const { scroll, client } = await panel.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
      assert.ok(scroll <= client, `the page is ${scroll}px wide in an ${client}px window`);
    } finally {
      await panel.setViewportSize(SIZE);
    }
  });

  test("a profile made from the command line appears without a reload, and nothing polls", async () => {
    const r = await gateway.tap(["profiles", "set", "cli-made", "--server", "good", "--hide-tool", "good__*"]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    await card("cli-made").waitFor();
    const made = (await profiles()).profiles.find((p) => p.name === "cli-made");
    assert.equal(await tokensOf(card("cli-made").locator("[data-tokens]")), made.tokens);
    const { sent } = await watchIdle(frames);
    assert.deepEqual(sent.filter((m) => m === "profiles.list"), []);
  });

  test("Delete asks first, then removes the profile", async () => {
    await card("web").getByRole("link", { name: "web" }).click();
    await panel.locator('section.profile-editor[data-editing="web"]').waitFor();
    await panel.getByRole("button", { name: "Delete" }).click();
    await panel.getByRole("button", { name: "Yes, delete" }).click();
    await waitFor(async () => (await card("web").count()) === 0, "web's card gone");
    assert.match(panel.url(), /#\/clients$/);
    assert.deepEqual((await profiles()).profiles.map((p) => p.name), ["cli-made"]);
    assert.deepEqual(panel.errors, []);
  });

  test("a client token made in the page is shown once, opens the MCP endpoint, and is revoked in the page", async () => {
    const section = panel.getByRole("region", { name: "Client tokens" });
    await section.getByTestId("tokens-empty").waitFor();
    const form = section.getByRole("form", { name: "New token" });
    const name = form.getByRole("textbox", { name: "Client name" });
    await name.fill("no spaces!");
    await form.getByRole("button", { name: "Create token" }).click();
    assert.match(await form.getByRole("alert").innerText(), /1 to 64 letters, digits/);
    assert.deepEqual((await tokenList()).tokens, [], "nothing was made");

    await name.fill("editor");
    await form.getByRole("combobox", { name: "Profile" }).selectOption("cli-made");
    await form.getByRole("button", { name: "Create token" }).click();
    const shown = section.getByTestId("token-created");
    await shown.waitFor();
    const token = (await shown.getByTestId("token-value").innerText()).trim();
    assert.match(token, /^mtk-\S+$/);
    assert.match(await shown.innerText(), /will not be shown again/);
    assert.deepEqual(JSON.parse(await shown.getByTestId("token-entry").innerText()), {
      type: "http",
      url: `${gateway.httpBase}/mcp/editor`,
      headers: { Authorization: `Bearer ${token}` },
    });
    await shown.getByRole("button", { name: "Copy token" }).click();
    assert.equal(await panel.evaluate(() => navigator.clipboard.readText()), token);
    const stored = await panel.evaluate(() => JSON.stringify([{ ...localStorage }, { ...sessionStorage }]));
    assert.ok(!stored.includes(token), "the token is in no storage");

    // The list: the page's row and `tap tokens list --json`, neither with the value.
    const row = section.locator('tr[data-client="editor"]');
    await row.waitFor();
    const { raw, tokens } = await tokenList();
    assert.equal(tokens.length, 1);
    assert.equal(tokens[0].client, "editor");
    assert.equal(tokens[0].profile, "cli-made");
    assert.equal(await row.getAttribute("data-token-id"), tokens[0].id);
    assert.ok(!raw.includes(token) && !raw.includes(token.slice(4)), "tap tokens list shows no value");
    assert.match(await row.innerText(), /cli-made/);
    assert.match(await row.innerText(), /just now/);
    assert.ok(!(await row.innerText()).includes(token));

    // The token opens a session on the MCP endpoint; another does not.
    assert.equal(await initialize(token), 200, "initialize with the client token");
    assert.equal(await initialize(`mtk-${"0".repeat(43)}`), 401, "initialize with a wrong token");

    // Readable at 800x600 with the token shown.
    await panel.setViewportSize({ width: 800, height: 600 });
    try {
      const { scroll, client } = await panel.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
      assert.ok(scroll <= client, `the page is ${scroll}px wide in an ${client}px window`);
    } finally {
      await panel.setViewportSize(SIZE);
    }

    // Dismissed, it is gone from the page.
    await shown.getByRole("button", { name: "Done, hide the token" }).click();
    await waitFor(async () => (await shown.count()) === 0, "the token box gone");
    assert.ok(!(await panel.content()).includes(token), "the token is not in the page once dismissed");

    // A token made from the command line appears without a reload; revoked there, it goes.
    const cli = await gateway.tap(["tokens", "create", "cli-client"]);
    assert.equal(cli.code, 0, cli.stdout + cli.stderr);
    await section.locator('tr[data-client="cli-client"]').waitFor();
    const cliId = (await tokenList()).tokens.find((t) => t.client === "cli-client").id;
    assert.equal((await gateway.tap(["tokens", "revoke", cliId])).code, 0);
    await waitFor(async () => (await section.locator('tr[data-client="cli-client"]').count()) === 0, "cli-client's row gone");

    // Revoke asks first; then the token is refused.
    await row.getByRole("button", { name: "Revoke" }).click();
    await row.getByRole("button", { name: "Yes, revoke" }).click();
    await section.getByTestId("tokens-empty").waitFor();
    assert.deepEqual((await tokenList()).tokens, []);
    assert.equal(await initialize(token), 401, "a revoked token is refused");

    // After a reload, the token is nowhere in the page.
    await panel.reload();
    await panel.getByRole("status").filter({ hasText: "Live" }).waitFor();
    await panel.getByRole("heading", { level: 1, name: "Clients" }).waitFor();
    await section.getByTestId("tokens-empty").waitFor();
    assert.ok(!(await panel.content()).includes(token), "the token is not in the page after a reload");
    assert.deepEqual(panel.errors, []);
  });
});

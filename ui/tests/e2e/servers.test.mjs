// The Servers page against the real gateway running a real MCP stdio server: the gateway
// starts with a user `mcp.json` naming the fixture tests/mcp/servers/good.py; the page shows
// it become ready with its tools (prefixed, e.g. `good__echo`), pid and stderr tail; the
// playground calls `good__echo` in a session it opens; the page restarts it from its button,
// and reloads mcp.json after a second server is added to the file. The page is refreshed by
// `status.changed` only, never on a timer. A server that exits at once (exits.py) is parked
// after its quick failures and called out on the Overview, with its last error and a link
// here.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { goTo, openPanel } from "../../../tests/js-support/browser.mjs";
import { remove, tempDir } from "../../../tests/js-support/process.mjs";
import { waitFor } from "../../../tests/js-support/wait.mjs";
import { launchBrowser, recordFrames, screenshot, startGateway, watchIdle } from "./support.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const GOOD = path.resolve(here, "../../../tests/mcp/servers/good.py");
const EXITS = path.resolve(here, "../../../tests/mcp/servers/exits.py");
/** The Python the other MCP tests use (scripts/test.sh sets it), else `python3`. */
const PYTHON = process.env.TAP_TEST_PYTHON || "python3";

describe("the Servers page", () => {
  let dir, gateway, browser, panel, frames, mcpJson;

  const writeServers = (servers) => writeFileSync(mcpJson, JSON.stringify({ mcpServers: servers }, null, 2));

  before(async () => {
    dir = tempDir("tap-e2e-servers-");
    mkdirSync(path.join(dir, "tap"));
    mcpJson = path.join(dir, "tap", "mcp.json");
    writeServers({ good: { command: PYTHON, args: [GOOD] } });
    gateway = await startGateway({ ownHome: true, dir });
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: "light" });
    frames = recordFrames(context);
    panel = await openPanel(context, gateway);
  });

  after(async () => {
    await browser?.close();
    await gateway?.stop();
    if (dir) remove(dir);
  });

  const row = (name) => panel.locator(`tr[data-server="${name}"]`);
  const state = (name) => row(name).getByTestId("server-state");

  test("good from mcp.json becomes ready with its tools, pid and stderr tail", async () => {
    await goTo(panel, "Servers");
    await waitFor(async () => (await row("good").count()) === 1 && (await state("good").innerText()) === "ready", "good ready", 20000);
    assert.match(await state("good").getAttribute("class"), /\bok\b/);
    assert.equal(await row("good").getByTestId("server-tool-count").innerText(), "5");
    assert.match(await row("good").innerText(), /stdio/);
    assert.match(await row("good").locator("td.num").first().innerText(), /^\d+$/, "a pid");
    assert.match(await row("good").getByTestId("server-memory").innerText(), /^\d+\.\d MiB$/, "its process's memory");
    await row("good").getByRole("button", { name: "Details of good" }).click();
    const details = panel.getByTestId("server-details");
    await details.getByText("good__echo").waitFor();
    await waitFor(async () => /good: ready/.test(await details.getByTestId("server-stderr").innerText()), "the stderr tail");
    assert.equal(await panel.getByTestId("servers-count").innerText(), "1 server · updated live");
    await screenshot(panel, "servers");
  });

  test("nothing is asked for while nothing changes (no polling)", async () => {
    const { sent } = await watchIdle(frames);
    assert.deepEqual(sent.filter((m) => m === "mcpServers.list"), []);
  });

  test("the playground calls good__echo in a session it opens: the MCP result, text block and all", async () => {
    await goTo(panel, "Playground");
    await panel.getByLabel("Session name").fill("mcp-check");
    await panel.getByRole("button", { name: "Open session" }).click();
    await panel.getByRole("list", { name: "Held sessions" }).getByRole("listitem").first().waitFor();
    await panel.getByRole("button", { name: /^good__echo/ }).click();
    await panel.locator("#pg-field-message").fill("hi");
    await panel.getByRole("button", { name: "Call good__echo" }).click();
    const call = panel.getByRole("list", { name: "Recent calls" }).getByRole("listitem").filter({ has: panel.locator(".pg-call-head") }).first();
    await call.locator(".pill.ok").waitFor({ timeout: 20000 });
    // The playground shows what the server answered (hosts get an all-text result as its text).
    const result = JSON.parse(await call.locator(".pg-result").innerText());
    assert.deepEqual(result.content, [{ type: "text", text: "hi" }]);
    await goTo(panel, "Servers");
  });

  test("a server's details ask for every tool of it in one click (a policy.json rule)", async () => {
    await row("good").getByRole("button", { name: "Details of good" }).click();
    const details = panel.getByTestId("server-details");
    await details.getByRole("button", { name: "Ask for every tool of good" }).click();
    await details.getByText("Every tool of good is asked before it runs").waitFor();
    const list = JSON.parse((await gateway.tap(["policy", "list", "--json"])).stdout);
    assert.deepEqual(list.rules.map((r) => [r.id, r.action, r.match.provider]), [["ask-good", "ask", "good"]]);
    // The rest of this file calls good's tools unasked.
    assert.equal((await gateway.tap(["policy", "remove", "ask-good"])).code, 0);
    await row("good").getByRole("button", { name: "Details of good" }).click();
  });

  test("Restart starts it again: a new process, ready again", async () => {
    const pidCell = () => row("good").locator("td.num").first();
    const before = await pidCell().innerText();
    await row("good").getByRole("button", { name: "Restart good" }).click();
    await waitFor(async () => (await state("good").innerText()) === "ready" && (await pidCell().innerText()) !== before, "good ready with a new pid", 20000);
    assert.equal(await panel.getByRole("alert").count(), 0);
  });

  test("Reload mcp.json picks up a server added to the file", async () => {
    writeServers({ good: { command: PYTHON, args: [GOOD] }, other: { command: PYTHON, args: [GOOD] } });
    await panel.getByRole("button", { name: "Reload mcp.json" }).click();
    await waitFor(async () => (await row("other").count()) === 1 && (await state("other").innerText()) === "ready", "other ready", 20000);
    assert.equal(await panel.getByTestId("servers-count").innerText(), "2 servers · updated live");
  });

  test("a server that keeps exiting is parked and the Overview calls it out", async () => {
    writeServers({ good: { command: PYTHON, args: [GOOD] }, other: { command: PYTHON, args: [GOOD] }, exits: { command: PYTHON, args: [EXITS] } });
    await panel.getByRole("button", { name: "Reload mcp.json" }).click();
    // Five quick failures with a doubling backoff from 0.5 s: parked after about 8 s.
    await waitFor(async () => (await row("exits").count()) === 1 && (await state("exits").innerText()) === "parked", "exits parked", 30000);
    assert.match(await state("exits").getAttribute("class"), /\bwarn\b/);
    assert.match(await row("exits").getByTestId("server-last-error").innerText(), /exit/);
    assert.equal(await row("exits").getByTestId("server-memory").innerText(), "—", "no process, no memory");

    await goTo(panel, "Overview");
    const attention = panel.getByTestId("overview-attention");
    await attention.waitFor();
    assert.deepEqual(await attention.locator("li[data-server]").evaluateAll((els) => els.map((e) => e.dataset.server)), ["exits"], "only the failing one");
    const item = attention.locator('li[data-server="exits"]');
    assert.match(await item.innerText(), /MCP server exits\s+parked/);
    assert.match(await item.locator(".error").innerText(), /exit/);
    await screenshot(panel, "overview-attention");
    await attention.getByRole("link", { name: "Servers" }).click();
    await row("exits").waitFor();
    assert.match(panel.url(), /#\/servers$/);
  });

  test("with no server left, the page says how to add one", async () => {
    writeServers({});
    await panel.getByRole("button", { name: "Reload mcp.json" }).click();
    const empty = panel.getByTestId("servers-empty");
    await empty.waitFor({ timeout: 20000 });
    assert.match(await empty.innerText(), /tap mcp add NAME -- COMMAND ARGS…/);
    assert.match(await empty.innerText(), /\$TAP_HOME\/mcp\.json/);
    // Nothing fails any more: the Overview has nothing to call out.
    await goTo(panel, "Overview");
    await panel.getByTestId("overview-sessions").waitFor();
    await waitFor(async () => (await panel.getByTestId("overview-attention").count()) === 0, "no attention block");
  });
});

// Live without polling, and activity per row (issue 42), against a real `tap gateway` running
// a real MCP stdio server (tests/mcp/servers/good.py) and fed by a provider over WebSocket
// whose `deploy` fails. In one page load (no reload, checked by a marker on `window`):
// - a session opened meanwhile appears on the Sessions page, a new tool call on the Traces
//   page, an MCP server's process killed from outside shows on the Servers page ready again
//   in a new process, and a rule set with `tap policy set` appears on the Approvals page —
//   each told by an event (`status.changed`, `traces.changed`, `policy.changed`);
// - the Providers and Servers rows (and a server's tools in its details) show the tool calls
//   the test made (counts checked against the ledger, `tap traces list --json`), a failed call
//   turns its row red as it happens, and a row's figures open the Traces page filtered to it;
//   the Clients row of Cursor shows the calls a real MCP client made as Cursor would;
// - an idle page asks for nothing.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { goTo, openPanel } from "../../../tests/js-support/browser.mjs";
import { remove, start, stopChild, tempDir, waitForOutput } from "../../../tests/js-support/process.mjs";
import { waitFor } from "../../../tests/js-support/wait.mjs";
import { providerToken, tokenHandshake, toolDef } from "../../../tests/js-support/gateway.mjs";
import { launchBrowser, recordFrames, startGateway, watchIdle } from "./support.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const GOOD = path.resolve(here, "../../../tests/mcp/servers/good.py");
const PY_CLIENT = path.resolve(here, "../../../tests/mcp/py_client.py");
/** The Python the other MCP tests use (scripts/test.sh sets it), else `python3`. */
const PYTHON = process.env.TAP_TEST_PYTHON || "python3";

/** A provider whose `run_build` works and whose `deploy` fails (a `tool.result` with an error). */
async function buildsProvider(gateway, session) {
  const ws = new WebSocket(`ws://${gateway.hostPort}/`);
  const inbox = [];
  ws.addEventListener("message", (e) => {
    const msg = JSON.parse(String(e.data));
    inbox.push(msg);
    if (msg.type !== "tool.call") return;
    const answer = msg.tool === "deploy" ? { error: "deploy failed: no target", errorCode: "TOOL_ERROR" } : { data: { built: msg.args ?? {} } };
    ws.send(JSON.stringify({ type: "tool.result", id: msg.id, ...answer }));
  });
  await new Promise((resolve, reject) => {
    ws.addEventListener("open", resolve, { once: true });
    ws.addEventListener("error", () => reject(new Error("builds: cannot connect")), { once: true });
  });
  await tokenHandshake(ws, inbox, await providerToken(gateway.env.TAP_HOME), {
    name: "builds",
    instance: "builds-1",
    session,
    tools: [toolDef("run_build", "Runs a build (e2e)"), toolDef("deploy", "Deploys, and fails (e2e)")],
  });
  return { close: () => ws.close() };
}

describe("live pages and activity per row", () => {
  let dir, gateway, session, provider, browser, panel, frames;

  before(async () => {
    dir = tempDir("tap-e2e-live-");
    mkdirSync(path.join(dir, "tap"));
    writeFileSync(path.join(dir, "tap", "mcp.json"), JSON.stringify({ mcpServers: { good: { command: PYTHON, args: [GOOD] } } }));
    gateway = await startGateway({ ownHome: true, dir });
    // Cursor is installed here (its file exists), so the Clients page lists it with figures.
    mkdirSync(path.join(gateway.env.HOME, ".cursor"));
    writeFileSync(path.join(gateway.env.HOME, ".cursor", "mcp.json"), JSON.stringify({ mcpServers: {} }));
    session = await gateway.openSession("live-e2e");
    provider = await buildsProvider(gateway, session.id);
    await waitFor(async () => (await servers()).find((s) => s.name === "good")?.state === "ready", "good ready", 20000);
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: "light" });
    frames = recordFrames(context);
    panel = await openPanel(context, gateway);
    await panel.evaluate(() => (window.__notReloaded = true));
  });

  after(async () => {
    provider?.close();
    await browser?.close();
    await gateway?.stop();
    if (dir) remove(dir);
  });

  async function servers() {
    return JSON.parse((await gateway.tap(["mcp", "list", "--json"])).stdout);
  }
  async function call(tool, args = {}) {
    const r = await gateway.tap(["call", "--session", session.id, tool, JSON.stringify(args)], 60000);
    return r.code;
  }
  /** Tool calls in the ledger per provider: { calls, errors }. */
  async function ledger() {
    const r = await gateway.tap(["traces", "list", "--name", "tool.call", "--since", "1h", "--limit", "1000", "--json"]);
    assert.equal(r.code, 0, r.stderr);
    const m = new Map();
    for (const t of JSON.parse(r.stdout)) {
      const e = m.get(t.provider ?? "") ?? { calls: 0, errors: 0 };
      e.calls++;
      if (t.status === "error") e.errors++;
      m.set(t.provider ?? "", e);
    }
    return m;
  }
  const notReloaded = async () => assert.equal(await panel.evaluate(() => window.__notReloaded), true, "the page was not reloaded");
  const told = async (kind) => waitFor(() => frames.events.includes(kind), `a ${kind} event`);

  test("a session opened while the Sessions page is shown appears in it", async () => {
    await goTo(panel, "Sessions");
    await panel.locator(`tr[data-session-id="${session.id}"]`).waitFor();
    const other = await gateway.openSession("arrived-live");
    await panel.locator(`tr[data-session-id="${other.id}"]`).waitFor();
    assert.match(await panel.locator(`tr[data-session-id="${other.id}"]`).innerText(), /arrived-live/);
    await other.stop();
    await told("status.changed");
    await notReloaded();
  });

  test("a tool call made while the Traces page is shown appears in it", async () => {
    await goTo(panel, "Traces");
    await panel.getByRole("combobox", { name: "Kind" }).selectOption("tool.call");
    const rows = panel.locator('[data-testid="traces-list"] tbody tr');
    // No tool call yet: the filtered list is empty (and no longer the unfiltered one).
    await panel.getByText("No trace matches these filters.").waitFor();
    assert.equal(await call("run_build", { n: 1 }), 0);
    await waitFor(async () => (await rows.count()) === 1, "the new call's trace", 10000);
    assert.match(await rows.first().innerText(), /run_build/);
    await told("traces.changed");
    await notReloaded();
  });

  test("an MCP server killed from outside shows on the Servers page, ready again in a new process", async () => {
    await goTo(panel, "Servers");
    const row = panel.locator('tr[data-server="good"]');
    const pidCell = row.locator("td.num").first();
    await waitFor(async () => /^\d+$/.test(await pidCell.innerText()), "good's pid");
    const pid = Number(await pidCell.innerText());
    const restarts = async () => Number((await servers()).find((s) => s.name === "good").restarts);
    const restartsBefore = await restarts();
    process.kill(pid, "SIGKILL");
    await waitFor(
      async () => (await row.getByTestId("server-state").innerText()) === "ready" && (await pidCell.innerText()) !== String(pid),
      "good ready in a new process",
      20000,
    );
    assert.equal(await restarts(), restartsBefore + 1);
    await notReloaded();
  });

  test("a rule set with `tap policy set` appears on the Approvals page (policy.changed)", async () => {
    await goTo(panel, "Approvals");
    const rule = panel.locator('[data-testid="rule"][data-id="live-e2e-rule"]');
    assert.equal(await rule.count(), 0);
    const set = await gateway.tap(["policy", "set", "live-e2e-rule", "--action", "allow", "--tool", "run_build"]);
    assert.equal(set.code, 0, set.stderr);
    await rule.waitFor();
    await told("policy.changed");
    const removed = await gateway.tap(["policy", "remove", "live-e2e-rule"]);
    assert.equal(removed.code, 0, removed.stderr);
    await waitFor(async () => (await rule.count()) === 0, "the rule gone");
    await notReloaded();
  });

  test("the Providers row shows the calls made; a failed call turns it red as it happens", async () => {
    for (const n of [2, 3]) assert.equal(await call("run_build", { n }), 0);
    await goTo(panel, "Providers");
    const cell = panel.locator("tr[data-provider-id]", { hasText: "builds" }).getByTestId("row-activity");
    const figures = async () => [Number(await cell.getAttribute("data-calls")), Number(await cell.getAttribute("data-errors"))];
    let want = (await ledger()).get("builds");
    assert.deepEqual(want, { calls: 3, errors: 0 }, "three builds in the ledger");
    await waitFor(async () => JSON.stringify(await figures()) === JSON.stringify([want.calls, want.errors]), "builds' figures as in the ledger");
    const row = panel.locator("tr[data-provider-id]", { hasText: "builds" });
    assert.doesNotMatch((await row.getAttribute("class")) ?? "", /row-failing/);
    assert.match(await cell.innerText(), /3 calls/);
    assert.match(await cell.innerText(), /p95 /);

    assert.notEqual(await call("deploy"), 0, "deploy fails");
    want = (await ledger()).get("builds");
    assert.deepEqual(want, { calls: 4, errors: 1 });
    const sentBefore = frames.sent.length;
    const eventsBefore = frames.events.length;
    await waitFor(async () => JSON.stringify(await figures()) === JSON.stringify([4, 1]), "the failure counted without a reload").catch(async (e) => {
      throw new Error(`${e.message}: shown ${await figures()}, asked [${frames.sent.slice(sentBefore)}] after [${frames.events.slice(eventsBefore)}]`);
    });
    assert.match(await row.getAttribute("class"), /row-failing/);
    assert.match(await cell.getByTestId("row-errors").innerText(), /1 error/);
    await notReloaded();

    // Its figures open its tool calls on the Traces page.
    await cell.getByRole("link").click();
    await waitFor(() => new URL(panel.url()).hash === "#/traces?kind=tool.call&provider=builds&range=1h", "the Traces page filtered to builds");
    await waitFor(async () => (await panel.locator('[data-testid="traces-list"] tbody tr').count()) === 4, "builds' four calls");
  });

  test("the Servers row shows the server's calls, as the ledger counts them", async () => {
    for (const message of ["a", "b"]) assert.equal(await call("good__echo", { message }), 0);
    await goTo(panel, "Servers");
    const want = (await ledger()).get("mcp-good");
    assert.deepEqual(want, { calls: 2, errors: 0 }, "good's calls are its provider mcp-good's");
    const cell = panel.locator('tr[data-server="good"]').getByTestId("row-activity");
    await waitFor(async () => (await cell.getAttribute("data-calls")) === "2", "good's two calls");
    assert.equal(await cell.getAttribute("data-errors"), "0");
    assert.equal(await cell.getByRole("link").getAttribute("href"), "#/traces?kind=tool.call&provider=mcp-good&range=1h");
    // Another window: the same calls over 24 hours, asked once for the table.
    const sent = frames.sent.length;
    const heard = frames.events.length;
    await panel.getByLabel("Activity over").selectOption("24h");
    // The link follows the choice at once; the figures when the 24 h answer is in.
    await waitFor(async () => (await cell.getByRole("link").getAttribute("href"))?.endsWith("range=24h"), "the 24 h window");
    await waitFor(async () => (await cell.getAttribute("data-calls")) === "2", "the same two calls over 24 h");
    // One query for the table, not one per row; a `traces.changed` from the calls above
    // may land meanwhile and ask again (each such event at most once).
    const queries = frames.sent.slice(sent).filter((m) => m === "activity.query").length;
    const refreshes = frames.events.slice(heard).filter((k) => k === "traces.changed").length;
    assert.ok(queries >= 1 && queries <= 1 + refreshes, `one query for every row: ${queries} queries, ${refreshes} traces.changed`);
    await panel.getByLabel("Activity over").selectOption("1h");
    // Its details list its tools with their own calls: good__echo's two, the others none.
    await panel.locator('tr[data-server="good"]').getByRole("button", { name: "Details of good" }).click();
    const tools = panel.getByTestId("server-tool-rows");
    const echo = tools.locator('tr[data-tool="good__echo"]').getByTestId("row-activity");
    await waitFor(async () => (await echo.getAttribute("data-calls")) === "2", "good__echo's two calls");
    assert.equal(await echo.getByRole("link").getAttribute("href"), "#/traces?kind=tool.call&provider=mcp-good&tool=good__echo&range=1h");
    const others = await tools.locator('tr:not([data-tool="good__echo"]) [data-testid="row-activity"]').evaluateAll((cells) => cells.map((c) => c.dataset.calls));
    assert.ok(others.length >= 1 && others.every((c) => c === "0"), `the other tools: ${others}`);
  });

  test("the Clients row shows the calls of the client's sessions", async () => {
    // A real MCP client (PyPI `mcp`) launching `tap mcp --session cursor`, as Cursor would
    // once connected: its session's client is `cursor`.
    const client = start(PYTHON, [PY_CLIENT, "stdio", "cursor", "legacy"], { env: { ...gateway.env, TAP_BIN: process.env.TAP_BIN }, stdio: ["pipe", "pipe", "pipe"] }, "py_client cursor");
    try {
      for (const [i, message] of ["x", "y", "z"].entries()) {
        client.child.stdin.write(`${JSON.stringify({ op: "call", id: `c${i}`, tool: "good__echo", args: { message } })}\n`);
        await waitForOutput(client.child, client.output, (text) => text.split("\n").filter((l) => l.includes('"op": "result"')).length === i + 1, `call ${i}`, 30000);
      }
    } finally {
      client.child.stdin.end(`${JSON.stringify({ op: "exit" })}\n`);
      await stopChild(client.child, client.output, "SIGTERM", 5000);
    }
    await goTo(panel, "Clients");
    const cell = panel.locator('li[data-client="cursor"]').getByTestId("row-activity");
    await waitFor(async () => (await cell.getAttribute("data-calls")) === "3", "cursor's three calls");
    assert.equal(await cell.getAttribute("data-errors"), "0");
    assert.match(await cell.innerText(), /3 calls/);
    await notReloaded();
  });

  test("an idle page asks for nothing", async () => {
    // The Servers page, with its rows' activity, is the one shown.
    const { sent, events } = await watchIdle(frames);
    const asked = sent.filter((m) => m === "activity.query" || m === "mcpServers.list");
    assert.ok(asked.length <= events.length, `asked ${asked} after only [${events}]`);
  });
});

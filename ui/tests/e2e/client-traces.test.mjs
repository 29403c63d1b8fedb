// A client's activity opens its traces (issue 42): `traces.list` takes `client` (the name the
// activity's client rows carry), and the Overview's "by client" rows and the Clients page's
// rows link to `#/traces?kind=tool.call&client=NAME&range=…`, which the Traces page reads
// into its Client filter. A real gateway running tests/mcp/servers/good.py, and two real MCP
// clients (PyPI `mcp`, tests/mcp/py_client.py) launching `tap mcp --session cursor` and
// `--session zed` as those clients would: cursor calls twice, zed once. Cursor and Zed are
// installed in the gateway's HOME (their files exist), so the Clients page lists them.
// Checked against the real `tap traces list --client … --json`.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { goTo, openPanel } from "../../../tests/js-support/browser.mjs";
import { remove, start, stopChild, tempDir, waitForOutput } from "../../../tests/js-support/process.mjs";
import { waitFor } from "../../../tests/js-support/wait.mjs";
import { launchBrowser, startGateway } from "./support.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const GOOD = path.resolve(here, "../../../tests/mcp/servers/good.py");
const PY_CLIENT = path.resolve(here, "../../../tests/mcp/py_client.py");
const PYTHON = process.env.TAP_TEST_PYTHON || "python3";

describe("a client's rows open its traces", () => {
  let dir, gateway, browser, panel;

  /** `count` calls of good__echo from a real MCP client in `tap mcp --session session`. */
  async function calls(session, count) {
    const client = start(PYTHON, [PY_CLIENT, "stdio", session, "legacy"], { env: { ...gateway.env, TAP_BIN: process.env.TAP_BIN }, stdio: ["pipe", "pipe", "pipe"] }, `py_client ${session}`);
    try {
      for (let i = 0; i < count; i++) {
        client.child.stdin.write(`${JSON.stringify({ op: "call", id: `c${i}`, tool: "good__echo", args: { message: `${session} ${i}` } })}\n`);
        await waitForOutput(client.child, client.output, (text) => text.split("\n").filter((l) => l.includes('"op": "result"')).length === i + 1, `${session}'s call ${i}`, 30000);
      }
    } finally {
      client.child.stdin.end(`${JSON.stringify({ op: "exit" })}\n`);
      await stopChild(client.child, client.output, "SIGTERM", 5000);
    }
  }

  /** `tap traces list --client CLIENT --json`: the ledger's tool calls of that client. */
  async function ledger(client) {
    const r = await gateway.tap(["traces", "list", "--name", "tool.call", "--client", client, "--since", "1h", "--json"]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    return JSON.parse(r.stdout);
  }

  /** The trace ids the Traces page lists, once they are `client`'s in the ledger. */
  async function listedAre(client) {
    const want = (await ledger(client)).map((t) => t.traceId).sort();
    const rows = panel.locator('[data-testid="traces-list"] tbody tr[data-trace-id]');
    const ids = async () => (await rows.evaluateAll((trs) => trs.map((tr) => tr.dataset.traceId))).sort();
    await waitFor(async () => JSON.stringify(await ids()) === JSON.stringify(want), `the traces of ${client} (${want.length}) listed`);
  }

  before(async () => {
    dir = tempDir("tap-e2e-client-traces-");
    mkdirSync(path.join(dir, "tap"));
    writeFileSync(path.join(dir, "tap", "mcp.json"), JSON.stringify({ mcpServers: { good: { command: PYTHON, args: [GOOD] } } }));
    gateway = await startGateway({ ownHome: true, dir });
    mkdirSync(path.join(gateway.env.HOME, ".cursor"));
    writeFileSync(path.join(gateway.env.HOME, ".cursor", "mcp.json"), JSON.stringify({ mcpServers: {} }));
    await calls("cursor", 2);
    await calls("zed", 1);
    await waitFor(async () => (await ledger("cursor")).length === 2 && (await ledger("zed")).length === 1, "the calls in the ledger");
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
    panel = await openPanel(context, gateway);
  });

  after(async () => {
    await browser?.close();
    await gateway?.stop();
    if (dir) remove(dir);
  });

  test("traces.list's client filter: each client's calls, and no other's", async () => {
    const cursor = await ledger("cursor");
    const zed = await ledger("zed");
    assert.equal(cursor.length, 2);
    assert.equal(zed.length, 1);
    assert.equal(new Set([...cursor, ...zed].map((t) => t.traceId)).size, 3, "no trace in both");
    assert.deepEqual(await ledger("windsurf"), []);
  });

  test("the Overview's client row opens the Traces page filtered to that client", async () => {
    await panel.getByTestId("activity-by").getByText("Clients").click();
    const row = panel.locator('[data-testid="activity-rows"][data-by="client"] tr[data-key="cursor"]');
    await waitFor(async () => (await row.count()) === 1 && (await row.getAttribute("data-calls")) === "2", "cursor's row with its 2 calls");
    assert.equal(await row.getByRole("link", { name: "cursor" }).getAttribute("href"), "#/traces?kind=tool.call&client=cursor&range=1h");
    await row.locator("td.num").first().click();
    await panel.getByRole("heading", { level: 1, name: "Traces" }).waitFor();
    assert.equal(await panel.getByRole("searchbox", { name: "Client" }).inputValue(), "cursor");
    await listedAre("cursor");
  });

  test("the Clients page's row links to the same traces", async () => {
    await goTo(panel, "Clients");
    const cell = panel.locator('li[data-client="cursor"]').getByTestId("row-activity");
    await waitFor(async () => (await cell.getAttribute("data-calls")) === "2", "cursor's two calls");
    const link = cell.getByRole("link");
    assert.equal(await link.getAttribute("href"), "#/traces?kind=tool.call&client=cursor&range=1h");
    await link.click();
    await panel.getByRole("heading", { level: 1, name: "Traces" }).waitFor();
    await listedAre("cursor");
    // Typed by hand, the filter asks the gateway for that client's only.
    await panel.getByRole("searchbox", { name: "Client" }).fill("zed");
    await listedAre("zed");
    assert.deepEqual(panel.errors, []);
  });
});

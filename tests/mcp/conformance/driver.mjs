// The client the official MCP conformance suite runs (`conformance client --command "node
// driver.mjs" --scenario NAME`): the gateway is the client under test. The suite appends the
// scenario's server URL as the last argument and names the scenario in
// MCP_CONFORMANCE_SCENARIO. This starts a `tap gateway` (TAP_BIN) with its own TAP_HOME whose
// user mcp.json holds that URL as the server `scenario`, waits until the gateway has
// connected to it (`tap mcp list --json`), then does through the gateway what the scenario
// expects a client to do: an MCP client on `tap mcp` lists the session's tools and calls the
// scenario's tool as `scenario__<tool>`, answering elicitation with the requested schema's
// defaults. Exits 0 when every step worked (the suite's checks are the verdict), 1 otherwise.
// Run by scripts/test-mcp-conformance.sh.

import { writeFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { startGateway, tapBin } from "../../js-support/gateway.mjs";
import { remove, tempDir } from "../../js-support/process.mjs";
import { GiveUp, waitFor } from "../../js-support/wait.mjs";

const url = process.argv[process.argv.length - 1];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
const log = (...args) => console.error(`driver[${scenario}]:`, ...args);

/** What the client does once the gateway runs the scenario's server, per scenario. */
const SCENARIOS = {
  // The gateway initialized the server on its own; listing the session's tools is all.
  initialize: async () => {},
  tools_call: async (client) => {
    const text = await callText(client, "add_numbers", { a: 5, b: 3 });
    if (!text.includes("8")) throw new Error(`add_numbers(5, 3) gave ${JSON.stringify(text)}`);
  },
  "elicitation-sep1034-client-defaults": async (client) => {
    const text = await callText(client, "test_client_elicitation_defaults", {});
    if (!text.startsWith("Elicitation completed")) throw new Error(`the elicitation tool said ${JSON.stringify(text)}`);
  },
  // The server ends the call's SSE stream before the result and sends it on the GET stream
  // the client must reopen (after `retry` ms, with Last-Event-ID).
  "sse-retry": async (client) => {
    const text = await callText(client, "test_reconnection", {});
    if (!text.includes("completed successfully")) throw new Error(`test_reconnection gave ${JSON.stringify(text)}`);
  },
};

/** Calls the scenario server's `tool` through the gateway; its result's text, or throws. */
async function callText(client, tool, args) {
  const result = await client.callTool({ name: `scenario__${tool}`, arguments: args }, undefined, { timeout: 20000 });
  const text = (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
  log(`${tool} ->`, JSON.stringify(result));
  if (result.isError) throw new Error(`${tool} failed: ${text}`);
  return text;
}

/** The user, in a form: accepts with every field of the requested schema at its default. */
function acceptDefaults(request) {
  const content = {};
  for (const [name, field] of Object.entries(request.params.requestedSchema?.properties ?? {})) {
    if (field.default !== undefined) content[name] = field.default;
  }
  log("elicitation/create, accepting", JSON.stringify(content));
  return { action: "accept", content };
}

async function main() {
  const act = SCENARIOS[scenario];
  if (!act) throw new Error(`no steps for scenario '${scenario}' (known: ${Object.keys(SCENARIOS).join(", ")})`);
  const dir = tempDir("tap-conformance-");
  mkdirSync(path.join(dir, "tap"));
  writeFileSync(path.join(dir, "tap", "mcp.json"), JSON.stringify({ mcpServers: { scenario: { type: "http", url } } }));
  let gateway;
  try {
    gateway = await startGateway({ dir, env: { TAP_KEYRING: "off" } });
  } catch (e) {
    remove(dir);
    throw e;
  }
  let client;
  try {
    const ready = await waitFor(async () => {
      const r = await gateway.tap(["mcp", "list", "--json"]);
      const entry = r.code === 0 ? JSON.parse(r.stdout).find((e) => e.name === "scenario") : undefined;
      if (entry?.state === "parked" || entry?.state === "disabled") throw new GiveUp(`server scenario is ${entry.state}: ${JSON.stringify(entry)}`);
      return entry?.state === "ready" ? entry : null;
    }, "the scenario's server to be ready in tap mcp list");
    log("ready:", JSON.stringify(ready));

    client = new Client({ name: "tap-conformance-driver", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler(ElicitRequestSchema, acceptDefaults);
    const transport = new StdioClientTransport({ command: tapBin(), args: ["mcp", "--session", "conformance"], env: gateway.env, stderr: "inherit" });
    await client.connect(transport);
    const { tools } = await client.listTools();
    log("tools:", tools.map((t) => t.name).join(", "));
    await act(client);
  } catch (e) {
    log("gateway output:", gateway.output.stderr);
    throw e;
  } finally {
    await client?.close().catch(() => {});
    await gateway.stop();
    remove(dir);
  }
}

main().catch((e) => {
  log(e?.stack ?? String(e));
  process.exitCode = 1;
});

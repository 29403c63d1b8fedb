// The client the official MCP conformance suite runs (`conformance client --command "node
// driver.mjs" --scenario NAME`): the gateway is the client under test. The suite appends the
// scenario's server URL as the last argument, names the scenario in MCP_CONFORMANCE_SCENARIO
// and, for some authorization scenarios, gives credentials in MCP_CONFORMANCE_CONTEXT (JSON:
// client_id, client_secret). This starts a `tap gateway` (TAP_BIN) with its own TAP_HOME
// whose user mcp.json holds that URL as the server `scenario`, waits until the gateway has
// connected to it (`tap mcp list --json`), then does through the gateway what the scenario
// expects a client to do: an MCP client on `tap mcp` lists the session's tools and calls the
// scenario's tool as `scenario__<tool>`, answering elicitation with the requested schema's
// defaults.
//
// Authorization scenarios (`auth/*`): the server's mcp.json entry gets the `"oauth"` entry a
// user would write for it (the context's pre-registered client, the client metadata URL the
// scenario expects). When the server waits in `needsSignIn`, the driver is the user: it runs
// `tap mcp login scenario --no-open`, opens the printed page with fetch (the suite's
// authorization endpoint redirects at once to the gateway's /oauth/callback, which must say
// "Signed in") and waits for the command to succeed. A call refused with NEEDS_SIGN_IN (the
// server wants more scope) is answered the same way and tried again. Like a user who has
// been sent to the sign-in page MAX_SIGN_INS times and still cannot use the server, the
// driver then gives up (auth/scope-retry-limit checks that a client stops asking).
//
// Exits 0 when every step worked (the suite's checks are the verdict), 1 otherwise.
// Run by scripts/test-mcp-conformance.sh.

import { writeFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { startGateway, tapBin } from "../../js-support/gateway.mjs";
import { remove, start, tempDir, waitForOutput } from "../../js-support/process.mjs";
import { GiveUp, waitFor } from "../../js-support/wait.mjs";

const url = process.argv[process.argv.length - 1];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || "{}");
const log = (...args) => console.error(`driver[${scenario}]:`, ...args);

/**
 * How many times the driver signs in during one scenario before it gives up, as a user
 * would after being sent back to the sign-in page again and again: the first sign-in, one
 * step-up to a wider scope, and one more try. auth/scope-retry-limit counts the
 * authorization requests and allows at most 3.
 */
const MAX_SIGN_INS = 3;

/** The Client ID Metadata Document URL auth/basic-cimd expects the client to use as its client_id. */
const CIMD_URL = "https://conformance-test.local/client-metadata.json";

/** The tool every authorization scenario's MCP server has. */
const AUTH_TOOL = "test-tool";

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

/** The `"oauth"` entry a user would write for the scenario's server, or undefined. */
function oauthEntry() {
  if (!scenario.startsWith("auth/")) return undefined;
  const oauth = {};
  // Pre-registered credentials (auth/pre-registration, the client-credentials extensions).
  if (context.client_id) oauth.clientId = context.client_id;
  if (context.client_secret) oauth.clientSecret = context.client_secret;
  if (scenario === "auth/basic-cimd") oauth.clientMetadataUrl = CIMD_URL;
  return oauth;
}

/** Calls the scenario server's `tool` through the gateway; its result's text, or throws. */
async function callText(client, tool, args) {
  const { result, text } = await call(client, tool, args);
  if (result.isError) throw new Error(`${tool} failed: ${text}`);
  return text;
}

/** Calls `scenario__<tool>`: its result and the result's text. */
async function call(client, tool, args) {
  const result = await client.callTool({ name: `scenario__${tool}`, arguments: args }, undefined, { timeout: 20000 });
  const text = (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
  log(`${tool} ->`, JSON.stringify(result));
  return { result, text };
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

/** The server `scenario` in `tap mcp list --json`, or undefined. */
async function entry(gateway) {
  const r = await gateway.tap(["mcp", "list", "--json"]);
  return r.code === 0 ? JSON.parse(r.stdout).find((e) => e.name === "scenario") : undefined;
}

/** A state the driver cannot get the server out of. */
function hopeless(e) {
  if (e?.state === "parked" || e?.state === "disabled") throw new GiveUp(`server scenario is ${e.state}: ${JSON.stringify(e)}`);
}

/** The user signing in: counts the sign-ins of this run. */
const signIns = { done: 0 };

/**
 * `tap mcp login scenario --no-open`, its page opened as a browser would (redirects
 * followed: the suite's authorization endpoint sends the browser straight back to the
 * gateway's callback), the callback page checked, and the command's success awaited.
 */
async function signIn(gateway) {
  signIns.done += 1;
  const n = signIns.done;
  const login = start(tapBin(), ["mcp", "login", "scenario", "--no-open"], { env: gateway.env }, "tap mcp login");
  try {
    const page = await waitForOutput(
      login.child,
      login.output,
      (text) => text.split("\n").find((line) => /^https?:\/\//.test(line.trim()))?.trim(),
      "tap mcp login to print the sign-in page",
    );
    log(`sign-in ${n}: opening ${page}`);
    const answer = await fetch(page, { redirect: "follow", signal: AbortSignal.timeout(20000) });
    const html = await answer.text();
    const said = html.match(/<h1>([^<]*)<\/h1>\s*<p>([^<]*)<\/p>/);
    log(`sign-in ${n}: the browser landed on ${answer.url} (${answer.status}): ${said ? `${said[1]}: ${said[2]}` : html.slice(0, 300)}`);
    // The command ends once the gateway says how the sign-in went (it follows its events).
    const { code } = await waitFor(() => (login.output.code === undefined ? null : { code: login.output.code }), "tap mcp login to exit");
    const out = `${login.output.stdout}${login.output.stderr}`.trim();
    if (code !== 0) throw new Error(`sign-in ${n}: tap mcp login exited with ${code}: ${out}`);
    if (!new URL(answer.url).pathname.endsWith("/oauth/callback") || said?.[1] !== "Signed in") {
      throw new Error(`sign-in ${n}: tap mcp login succeeded, but the gateway's callback page did not say "Signed in" (${answer.url}, ${answer.status})`);
    }
    log(`sign-in ${n}: ${login.output.stdout.trim().split("\n").pop()}`);
  } finally {
    await login.stop("SIGTERM", 5000);
  }
}

/**
 * Waits until the server is ready, signing in whenever it waits for the user
 * (`needsSignIn` with a reason, no sign-in pending: the reason is gone once a sign-in
 * succeeded, before the server is started again), at most MAX_SIGN_INS times in this run.
 */
async function untilReady(gateway) {
  for (;;) {
    let last;
    const e = await waitFor(async () => {
      const e = (last = await entry(gateway));
      hopeless(e);
      if (e?.state === "ready") return e;
      if (e?.state === "needsSignIn" && e.signIn?.reason && !e.signIn.pending) return e;
      return null;
    }, "the scenario's server to be ready or to wait for a sign-in in tap mcp list").catch((err) => {
      throw new Error(`${err.message}; last seen: ${JSON.stringify(last)}`);
    });
    if (e.state === "ready") return e;
    log(`needsSignIn: ${JSON.stringify(e.signIn)}`);
    if (signIns.done >= MAX_SIGN_INS) {
      throw new Error(`giving up: the server still wants a sign-in after ${signIns.done} (${e.signIn?.reason ?? "no reason given"})`);
    }
    await signIn(gateway);
  }
}

/**
 * Calls the authorization scenario's tool; a refusal because the server wants a (new)
 * sign-in (NEEDS_SIGN_IN: 403 insufficient_scope, step-up) is answered by signing in again,
 * then the call is tried again, within MAX_SIGN_INS.
 */
async function callSignedIn(gateway, client, tool) {
  for (;;) {
    const { result, text } = await call(client, tool, {});
    if (!result.isError) return text;
    if (!/\bNEEDS_SIGN_IN\b/.test(text)) throw new Error(`${tool} failed: ${text}`);
    log(`${tool} was refused until a new sign-in: ${text}`);
    await untilReady(gateway);
  }
}

async function main() {
  const auth = scenario.startsWith("auth/");
  const act = SCENARIOS[scenario];
  if (!act && !auth) throw new Error(`no steps for scenario '${scenario}' (known: ${Object.keys(SCENARIOS).join(", ")}, auth/*)`);
  const dir = tempDir("tap-conformance-");
  mkdirSync(path.join(dir, "tap"));
  const server = { type: "http", url };
  const oauth = oauthEntry();
  if (oauth && Object.keys(oauth).length > 0) server.oauth = oauth;
  log("mcp.json entry:", JSON.stringify(server));
  writeFileSync(path.join(dir, "tap", "mcp.json"), JSON.stringify({ mcpServers: { scenario: server } }));
  let gateway;
  try {
    gateway = await startGateway({ dir, env: { TAP_KEYRING: "off" } });
  } catch (e) {
    remove(dir);
    throw e;
  }
  let client;
  try {
    const ready = auth
      ? await untilReady(gateway)
      : await waitFor(async () => {
          const e = await entry(gateway);
          hopeless(e);
          return e?.state === "ready" ? e : null;
        }, "the scenario's server to be ready in tap mcp list");
    log("ready:", JSON.stringify(ready));

    client = new Client({ name: "tap-conformance-driver", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler(ElicitRequestSchema, acceptDefaults);
    const transport = new StdioClientTransport({ command: tapBin(), args: ["mcp", "--session", "conformance"], env: gateway.env, stderr: "inherit" });
    await client.connect(transport);
    const { tools } = await client.listTools();
    log("tools:", tools.map((t) => t.name).join(", "));
    if (auth) {
      if (!tools.some((t) => t.name === `scenario__${AUTH_TOOL}`)) throw new Error(`the gateway offers no scenario__${AUTH_TOOL}`);
      await callSignedIn(gateway, client, AUTH_TOOL);
      log(`signed in ${signIns.done} time(s); ${AUTH_TOOL} answered`);
    } else {
      await act(client);
    }
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

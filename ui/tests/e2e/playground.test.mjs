// The tool playground against the real gateway: open a session from the page, a real
// provider (Node's WebSocket) binds a tool whose schema has a string, an integer, a
// boolean and an enum; the generated form calls it, progress appears while the provider
// holds the result back, then the result and the duration; a failing call shows its error
// code; invalid raw JSON is refused before anything is sent. An MCP server's tool whose
// result says `isError: true` shows as failed (`TOOL_ERROR`), with the result beside it.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { goTo } from "../../../tests/js-support/browser.mjs";
import { providerToken, tokenHandshake } from "../../../tests/js-support/gateway.mjs";
import { remove, tempDir } from "../../../tests/js-support/process.mjs";
import { waitFor } from "../../../tests/js-support/wait.mjs";
import { launchBrowser, panelInNewContext, screenshot, startGateway } from "./support.mjs";

const DEPLOY = {
  name: "deploy",
  description: "Deploys a service to a region. Reports each rollout step as progress.",
  parameters: {
    type: "object",
    required: ["service", "region"],
    properties: {
      service: { type: "string", description: "The service to deploy" },
      replicas: { type: "integer", minimum: 1, maximum: 20, description: "How many copies to run" },
      dryRun: { type: "boolean", description: "Plan only, change nothing" },
      region: { type: "string", enum: ["eu-west", "us-east", "ap-south"] },
    },
    additionalProperties: false,
  },
};

/**
 * A provider with the `deploy` tool that answers only when told to: calls wait in
 * `calls`, so the test decides when progress, the result or an error goes out.
 */
async function deployProvider(gateway, session) {
  const token = await providerToken(gateway.env.TAP_HOME);
  const ws = new WebSocket(`ws://${gateway.hostPort}/`);
  const inbox = [];
  ws.addEventListener("message", (e) => inbox.push(JSON.parse(String(e.data))));
  await new Promise((resolve, reject) => {
    ws.addEventListener("open", resolve, { once: true });
    ws.addEventListener("error", () => reject(new Error("deploy provider: cannot connect")), { once: true });
  });
  await tokenHandshake(ws, inbox, token, { name: "deployer", session, tools: [DEPLOY] });
  const send = (m) => ws.send(JSON.stringify(m));
  return {
    /** The next `tool.call` not seen before. */
    seen: 0,
    async nextCall() {
      const calls = () => inbox.filter((m) => m.type === "tool.call");
      const call = await waitFor(() => calls()[this.seen], "a tool.call");
      this.seen++;
      return call;
    },
    calls: () => inbox.filter((m) => m.type === "tool.call").length,
    progress: (call, message) => send({ type: "tool.progress", id: call.id, message }),
    result: (call, data) => send({ type: "tool.result", id: call.id, data }),
    fail: (call, errorCode, error) => send({ type: "tool.result", id: call.id, errorCode, error }),
    close: () => ws.close(),
  };
}

describe("the tool playground", () => {
  let gateway, browser, panel, provider, sessionId;

  before(async () => {
    gateway = await startGateway();
    browser = await launchBrowser();
    ({ panel } = await panelInNewContext(browser, gateway));
  });

  after(async () => {
    provider?.close();
    await browser?.close();
    await gateway?.stop();
  });

  const calls = () => panel.getByRole("list", { name: "Recent calls" }).getByRole("listitem").filter({ has: panel.locator(".pg-call-head") });
  const newest = () => calls().first();

  test("opening a session registers it, and a provider's tool appears with its schema form", async () => {
    await goTo(panel, "Playground");
    await panel.getByLabel("Session name").fill("release-checks");
    await panel.getByLabel("Working directory (optional)").fill("/srv/app");
    await panel.getByRole("button", { name: "Open session" }).click();
    const held = panel.getByRole("list", { name: "Held sessions" }).getByRole("listitem");
    await held.first().waitFor();
    sessionId = await held.first().getAttribute("data-session-id");
    assert.match(sessionId, /^s-/);
    const status = JSON.parse((await gateway.tap(["status", "--json"])).stdout);
    const registered = status.sessions.find((s) => s.id === sessionId);
    assert.equal(registered?.label, "release-checks");
    assert.equal(registered?.cwd, "/srv/app");

    provider = await deployProvider(gateway, sessionId);
    await panel.getByRole("button", { name: /^deploy/ }).waitFor();
    const form = panel.getByRole("form", { name: "Call deploy" });
    assert.match(await form.innerText(), /Deploys a service to a region/);
    // One input per property, of the schema's kind.
    assert.equal(await panel.locator("#pg-field-service").getAttribute("type"), "text");
    assert.equal(await panel.locator("#pg-field-replicas").getAttribute("type"), "number");
    assert.equal(await panel.locator("#pg-field-dryRun").getAttribute("type"), "checkbox");
    assert.deepEqual(await panel.locator("#pg-field-region option").allInnerTexts(), ["choose…", "eu-west", "us-east", "ap-south"]);
    // Required fields first, each group in the order the provider declared it.
    const order = await form.locator("[id^='pg-field-']").evaluateAll((els) => els.map((e) => e.id));
    assert.deepEqual(order, ["pg-field-service", "pg-field-region", "pg-field-replicas", "pg-field-dryRun"]);
    await form.getByText("JSON Schema").click();
    assert.match(await form.locator(".pg-schema pre").innerText(), /"enum": \[/);
    await form.getByText("JSON Schema").click();
  });

  test("a call from the form shows its progress as it arrives, then the result and the duration", async () => {
    await panel.locator("#pg-field-service").fill("checkout");
    await panel.locator("#pg-field-replicas").fill("3");
    await panel.locator("#pg-field-dryRun").check();
    await panel.locator("#pg-field-region").selectOption({ label: "eu-west" });
    await panel.getByRole("button", { name: "Call deploy" }).click();

    const call = await provider.nextCall();
    assert.equal(call.tool, "deploy");
    assert.deepEqual(call.args, { service: "checkout", replicas: 3, dryRun: true, region: "eu-west" });
    await newest().getByText("running").waitFor();

    provider.progress(call, "Pulling image checkout:1.42");
    await newest().getByRole("list", { name: "Progress" }).getByText("Pulling image checkout:1.42").waitFor();
    provider.progress(call, "Rolling out 3 replicas (dry run)");
    await newest().getByText("Rolling out 3 replicas (dry run)").waitFor();
    assert.equal(await newest().getByText("running").count(), 1, "still running until the result");

    provider.result(call, { service: "checkout", region: "eu-west", planned: { replicas: 3, image: "checkout:1.42" }, dryRun: true });
    await newest().locator(".pill.ok").waitFor();
    const result = JSON.parse(await newest().locator(".pg-result").innerText());
    assert.deepEqual(result.planned, { replicas: 3, image: "checkout:1.42" });
    assert.match(await newest().getByTestId("pg-duration").innerText(), /^\d+ ms$/);
  });

  test("a call that fails shows its error code and message", async () => {
    await panel.locator("#pg-field-dryRun").uncheck();
    await panel.locator("#pg-field-region").selectOption({ label: "us-east" });
    await panel.getByRole("button", { name: "Call deploy" }).click();
    const call = await provider.nextCall();
    assert.deepEqual(call.args, { service: "checkout", replicas: 3, dryRun: false, region: "us-east" });
    provider.progress(call, "Checking the freeze calendar");
    await newest().getByText("Checking the freeze calendar").waitFor();
    provider.fail(call, "DEPLOY_FROZEN", "us-east is in a change freeze until 18:00 UTC");
    await newest().locator(".pill.log-error").getByText("DEPLOY_FROZEN").waitFor();
    assert.equal(await newest().locator(".pg-error").innerText(), "us-east is in a change freeze until 18:00 UTC");
    assert.match(await newest().getByTestId("pg-duration").innerText(), /^\d+ ms$/);
    assert.equal(await calls().count(), 2, "both calls are kept");
    // Each call names its trace; the link opens it on the Traces page.
    const href = await newest().getByRole("link", { name: "trace" }).getAttribute("href");
    assert.match(href, /^#\/traces\/[0-9a-f]{32}$/);
    await screenshot(panel, "panel-playground");
  });

  test("arguments the schema refuses come back as INVALID_JSON without reaching the provider", async () => {
    const before = provider.calls();
    await panel.locator("#pg-field-replicas").fill("0");
    await panel.getByRole("button", { name: "Call deploy" }).click();
    await newest().locator(".pill.log-error").getByText("INVALID_JSON").waitFor();
    assert.match(await newest().locator(".pg-error").innerText(), /replicas/);
    assert.equal(provider.calls(), before);
  });

  test("raw JSON is an alternative, and invalid JSON is refused with a clear error", async () => {
    const form = panel.getByRole("form", { name: "Call deploy" });
    await form.getByRole("button", { name: "JSON", exact: true }).click();
    const raw = form.getByLabel("Arguments (JSON object)");
    // The form's arguments carry over.
    assert.deepEqual(JSON.parse(await raw.inputValue()), { service: "checkout", replicas: 0, dryRun: false, region: "us-east" });
    const before = await calls().count();
    await raw.fill('{"service": "checkout", "region": ');
    await form.getByRole("button", { name: "Call deploy" }).click();
    await form.getByRole("alert").getByText(/^Invalid JSON/).waitFor();
    assert.equal(await calls().count(), before, "nothing was called");

    await raw.fill('{"service": "search", "region": "ap-south"}');
    await form.getByRole("button", { name: "Call deploy" }).click();
    const call = await provider.nextCall();
    assert.deepEqual(call.args, { service: "search", region: "ap-south" });
    provider.result(call, "queued");
    await newest().locator(".pill.ok").waitFor();
    assert.deepEqual(panel.errors, []);
  });
});

// An MCP server's tool (tests/mcp/servers/good.py from the gateway's own mcp.json) whose
// result says `isError: true` is a failed call, never "ok".
describe("the tool playground with an MCP server", () => {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const GOOD = path.resolve(here, "../../../tests/mcp/servers/good.py");
  /** The Python the other MCP tests use (scripts/test.sh sets it), else `python3`. */
  const PYTHON = process.env.TAP_TEST_PYTHON || "python3";
  let dir, gateway, browser, panel;

  before(async () => {
    dir = tempDir("tap-e2e-playground-mcp-");
    mkdirSync(path.join(dir, "tap"));
    const servers = { mcpServers: { good: { command: PYTHON, args: [GOOD] } } };
    writeFileSync(path.join(dir, "tap", "mcp.json"), JSON.stringify(servers));
    gateway = await startGateway({ ownHome: true, dir });
    browser = await launchBrowser();
    ({ panel } = await panelInNewContext(browser, gateway));
  });

  after(async () => {
    await browser?.close();
    await gateway?.stop();
    if (dir) remove(dir);
  });

  test("a result with isError shows as TOOL_ERROR with the server's text and the MCP result", async () => {
    await goTo(panel, "Playground");
    await panel.getByLabel("Session name").fill("mcp-errors");
    await panel.getByRole("button", { name: "Open session" }).click();
    await panel.getByRole("list", { name: "Held sessions" }).getByRole("listitem").first().waitFor();
    await panel.getByRole("button", { name: /^good__fails/ }).click({ timeout: 20000 });
    await panel.getByRole("button", { name: "Call good__fails" }).click();
    const call = panel.getByRole("list", { name: "Recent calls" }).getByRole("listitem").filter({ has: panel.locator(".pg-call-head") }).first();
    await call.locator(".pill.log-error").getByText("TOOL_ERROR").waitFor({ timeout: 20000 });
    assert.equal(await call.locator(".pill.ok").count(), 0, "not ok");
    assert.match(await call.getAttribute("class"), /\bis-error\b/);
    assert.equal(await call.locator(".pg-error").innerText(), "it failed");
    const result = JSON.parse(await call.locator(".pg-result").innerText());
    assert.equal(result.isError, true);
    assert.deepEqual(result.content, [{ type: "text", text: "it failed" }]);
    assert.deepEqual(panel.errors, []);
  });
});

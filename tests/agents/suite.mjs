// The two tests every agent CLI gets (one test file per CLI calls agentSuite):
// 1. `tap connect CLIENT`, then one prompt: the fake model calls the provider's `weather`,
//    then the MCP server's `good__echo`; both results reach the model, the provider saw its
//    call, and the gateway's traces hold both calls in the client's session. Every tool is
//    offered, `good__fails` included (so the second test can fail).
// 2. `tap connect CLIENT --profile no-fails`: the CLI's own `tap mcp --profile no-fails`
//    opens its session, and the model is offered `good__echo` and the gateway's `tap_*`
//    tools but never `good__fails`; the call still works.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { startFakeModel, resolveTool } from "./fake-model.mjs";
import { PLAN, PROFILE, connect, makeProject, openSession, startGateway } from "./support.mjs";
import { tapBin } from "../js-support/gateway.mjs";
import { tempDir } from "../js-support/process.mjs";

const PROMPT = "Check the weather in Oslo, then echo a greeting.";

/**
 * `client`: the `tap connect` word; `prepareHome(home)`: the user's own settings before
 * `tap connect` (optional); `configFile(home)`: the file `tap connect` writes;
 * `run(project, modelUrl, prompt)`: one non-interactive run of the CLI, resolving
 * {code, stdout, stderr}.
 */
export function agentSuite({ client, prepareHome, configFile, run }) {
  let dir, gw;

  before(async () => {
    dir = tempDir(`tap-agents-${client}-`);
    gw = await startGateway(dir);
  });

  after(async () => {
    await gw?.stop();
    if (process.env.KEEP_TEST_DIR) console.log(`kept ${dir}`);
    else fs.rmSync(dir, { recursive: true, force: true });
  });

  /**
   * `tap connect` (with `profile`) into a fresh HOME, then one run of the CLI against a
   * fake model following `plan`; with `provider`, in a project whose provider is bound to
   * the pre-opened session the CLI joins. Returns what the tests check; `show()` is
   * everything a failure message needs.
   */
  async function connectedRun(name, plan, { profile, provider }) {
    const project = makeProject(dir, name, provider);
    prepareHome?.(project.home);
    const connected = await connect(gw, client, project, profile);
    assert.equal(connected.code, 0, connected.stdout + connected.stderr);
    const written = fs.readFileSync(configFile(project.home), "utf8");
    assert.ok(written.includes(tapBin()), `the entry launches the tap under test:\n${written}`);
    const model = await startFakeModel(plan);
    const session = provider ? await openSession(gw, client, project) : null;
    let result;
    try {
      result = await run(project, model.url, PROMPT);
    } finally {
      await session?.stop();
      await model.close();
    }
    const requests = model.requests.map(({ path, tools, results }) => ({ path, tools, results }));
    const show = () => `exit ${result.code}\nstdout: ${result.stdout.slice(-3000)}\nstderr: ${result.stderr.slice(-3000)}\n`
      + `${configFile(project.home)}:\n${written}\nmodel requests: ${JSON.stringify(requests).slice(-6000)}`;
    // The agent's own loop: the requests that offered tools (not a title or routing side-question).
    const turns = model.requests.filter((r) => r.tools.length > 0);
    return { project, result, turns, show, sessionId: session?.id };
  }

  test(`${client}: the config tap connect wrote reaches a provider's tool and an MCP server's tool through the gateway`, async () => {
    const { project, result, turns, show, sessionId } = await connectedRun("plain", PLAN, { provider: true });
    assert.equal(result.code, 0, show());
    assert.equal(turns.length, 3, `2 tool calls and the answer:\n${show()}`);
    for (const tool of ["weather", "launch_rockets", "good__echo", "good__fails", "tap_status"]) {
      assert.ok(resolveTool(tool, turns[0].tools), `${tool} offered:\n${show()}`);
    }
    // The last turn carries both results, in order, as the CLI got them from the gateway.
    const results = turns[2].results.map((r) => r.text);
    assert.equal(results.length, 2, show());
    assert.match(results[0], /sunny in Oslo/, show());
    assert.match(results[1], /hello through MCP/, show());
    assert.match(result.stdout, /FINAL: .*sunny in Oslo.*hello through MCP/s, show());
    assert.deepEqual(project.calls().filter((c) => c.tool), [{ tool: "weather", args: { city: "Oslo" } }], show());
    // The gateway's own record of the two calls, in the client's session.
    const traces = await gw.tap(["traces", "list", "--session", sessionId, "--name", "tool.call", "--json"]);
    assert.equal(traces.code, 0, traces.stdout + traces.stderr);
    const calls = JSON.parse(traces.stdout).map(({ tool, provider, status }) => ({ tool, provider, status })).reverse();
    assert.deepEqual(calls, [
      { tool: "weather", provider: "forecasts", status: "ok" },
      { tool: "good__echo", provider: "mcp-good", status: "ok" },
    ], traces.stdout);
  });

  test(`${client}: with tap connect --profile, the tool the profile hides is not in the list the model receives`, async () => {
    const { result, turns, show } = await connectedRun("profile", PLAN.slice(1), { profile: PROFILE });
    assert.equal(result.code, 0, show());
    assert.equal(turns.length, 2, `1 tool call and the answer:\n${show()}`);
    for (const turn of turns) {
      for (const tool of ["good__echo", "good__structured", "tap_status"]) assert.ok(resolveTool(tool, turn.tools), `${tool} offered:\n${show()}`);
      assert.equal(resolveTool("good__fails", turn.tools), undefined, `good__fails hidden:\n${show()}`);
    }
    assert.match(result.stdout, /FINAL: .*hello through MCP/s, show());
    // The session the CLI's `tap mcp --profile` opened holds the profile: the gateway itself
    // refuses the hidden tool there, naming it.
    const sessions = (await gw.status()).sessions.filter((s) => s.label === client);
    assert.equal(sessions.length, 1, `one session labelled ${client}: ${JSON.stringify(sessions)}`);
    const [session] = sessions;
    const refused = await gw.tap(["call", "--session", session.id, "good__fails", "{}"]);
    assert.equal(refused.code, 1, refused.stdout + refused.stderr);
    assert.match(refused.stdout, new RegExp(`opened with profile '${PROFILE}'`), refused.stdout);
  });
}

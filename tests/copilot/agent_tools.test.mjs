// The agent's reading tools from the real Copilot CLI (issue 40), offline against the fake
// model, with the extension installed by the real `tap install copilot` and a real
// `tap gateway`: the fake model calls `tap_post` in one session and `tap_query_records` in a
// later session of the same workspace and gets the earlier note back from the history
// database; `tap_get_session_state` shows what the extension read from the CLI's extension
// API (session.capabilities, session.rpc mode and model). Run by scripts/test-copilot.sh.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { startFakeModel } from "./fake-model.mjs";
import { tempDir } from "../js-support/process.mjs";
import { copilotLogs, runCopilot, startGateway } from "./support.mjs";

let dir, gw, model, workspace, elsewhere;

before(async () => {
  dir = tempDir("tap-copilot-agent-");
  model = await startFakeModel();
  gw = await startGateway(dir);
  const installed = await gw.tap(["install", "copilot"]);
  assert.equal(installed.code, 0, installed.stdout + installed.stderr);
  workspace = path.join(dir, "workspace");
  elsewhere = path.join(dir, "elsewhere");
  fs.mkdirSync(workspace);
  fs.mkdirSync(elsewhere);
});

after(async () => {
  await gw?.stop();
  await model?.close();
  if (process.env.KEEP_TEST_DIR) console.log(`kept ${dir}`);
  else fs.rmSync(dir, { recursive: true, force: true });
});

async function copilot(prompt, cwd) {
  const r = await runCopilot({ cwd, prompt, copilotHome: gw.copilotHome, tapHome: gw.tapHome, modelUrl: model.url }).done;
  assert.equal(r.code, 0, `copilot failed:\n${r.stdout}\n${r.stderr}\n${copilotLogs(gw.copilotHome)}`);
  return r;
}

/** The JSON a tool answered, as the fake model quoted it (`RESULT(<tool>): <text>`). */
function answered(stdout, tool) {
  const at = stdout.indexOf(`RESULT(${tool}): `);
  assert.ok(at >= 0, stdout);
  const text = stdout.slice(at + `RESULT(${tool}): `.length);
  return JSON.parse(text.slice(0, text.lastIndexOf("}") + 1));
}

test("a later Copilot session of the workspace finds an earlier one's note with tap_query_records; another workspace does not", async () => {
  await copilot('CALL:tap_post{"channel":"notes","message":"COPILOT-NOTE-17 the migration is half done"}', workspace);
  await copilot('CALL:tap_post{"channel":"notes","message":"COPILOT-NOTE-99 from another project"}', elsewhere);

  const r = await copilot('CALL:tap_query_records{"text":"COPILOT-NOTE","stream":"notes"}', workspace);
  const found = answered(r.stdout, "tap_query_records");
  assert.equal(found.records, "events");
  assert.deepEqual(found.items.map((i) => i.text), ["COPILOT-NOTE-17 the migration is half done"]);
  assert.ok(found.sessionsSearched >= 2, JSON.stringify(found));
});

test("tap_get_session_state shows the Copilot session with what the CLI's extension API reported", async () => {
  const r = await copilot("CALL:tap_get_session_state{}", workspace);
  const state = answered(r.stdout, "tap_get_session_state");
  assert.equal(state.cwd, workspace);
  assert.equal(state.host.kind, "sessionHost");
  assert.equal(state.host.capabilities.client.name, "copilot-cli");
  // Prompt mode (`copilot -p`): the CLI reports ui.elicitation, but no one can answer a
  // dialog, so the extension says it cannot ask.
  assert.deepEqual(state.host.capabilities.ui, { confirm: false, elicitation: false });
  // The modes session.rpc.mode.set switches to.
  assert.deepEqual(state.host.capabilities.modes, ["interactive", "plan", "autopilot"]);
  assert.equal(state.host.canChangeMode, true);
  // Mode and model from the experimental session.rpc (1.0.102 answers both in prompt mode).
  console.log(`copilot reported: mode=${state.mode} model=${state.model} ui=${JSON.stringify(state.host.capabilities.ui)}`);
  assert.equal(state.mode, "interactive");
  assert.equal(state.model, "fake-model");
});

test("tap_verify_goal_output called through Copilot checks the workspace's files, and its verdict reaches the model", async () => {
  fs.writeFileSync(path.join(workspace, "REPORT.md"), "# Report\nmigration: done\n");
  const expectations = [
    { id: "report", kind: "file", path: "REPORT.md", pattern: "migration: done" },
    { id: "log", kind: "file", path: "missing.log" },
  ];
  const before = model.requests.length;
  const r = await copilot(`CALL:tap_verify_goal_output${JSON.stringify({ expectations })}`, workspace);
  const verdict = answered(r.stdout, "tap_verify_goal_output");
  assert.equal(verdict.met, false, JSON.stringify(verdict));
  const status = JSON.stringify(verdict);
  assert.match(status, /"report"[^}]*"verified"|"verified"[^}]*"report"/, status);
  assert.match(status, /"log"[^}]*"failed"|"failed"[^}]*"log"/, status);
  // The model got the tool's own result (the fake model quotes the request's last message).
  const last = model.requests.at(-1).messages.at(-1);
  assert.ok(model.requests.length > before);
  assert.equal(last.role, "tool");
  assert.deepEqual(JSON.parse(last.content), verdict);
});

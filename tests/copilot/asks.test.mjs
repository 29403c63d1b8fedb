// What the gateway asks of the Copilot CLI (contract of 2026-11-29, issue 40): switching the
// session's mode with `tap_set_session_mode` (always asked; approved, the extension switches
// with the CLI's session.rpc.mode.set), and a waiting call's approval shown in the CLI's own
// dialog when the session is interactive and its profile says approvalsInClient. The real
// Copilot CLI 1.0.102 offline, a real `tap gateway`, the extension installed by
// `tap install copilot --profile asks`. Run by scripts/test-copilot.sh.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { startFakeModel } from "./fake-model.mjs";
import { tempDir } from "../js-support/process.mjs";
import { waitFor } from "../js-support/wait.mjs";
import { PATIENCE_MS, copilotLogs, runCopilot, runInteractiveCopilot, startGateway } from "./support.mjs";

let dir, gw, model;

before(async () => {
  dir = tempDir("tap-copilot-asks-");
  model = await startFakeModel();
  gw = await startGateway(dir);
  const profile = await gw.tap(["profiles", "set", "asks", "--tool", "tap_*", "--approvals-in-client"]);
  assert.equal(profile.code, 0, profile.stdout + profile.stderr);
  const installed = await gw.tap(["install", "copilot", "--profile", "asks"]);
  assert.equal(installed.code, 0, installed.stdout + installed.stderr);
});

after(async () => {
  await gw?.stop();
  await model?.close();
  if (process.env.KEEP_TEST_DIR) console.log(`kept ${dir}`);
  else fs.rmSync(dir, { recursive: true, force: true });
});

/** The waiting call of `tool`, from `tap approvals list --json`. */
async function waiting(tool) {
  return waitFor(async () => {
    const r = await gw.tap(["approvals", "list", "--json"]);
    if (r.code !== 0) return null;
    const list = JSON.parse(r.stdout);
    return (Array.isArray(list) ? list : list.waiting ?? list.calls ?? []).find((c) => c.tool === tool);
  }, `${tool} waiting for approval`, PATIENCE_MS);
}

test("prompt mode: tap_set_session_mode is asked only in Tap (no dialog in copilot -p), and once approved the CLI switches to plan", async () => {
  const work = path.join(dir, "prompt");
  fs.mkdirSync(work);
  const run = runCopilot({ cwd: work, prompt: 'CALL:tap_set_session_mode{"mode":"plan"}', copilotHome: gw.copilotHome, tapHome: gw.tapHome, modelUrl: model.url });
  const call = await waiting("tap_set_session_mode");
  const approved = await gw.tap(["approvals", "approve", call.id]);
  assert.equal(approved.code, 0, approved.stdout + approved.stderr);
  const r = await run.done;
  assert.equal(r.code, 0, `copilot failed:\n${r.stdout}\n${r.stderr}\n${copilotLogs(gw.copilotHome)}`);
  // The tool's result as the CLI shows it (in plan mode the CLI adds its own message after
  // the result, so the fake model does not quote it).
  assert.match(r.stdout, /\{"mode":"plan","changed":true\}/, r.stdout);
});

test("interactive: the approval is asked in the CLI's dialog; choosing Approve once switches the session to plan", async () => {
  const work = path.join(dir, "interactive");
  fs.mkdirSync(work);
  const debugFile = path.join(dir, "asks-debug.log");
  const run = runInteractiveCopilot({ cwd: work, firstPrompt: 'CALL:tap_set_session_mode{"mode":"plan"}', copilotHome: gw.copilotHome,
                                      tapHome: gw.tapHome, modelUrl: model.url, debugFile });
  try {
    const session = await waitFor(async () =>
      (await gw.status()).sessions.find((s) => s.hostName === "copilot" && s.cwd === work), "the interactive session in tap status", PATIENCE_MS);
    run.sessionId = session.id;
    // The extension's form: the gateway's choices, the first one (Approve once) selected.
    await waitFor(() => /Approve once/.test(run.screen) && /Deny/.test(run.screen), "the approval dialog on the CLI's screen", PATIENCE_MS);
    await waiting("tap_set_session_mode");
    run.send(""); // Enter: accept the selected choice
    const done = await waitFor(() =>
      run.events().find((e) => e.type === "tool.execution_complete" && e.data.result?.content?.includes('"changed":true')), "the tool's result after the dialog", PATIENCE_MS);
    assert.match(done.data.result.content, /"mode":"plan"/);
    assert.ok(run.events().some((e) => e.type === "session.mode_changed" && e.data.newMode === "plan"), "the CLI switched to plan");
    assert.match(fs.readFileSync(debugFile, "utf8"), /approval \S+ -> once sent/);
    await run.exit();
  } catch (e) {
    e.message += `\n--- screen ---\n${run.screen.slice(-3000)}\n--- debug ---\n${fs.existsSync(debugFile) ? fs.readFileSync(debugFile, "utf8") : ""}\n--- logs ---\n${copilotLogs(gw.copilotHome)}`;
    throw e;
  } finally {
    if (run.child.exitCode === null) run.kill();
  }
});

test("interactive: an approval decided in Tap while the CLI's dialog is open goes on; the dialog's late answer is dropped", async () => {
  const work = path.join(dir, "withdrawn");
  fs.mkdirSync(work);
  const debugFile = path.join(dir, "withdrawn-debug.log");
  const run = runInteractiveCopilot({ cwd: work, firstPrompt: 'CALL:tap_set_session_mode{"mode":"autopilot"}', copilotHome: gw.copilotHome,
                                      tapHome: gw.tapHome, modelUrl: model.url, debugFile });
  const log = () => (fs.existsSync(debugFile) ? fs.readFileSync(debugFile, "utf8") : "");
  try {
    const session = await waitFor(async () =>
      (await gw.status()).sessions.find((s) => s.hostName === "copilot" && s.cwd === work), "the interactive session in tap status", PATIENCE_MS);
    run.sessionId = session.id;
    await waitFor(() => /<- approval\.ask/.test(log()) && /Approve once/.test(run.screen), "the approval dialog on the CLI's screen", PATIENCE_MS);
    const call = await waiting("tap_set_session_mode");
    const approved = await gw.tap(["approvals", "approve", call.id]);
    assert.equal(approved.code, 0, approved.stdout + approved.stderr);
    // The gateway tells the host; the call goes on without the dialog's answer.
    await waitFor(() => /<- approval\.withdrawn/.test(log()), "approval.withdrawn at the extension", PATIENCE_MS);
    await waitFor(() => run.events().some((e) => e.type === "session.mode_changed" && e.data.newMode === "autopilot"), "the CLI switched to autopilot", PATIENCE_MS);
    // The SDK cannot close the dialog: the user answers it late, and nothing is sent.
    run.send("");
    await waitFor(() => /withdrawn meanwhile; dropped: once/.test(log()), "the late answer dropped", PATIENCE_MS);
    assert.doesNotMatch(log(), /-> once sent/);
    await run.exit();
  } catch (e) {
    e.message += `\n--- screen ---\n${run.screen.slice(-3000)}\n--- debug ---\n${log()}\n--- logs ---\n${copilotLogs(gw.copilotHome)}`;
    throw e;
  } finally {
    if (run.child.exitCode === null) run.kill();
  }
});

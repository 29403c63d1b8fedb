// Tap's skills and session-start instructions in the real Copilot CLI (issue 40), offline
// against the fake model: `tap install copilot` writes them where Copilot CLI 1.0.102 reads
// personal skills and instructions (docs/skills.md), the model's first request lists the four
// skills and carries the instructions, the model loads one with the CLI's `skill` tool and
// gets its text, and after `tap uninstall copilot` they are gone from the request. Run by
// scripts/test-copilot.sh.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { startFakeModel, textOf } from "./fake-model.mjs";
import { tempDir } from "../js-support/process.mjs";
import { copilotLogs, runCopilot, startGateway } from "./support.mjs";

const SKILLS = ["tap-goal", "tap-loop", "tap-monitor", "tap-orchestrate"];

let dir, gw, model, workspace;

before(async () => {
  dir = tempDir("tap-copilot-skills-");
  model = await startFakeModel();
  gw = await startGateway(dir);
  workspace = path.join(dir, "workspace");
  fs.mkdirSync(workspace);
});

after(async () => {
  await gw?.stop();
  await model?.close();
  if (process.env.KEEP_TEST_DIR) console.log(`kept ${dir}`);
  else fs.rmSync(dir, { recursive: true, force: true });
});

async function copilot(prompt) {
  const from = model.requests.length;
  const r = await runCopilot({ cwd: workspace, prompt, copilotHome: gw.copilotHome, tapHome: gw.tapHome, modelUrl: model.url }).done;
  assert.equal(r.code, 0, `copilot failed:\n${r.stdout}\n${r.stderr}\n${copilotLogs(gw.copilotHome)}`);
  return { ...r, requests: model.requests.slice(from) };
}

/** The system prompt of a request. */
const system = (body) => (body.messages ?? []).filter((m) => m.role === "system").map(textOf).join("\n");

test("installed skills are listed to the model with the instructions, and one loads with its text", async () => {
  const installed = await gw.tap(["install", "copilot"]);
  assert.equal(installed.code, 0, installed.stdout + installed.stderr);

  const r = await copilot('CALL:skill{"skill":"tap-monitor"}');
  const first = system(r.requests[0]);
  for (const s of SKILLS) assert.ok(first.includes(`<name>${s}</name>`), `${s} listed:\n${first.slice(0, 2000)}`);
  assert.ok(first.includes("This session is connected to the Tap gateway."), "the session-start instructions");
  // The model's `skill` call: the CLI puts the skill's instructions (its body, not only the
  // description the list shows) into the conversation of the next request.
  const later = r.requests.slice(1).flatMap((b) => (b.messages ?? []).filter((m) => m.role !== "system").map(textOf));
  assert.ok(later.some((t) => t.includes("# Monitor: watch something, review it on record")), later.join("\n---\n").slice(-3000));
});

test("after tap uninstall copilot the model sees neither", async () => {
  const removed = await gw.tap(["uninstall", "copilot"]);
  assert.equal(removed.code, 0, removed.stdout + removed.stderr);
  const r = await copilot("hello");
  const first = system(r.requests[0]);
  for (const s of SKILLS) assert.ok(!first.includes(`<name>${s}</name>`), `${s} gone`);
  assert.ok(!first.includes("This session is connected to the Tap gateway."));
});

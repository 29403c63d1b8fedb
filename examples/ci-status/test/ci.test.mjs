// Unit tests of the CI logic: configuration errors, parsing the command's output, gate answers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readConfig, ConfigError, parseOutput, checkOnce, gateDecision, gateRules, DEFAULT_POLL_SECONDS, DEFAULT_GATE_TOOLS, MAX_DETAIL_CHARS } from "../src/ci.mjs";

test("readConfig: defaults, and errors naming the variable", () => {
  const c = readConfig({ CI_STATUS_CMD: "echo success" });
  assert.equal(c.pollSeconds, DEFAULT_POLL_SECONDS);
  assert.deepEqual(c.gateTools, DEFAULT_GATE_TOOLS);
  assert.equal(c.name, "ci-status");
  assert.deepEqual(readConfig({ CI_STATUS_CMD: "x", CI_GATE_TOOLS: " sh , zsh " }).gateTools, ["sh", "zsh"]);
  assert.throws(() => readConfig({}), (e) => e instanceof ConfigError && /CI_STATUS_CMD is not set/.test(e.message));
  assert.throws(() => readConfig({ CI_STATUS_CMD: "x", CI_POLL_SECONDS: "0" }), /CI_POLL_SECONDS must be .* at least 0.1; got '0'/);
  assert.throws(() => readConfig({ CI_STATUS_CMD: "x", CI_POLL_SECONDS: "1m" }), /CI_POLL_SECONDS/);
  assert.throws(() => readConfig({ CI_STATUS_CMD: "x", CI_GATE_TOOLS: "my shell" }), /CI_GATE_TOOLS: 'my shell' is not a tool name/);
});

test("parseOutput: first word is the conclusion, the rest describes the run", () => {
  assert.deepEqual(parseOutput("success\n"), { state: "green", conclusion: "success", detail: undefined });
  assert.deepEqual(parseOutput("FAILURE  #42 https://x/runs/42\n"), { state: "red", conclusion: "failure", detail: "#42 https://x/runs/42" });
  assert.equal(parseOutput("in_progress").state, "pending");
  assert.equal(parseOutput("   ").state, "unknown");
  assert.equal(parseOutput(`failure ${"x".repeat(1000)}`).detail.length, MAX_DETAIL_CHARS);
});

test("checkOnce: a failing or hanging command is unknown, not red", async () => {
  const failed = await checkOnce("echo 'gh: not logged in' >&2; exit 4", 5);
  assert.equal(failed.state, "unknown");
  assert.match(failed.detail, /exited with 4: gh: not logged in/);
  const hung = await checkOnce("sleep 5", 0.2);
  assert.equal(hung.state, "unknown");
  assert.match(hung.detail, /timed out after 0.2 s/);
  assert.equal((await checkOnce("printf 'success run 1'", 5)).state, "green");
});

test("gateDecision: deny only when red", () => {
  const at = "2026-01-01T00:00:00.000Z";
  assert.deepEqual(gateDecision({ state: "green", conclusion: "success", checkedAt: at }), { decision: "allow" });
  const red = gateDecision({ state: "red", conclusion: "failure", detail: "run 7", checkedAt: at });
  assert.equal(red.decision, "deny");
  assert.match(red.reason, /failure \(run 7\), checked 2026/);
  assert.equal(gateDecision({ state: "pending", conclusion: "queued", checkedAt: at }).decision, "context");
  assert.equal(gateDecision(undefined).decision, "context");
});

test("gateRules: one gate rule per tool name", () => {
  const rules = gateRules(["shell", "bash"]);
  assert.deepEqual(rules.map((r) => r.match.tool), ["shell", "bash"]);
  for (const r of rules) assert.equal(r.action, "gate");
  const re = new RegExp(rules[0].match.args);
  assert.ok(re.test(JSON.stringify({ command: "git push origin main" })));
  assert.ok(!re.test(JSON.stringify({ command: "git status" })));
});

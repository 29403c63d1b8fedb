// The template end to end: the real gateway, a session from `tap session open`, the provider as
// its own process with a fake CI command (a file the test rewrites), and `tap call` as the agent.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { startGateway, openSession, run, waitFor } from "./helpers/gateway.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const PROVIDER = join(ROOT, "src", "provider.mjs");
/** Small, so a status change shows up within a few hundred ms. */
const TEST_POLL_SECONDS = "0.2";

let gw, session, provider, dir, stateFile;
const setCi = (text) => writeFileSync(stateFile, `${text}\n`);
const call = (tool, args = {}) => gw.tap(["call", "--session", session.id, tool, JSON.stringify(args)]);
// The history's events of stream `ci` (newest first), as the assertions read them.
const history = async () =>
  JSON.parse((await gw.tap(["streams", "history", "--session", session.id, "--stream", "ci@ci-status", "--json"])).stdout).map((e) => ({
    level: e.outcome,
    event: e.text,
    metadata: e.metadata,
  }));
const push = () => call("shell", { command: "git push origin main" });

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "ci-status-test-"));
  stateFile = join(dir, "ci-state");
  setCi("success run 41 https://ci.example/runs/41");
  gw = await startGateway();
  session = await openSession(gw, "ci-status-test");
  // The stand-in for `gh run list …`: prints what the test last wrote.
  provider = run(process.execPath, [PROVIDER], { ...gw.env, CI_STATUS_CMD: `cat '${stateFile}'`, CI_POLL_SECONDS: TEST_POLL_SECONDS });
});

after(async () => {
  provider?.child.kill("SIGTERM");
  await provider?.done;
  await session?.close();
  await gw?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("ci_status answers the last check, and the first check is kept on stream ci", async () => {
  const status = await waitFor(async () => {
    const r = await call("ci_status");
    return r.code === 0 && JSON.parse(r.stdout);
  }, `ci_status (provider stderr: ${provider.out.stderr})`);
  assert.equal(status.state, "green");
  assert.equal(status.conclusion, "success");
  assert.equal(status.detail, "run 41 https://ci.example/runs/41");
  assert.ok(!Number.isNaN(Date.parse(status.checkedAt)), `checkedAt: ${status.checkedAt}`);
  const events = await waitFor(async () => {
    const h = await history();
    return h.length > 0 && h;
  }, "the first status on stream ci");
  assert.equal(events.at(-1).level, "keep");
  assert.match(events.at(-1).event, /CI is success/);
});

test("green: `git push` in a shell tool is not denied", async () => {
  const r = await push();
  // No provider has `shell` here, so after the precheck allowed it the call itself is NOT_FOUND.
  assert.notEqual(JSON.parse(r.stdout).errorCode, "DENIED", r.stdout);
});

test("success → failure pushes a surface event and denies `git push`, naming the run", async () => {
  setCi("failure run 42 https://ci.example/runs/42");
  const change = await waitFor(async () => (await history()).find((e) => e.level === "surface" && /failure/.test(e.event)), "the surface event");
  assert.match(change.event, /success → failure: run 42/);
  assert.equal(change.metadata.state, "red");
  // The session host saw it too: `tap session open` printed a delivery line.
  await waitFor(() => session.lines().some((l) => l.type === "delivery" && JSON.stringify(l).includes("run 42")), "the delivery line");

  const r = await push();
  assert.equal(r.code, 1);
  const out = JSON.parse(r.stdout);
  assert.equal(out.errorCode, "DENIED");
  assert.match(out.error, /CI is red/);
  assert.match(out.error, /run 42 https:\/\/ci\.example\/runs\/42/);

  for (const tool of ["bash", "run_in_terminal"]) {
    const other = JSON.parse((await call(tool, { command: "cd repo && git  push --force" })).stdout);
    assert.equal(other.errorCode, "DENIED", `${tool}: ${JSON.stringify(other)}`);
  }
  // Other commands and other tools are not the gate's business.
  assert.notEqual(JSON.parse((await call("shell", { command: "git status" })).stdout).errorCode, "DENIED");
  assert.notEqual(JSON.parse((await call("python", { code: "git push" })).stdout).errorCode, "DENIED");
});

test("failure → success lets `git push` through again", async () => {
  setCi("success run 43");
  await waitFor(async () => (await history()).find((e) => e.level === "surface" && /failure → success/.test(e.event)), "the recovery event");
  const status = JSON.parse((await call("ci_status")).stdout);
  assert.equal(status.state, "green");
  const r = await push();
  assert.notEqual(JSON.parse(r.stdout).errorCode, "DENIED", r.stdout);
});

test("an unchanged status pushes nothing more", async () => {
  const before = (await history()).length;
  // Several polls' worth of checks with the same answer; `refresh` forces one more.
  await call("ci_status", { refresh: true });
  await call("ci_status", { refresh: true });
  assert.equal((await history()).length, before);
});

test("bad configuration exits 2 with the variable named", async () => {
  const missing = await run(process.execPath, [PROVIDER], { ...gw.env, CI_STATUS_CMD: "" }).done;
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /CI_STATUS_CMD is not set/);
  const badPoll = await run(process.execPath, [PROVIDER], { ...gw.env, CI_STATUS_CMD: "true", CI_POLL_SECONDS: "soon" }).done;
  assert.equal(badPoll.code, 2);
  assert.match(badPoll.stderr, /CI_POLL_SECONDS must be a number of seconds.*'soon'/);
});

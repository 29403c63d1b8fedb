// A Copilot session with no gateway running starts one (issue 40): the real Copilot CLI
// 1.0.102 offline with the extension installed by the real `tap install copilot`, `tap` on
// the CLI's PATH, and no gateway for its TAP_HOME. The extension starts
// `tap gateway --exit-when-idle`, the session gets the gateway's tools on its first prompt,
// and the gateway stops by itself once the CLI has exited. Run by scripts/test-copilot.sh.

import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { startFakeModel } from "./fake-model.mjs";
import { tapBin } from "../js-support/gateway.mjs";
import { tempDir } from "../js-support/process.mjs";
import { waitFor } from "../js-support/wait.mjs";
import { PATIENCE_MS, copilotLogs, runCopilot, tap } from "./support.mjs";

/** `tap gateway --exit-when-idle`'s default grace: it stops this long after the last session. */
const IDLE_GRACE_MS = 30000;

/** A port free now: the saved port is a gateway's lock, so this test's meets no other's. */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

/** Whether `pid` still runs. */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A Copilot home with the extension installed by `tap install copilot`, a TAP_HOME whose
 * saved port is free (no gateway runs for it), and a working directory. */
async function installed(dir) {
  const copilotHome = path.join(dir, "copilot");
  const tapHome = path.join(dir, "tap");
  fs.mkdirSync(tapHome);
  const port = await freePort();
  fs.writeFileSync(path.join(tapHome, "settings.json"), JSON.stringify({ port }));
  assert.equal((await tap(["install", "copilot", "--copilot-home", copilotHome])).code, 0);
  const work = path.join(dir, "work");
  fs.mkdirSync(work);
  return { copilotHome, tapHome, work, port };
}

test("with no gateway running, a session starts one with the tap on PATH, gets its tools, and the gateway exits when idle after the CLI", async () => {
  const dir = tempDir("tap-copilot-start-");
  const model = await startFakeModel();
  let pid;
  try {
    const { copilotHome, tapHome, work, port } = await installed(dir);

    const PATH = `${path.dirname(tapBin())}${path.delimiter}${process.env.PATH}`;
    const r = await runCopilot({ cwd: work, prompt: "CALL:tap_get_session_state{}", copilotHome, tapHome, modelUrl: model.url, env: { PATH } }).done;
    assert.equal(r.code, 0, `copilot failed:\n${r.stdout}\n${r.stderr}\n${copilotLogs(copilotHome)}`);
    assert.match(r.stdout, /Tap: no Tap gateway was running; started .*tap gateway --exit-when-idle/, r.stdout);
    // The gateway's own tool answered on the first prompt: the session registered with it.
    assert.match(r.stdout, /RESULT\(tap_get_session_state\): \{/, r.stdout);
    assert.ok(model.requests[0].tools.some((t) => t.function?.name === "tap_get_session_state"), "the gateway's tools on the first request");

    const info = JSON.parse(fs.readFileSync(path.join(tapHome, "gateway.json"), "utf8"));
    assert.match(info.address, new RegExp(`127\\.0\\.0\\.1:${port}$`), info.address);
    pid = info.pid;
    // No session left: it stops by itself after its grace period.
    await waitFor(() => !alive(pid), "the started gateway to exit when idle", IDLE_GRACE_MS + PATIENCE_MS);
  } finally {
    if (pid && alive(pid)) process.kill(pid, "SIGKILL");
    await model.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("with no tap on PATH, the session starts the tap `tap install copilot` recorded", async () => {
  const dir = tempDir("tap-copilot-start-recorded-");
  const model = await startFakeModel();
  let pid;
  try {
    const { copilotHome, tapHome, work } = await installed(dir);
    const record = JSON.parse(fs.readFileSync(path.join(copilotHome, "extensions/tap/.tap-install.json"), "utf8"));
    assert.equal(fs.realpathSync(record.tap), fs.realpathSync(tapBin()), JSON.stringify(record));

    // Every directory that holds a `tap` left out of PATH: only the record can name it.
    const hasTap = (d) => { try { return fs.statSync(path.join(d, "tap")).isFile(); } catch { return false; } };
    const PATH = (process.env.PATH ?? "").split(path.delimiter).filter((d) => d && !hasTap(d)).join(path.delimiter);
    const r = await runCopilot({ cwd: work, prompt: "CALL:tap_get_session_state{}", copilotHome, tapHome, modelUrl: model.url, env: { PATH } }).done;
    assert.equal(r.code, 0, `copilot failed:\n${r.stdout}\n${r.stderr}\n${copilotLogs(copilotHome)}`);
    assert.match(r.stdout, /Tap: no Tap gateway was running; started .*tap gateway --exit-when-idle/, r.stdout);
    assert.match(r.stdout, /RESULT\(tap_get_session_state\): \{/, r.stdout);
    pid = JSON.parse(fs.readFileSync(path.join(tapHome, "gateway.json"), "utf8")).pid;
  } finally {
    // Not waited out here: the test above checks the idle exit.
    if (pid && alive(pid)) process.kill(pid, "SIGTERM");
    await model.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// Test kit: the real `tap gateway` (TAP_BIN) on 127.0.0.1:0 with a temporary TAP_HOME, a session
// opened with `tap session open`, and `tap` commands as child processes. Nothing here sleeps
// for readiness: every wait polls a condition until a deadline.
//
// Self-contained on purpose: a template is where a provider's own repository starts, so its
// tests must still run once the folder is copied out of this one, and cannot import the
// repository's JS test kit (tests/js-support/). This file is the kit's minimum with the kit's
// shapes (`waitFor(check, what, ms)`, `startGateway()` -> { env, url, tap(args), stop() },
// `openSession(gw, label)`), and is the same file in every template (scripts/test-templates.sh
// checks that).
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const TAP_BIN = process.env.TAP_BIN || "tap";
/** Deadline for anything a test waits on (start-up, an event, a status change). */
export const WAIT_MS = 15_000;
/** How often a condition is polled while waiting. */
const POLL_MS = 25;

export async function waitFor(check, what, ms = WAIT_MS) {
  const end = Date.now() + ms;
  let last;
  for (;;) {
    try { last = await check(); } catch (e) { last = e; }
    if (last && !(last instanceof Error)) return last;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}${last instanceof Error ? ` (last: ${last.message})` : ""}`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** Spawns a child and collects its output; `done` resolves with {code, stdout, stderr}. */
export function run(cmd, args, env, opts = {}) {
  const child = spawn(cmd, args, { env, stdio: ["ignore", "pipe", "pipe"], ...opts });
  const out = { stdout: "", stderr: "" };
  child.stdout.on("data", (d) => { out.stdout += d; });
  child.stderr.on("data", (d) => { out.stderr += d; });
  const done = new Promise((resolve) => child.on("exit", (code) => resolve({ code, stdout: out.stdout.trim(), stderr: out.stderr })));
  return { child, done, out };
}

export async function startGateway() {
  const home = mkdtempSync(join(tmpdir(), "tap-example-"));
  // Only this gateway: no inherited URL or token may point the provider or `tap` elsewhere.
  const env = { ...process.env, TAP_HOME: home, COPILOT_HOME: join(home, "copilot"), TAP_LOG: "warn",
    TAP_GATEWAY_URL: "", TAP_PROVIDER_TOKEN: "", TAP_PROVIDER_TOKEN_FILE: "" };
  const gw = run(TAP_BIN, ["gateway", "--listen", "127.0.0.1:0"], env);
  let exited = false;
  gw.child.on("exit", () => { exited = true; });
  const info = await waitFor(() => {
    if (exited) throw new Error(`tap gateway exited: ${gw.out.stderr}`);
    const j = JSON.parse(readFileSync(join(home, "gateway.json"), "utf8"));
    return j.pid === gw.child.pid && readFileSync(join(home, "provider-token"), "utf8").trim() ? j : null;
  }, "the gateway's gateway.json");
  return {
    home, env, url: info.address,
    tap: (args) => run(TAP_BIN, args, env).done,
    async stop() {
      if (!exited) { const gone = new Promise((r) => gw.child.once("exit", r)); gw.child.kill("SIGTERM"); await gone; }
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** `tap session open --label LABEL`; resolves with {id, lines, close()} once it printed the id. */
export async function openSession(gw, label) {
  const s = run(TAP_BIN, ["session", "open", "--label", label], gw.env);
  const first = await waitFor(() => s.out.stdout.includes("\n") && JSON.parse(s.out.stdout.split("\n")[0]), "the session id");
  return {
    id: first.sessionId,
    /** Every JSON line `tap session open` printed so far (session.tools, delivery, …). */
    lines: () => s.out.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l)),
    async close() { const gone = s.done; s.child.kill("SIGTERM"); await gone; },
  };
}

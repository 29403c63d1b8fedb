// What the panel's browser e2e tests (ui/tests/e2e) and the desktop app's e2e tests
// (tests/desktop) share: waiting with a deadline, child processes that are always cleaned
// up, running a command, the `tap` binary from TAP_BIN, `tap session open` children, and a
// token provider's handshake. Each suite's own support.mjs imports this by relative path
// and keeps only what is specific to it (Chromium and the panel; X11, D-Bus, WebDriver).
//
// Nothing here sleeps to wait for readiness: `waitFor` polls a condition until a deadline.

import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";

/** Polls `check` (sync or async) until it returns a truthy value; throws `what` after `timeout` ms. */
export async function waitFor(check, what, timeout = 20000, every = 50) {
  const deadline = Date.now() + timeout;
  let lastError;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeout} ms waiting for ${what}${lastError ? ` (last error: ${lastError.message})` : ""}`);
    }
    await new Promise((r) => setTimeout(r, every));
  }
}

// ---- child processes -----------------------------------------------------------------------

/** Every tracked child still running; killed when this process exits, so a failing test leaves nothing behind. */
const running = new Set();
process.on("exit", () => {
  for (const child of running) {
    try {
      child.kill("SIGKILL");
    } catch {
      /* already gone */
    }
  }
});

/**
 * Tracks a spawned child: collects its output (so its pipes never fill), resolves
 * `exited` with its exit code (or signal) and records it in `code`, and registers it for
 * the exit-time cleanup.
 */
export function track(child, name) {
  const out = { stdout: "", stderr: "", name, code: undefined };
  running.add(child);
  child.stdout?.setEncoding("utf8").on("data", (d) => (out.stdout += d));
  child.stderr?.setEncoding("utf8").on("data", (d) => (out.stderr += d));
  out.exited = new Promise((resolve) =>
    child.on("exit", (code, signal) => {
      running.delete(child);
      out.code = code ?? signal;
      resolve(out.code);
    }),
  );
  return out;
}

/** Stops a child with `signal` (graceful), then SIGKILL after `grace` ms; resolves with its exit code. */
export async function stopChild(child, output, signal = "SIGTERM", grace = 20000) {
  if (child.exitCode === null && child.signalCode === null) {
    child.kill(signal);
    const timer = setTimeout(() => child.kill("SIGKILL"), grace);
    await output.exited;
    clearTimeout(timer);
  }
  return output.exited;
}

/** Runs a command; resolves with { code, stdout, stderr } (never rejects). */
export function run(cmd, args, { env = process.env, timeout = 30000, input } = {}) {
  return new Promise((resolve) => {
    const child = execFile(cmd, args, { env, timeout, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr });
    });
    if (input !== undefined) child.stdin.end(input);
  });
}

// ---- the tap binary ------------------------------------------------------------------------

/** The binary named by env var `variable`: required, so a stale default can never be tested by mistake. */
export function requiredBin(variable, hint) {
  const bin = process.env[variable];
  if (!bin) throw new Error(`Set ${variable} (${hint})`);
  if (!existsSync(bin)) throw new Error(`${variable}=${bin} does not exist`);
  return bin;
}

/** The `tap` binary under test (TAP_BIN). */
export const tapBin = () =>
  requiredBin("TAP_BIN", "the tap binary to test, e.g. `cargo build -p tap-cli && TAP_BIN=$PWD/target/debug/tap npm run test:e2e`");

/** `tap pairing list --json` with `env`, parsed (throws on failure). */
export async function pairings(env) {
  const r = await run(tapBin(), ["pairing", "list", "--json"], { env });
  if (r.code !== 0) throw new Error(`tap pairing list failed (${r.code}): ${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout);
}

/**
 * `tap session open --label LABEL …extra` as a tracked child with `env`; resolves once it
 * printed its session id. `stop()` interrupts it (SIGINT, as Ctrl-C).
 */
export async function openSession(env, label, extra = []) {
  const child = spawn(tapBin(), ["session", "open", "--label", label, ...extra], { env, stdio: ["ignore", "pipe", "pipe"] });
  const output = track(child, `session ${label}`);
  const id = await waitFor(() => {
    if (child.exitCode !== null) throw new Error(`tap session open exited: ${output.stdout}${output.stderr}`);
    return output.stdout.includes("\n") ? JSON.parse(output.stdout.split("\n")[0]).sessionId : null;
  }, `session ${label} to register`);
  return { id, proc: child, output, stop: () => stopChild(child, output, "SIGINT") };
}

// ---- providers -----------------------------------------------------------------------------

/** The provider token of the gateway whose TAP_HOME is `home`. */
export async function providerToken(home) {
  return (await readFile(path.join(home, "provider-token"), "utf8")).trim();
}

/**
 * The next message of `type` in `inbox` (filled by the caller's socket); an `error` there
 * first fails with `name` and the error.
 */
export async function expectIn(inbox, type, name) {
  const m = await waitFor(() => inbox.find((m) => m.type === type || m.type === "error"), `${name}: ${type}`);
  if (m.type !== type) throw new Error(`${name}: ${JSON.stringify(m)}`);
  return m;
}

/**
 * A project-trust provider's handshake on an open socket `ws` (any WebSocket with
 * `send(string)`) whose messages land in `inbox`: `auth` with `token`, then `hello` with
 * `hello` (name, session, tools, …). Resolves with the `hello.ack`.
 */
export async function tokenHandshake(ws, inbox, token, hello) {
  ws.send(JSON.stringify({ type: "auth", token }));
  await expectIn(inbox, "sessions", hello.name);
  ws.send(JSON.stringify({ type: "hello", protocolVersion: 2, ...hello }));
  return expectIn(inbox, "hello.ack", hello.name);
}

/** A tool definition for e2e providers. */
export function toolDef(name, description) {
  return { name, description, parameters: { type: "object", properties: {} } };
}

// The real `tap` (TAP_BIN) for the JS test suites: a `tap gateway` child on 127.0.0.1 port 0
// with its own TAP_HOME, read from its gateway.json and token files; `tap` commands against
// it; `tap session open` children; and a token provider's handshake.

import { mkdirSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { remove, requiredBin, run, start, stopChild, tempDir, waitForOutput } from "./process.mjs";
import { GiveUp, waitFor } from "./wait.mjs";

/** The `tap` binary under test (TAP_BIN). */
export const tapBin = () =>
  requiredBin("TAP_BIN", "the tap binary to test, e.g. `cargo build -p tap-cli && TAP_BIN=$PWD/target/debug/tap npm run test:e2e`");

/**
 * Variables that could point a provider or `tap` at another gateway than the test's: never
 * inherited by a test gateway's environment.
 */
const FOREIGN = ["TAP_GATEWAY_URL", "TAP_PROVIDER_TOKEN", "TAP_PROVIDER_TOKEN_FILE"];

/**
 * `$TAP_HOME/gateway.json` once it names process `pid` (any process when `pid` is
 * undefined). `gone()`, when given, is asked on each try: a reason (the process exited, and
 * how) means the file will never come, and the wait fails at once with it.
 */
export function gatewayJson(tapHome, pid, what = "gateway.json", gone) {
  return waitFor(async () => {
    const reason = gone?.();
    if (reason) throw new GiveUp(reason);
    const info = JSON.parse(await readFile(path.join(tapHome, "gateway.json"), "utf8"));
    return pid === undefined || info.pid === pid ? info : null;
  }, what);
}

/** The provider token of the gateway whose TAP_HOME is `tapHome`. */
export async function providerToken(tapHome) {
  return (await readFile(path.join(tapHome, "provider-token"), "utf8")).trim();
}

/**
 * Starts `tap gateway --listen LISTEN` in `dir` (a new temp dir `PREFIX…` when not given):
 * TAP_HOME is `dir/tap`, COPILOT_HOME `dir/copilot`. Its environment is `baseEnv` (this
 * process's by default) without FOREIGN, plus `env` (a key set to undefined is removed).
 * `ownHome` gives it an empty HOME in `dir`, so that the user's shell profile (a slow `pyenv
 * init`, a lock it waits on) cannot delay a command it runs through a login shell. Resolves
 * once gateway.json names the new process and its tokens are written.
 *
 * The gateway (a plain object) has: dir, tapHome, copilotHome, env, url ("ws://…"), hostPort,
 * httpBase, info (gateway.json), child and output (the running process), token and hostToken;
 * tap(args) runs `tap` against it; status(), loginUrl(), pairings(), openSession(label);
 * restart() on the same port and TAP_HOME; stop() stops its sessions and itself, and removes
 * `dir` if it was made here.
 */
export async function startGateway({ dir, prefix = "tap-test-", listen = "127.0.0.1:0", baseEnv = process.env, env: extra = {}, ownHome = false } = {}) {
  const bin = tapBin();
  const ownDir = !dir;
  dir ??= tempDir(prefix);
  const tapHome = path.join(dir, "tap");
  const copilotHome = path.join(dir, "copilot");
  // Warnings and errors only unless asked (the panel's Logs page test asks for info): a
  // gateway's output is kept in memory for failure messages.
  const inherited = { ...baseEnv };
  for (const key of FOREIGN) delete inherited[key];
  const env = { ...inherited, TAP_HOME: tapHome, COPILOT_HOME: copilotHome, TAP_LOG: "warn", ...extra };
  for (const [key, value] of Object.entries(env)) if (value === undefined) delete env[key];
  if (ownHome) {
    env.HOME = path.join(dir, "home");
    mkdirSync(env.HOME);
  }

  let proc;
  try {
    proc = await spawnGateway(bin, env, listen);
  } catch (e) {
    if (ownDir) remove(dir);
    throw e;
  }
  const hostPort = new URL(proc.info.address).host; // "127.0.0.1:PORT"
  const sessions = [];
  const gateway = {
    dir,
    tapHome,
    copilotHome,
    env,
    url: proc.info.address,
    hostPort,
    httpBase: `http://${hostPort}`,
    token: readFileSync(path.join(tapHome, "provider-token"), "utf8").trim(),
    hostToken: readFileSync(path.join(tapHome, "host-token"), "utf8").trim(),
    get info() {
      return proc.info;
    },
    get child() {
      return proc.child;
    },
    get output() {
      return proc.output;
    },
    /** Runs `tap ARGS…` against this gateway; resolves with { code, stdout, stderr }. */
    tap(args, timeout = 30000) {
      return run(bin, args, { env, timeout });
    },
    /** `tap status --json`, parsed. */
    async status() {
      const r = await gateway.tap(["status", "--json"]);
      if (r.code !== 0) throw new Error(`tap status failed (${r.code}): ${r.stdout}${r.stderr}`);
      return JSON.parse(r.stdout);
    },
    /** A fresh one-time login link to the panel (`tap ui --no-open`). */
    async loginUrl() {
      const r = await gateway.tap(["ui", "--no-open"]);
      if (r.code !== 0) throw new Error(`tap ui failed (${r.code}): ${r.stdout}${r.stderr}`);
      return r.stdout.trim();
    },
    /** `tap pairing list --json`, parsed. */
    pairings() {
      return pairings(env);
    },
    /** `tap session open --label LABEL …extra`; stopped by stop() and restart(). */
    async openSession(label, extra = []) {
      const session = await openSession(env, label, extra);
      sessions.push(session);
      return session;
    },
    /** Stops the sessions opened here, then the gateway (gracefully). */
    async stopProcesses() {
      for (const s of sessions.splice(0)) await s.stop();
      await stopGateway(proc);
    },
    /** Stops everything, then starts the gateway again on the same port with the same TAP_HOME. */
    async restart() {
      const previous = proc.info;
      await gateway.stopProcesses();
      proc = await spawnGateway(bin, env, hostPort, previous);
    },
    async stop() {
      await gateway.stopProcesses();
      if (ownDir) remove(dir);
    },
  };
  return gateway;
}

/**
 * SIGTERM, as the tests have always stopped it (`tap gateway` stops the same graceful way on
 * SIGINT and SIGTERM: crates/tap-cli/src/signals.rs), then SIGKILL after 15 s.
 */
const stopGateway = ({ child, output }) => stopChild(child, output, "SIGTERM", 15000);

/** Spawns `tap gateway --listen LISTEN`; resolves once gateway.json names it (not `previous`) and its provider token is written. */
async function spawnGateway(bin, env, listen, previous) {
  const { child, output } = start(bin, ["gateway", "--listen", listen], { env }, "tap gateway");
  const alive = () => child.exitCode === null && child.signalCode === null;
  try {
    const info = await waitFor(async () => {
      if (!alive()) throw new GiveUp(`tap gateway exited with ${child.exitCode ?? child.signalCode}: ${output.stderr}`);
      const info = JSON.parse(await readFile(path.join(env.TAP_HOME, "gateway.json"), "utf8"));
      if (info.pid !== child.pid || info.pid === previous?.pid) return null;
      return (await providerToken(env.TAP_HOME)) ? info : null;
    }, "the gateway's gateway.json and tokens");
    return { child, output, info };
  } catch (e) {
    await stopChild(child, output, "SIGKILL");
    throw e;
  }
}

/** `tap pairing list --json` with `env`, parsed (throws on failure). */
export async function pairings(env) {
  const r = await run(tapBin(), ["pairing", "list", "--json"], { env });
  if (r.code !== 0) throw new Error(`tap pairing list failed (${r.code}): ${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout);
}

/**
 * `tap session open --label LABEL …extra` as a tracked child with `env`; resolves once it
 * printed its session id. `lines()` is every JSON line it printed so far; `stop()`
 * interrupts it (SIGINT, as Ctrl-C).
 */
export async function openSession(env, label, extra = []) {
  const { child, output } = start(tapBin(), ["session", "open", "--label", label, ...extra], { env }, `session ${label}`);
  const first = await waitForOutput(child, output, (text) => text.includes("\n") && JSON.parse(text.split("\n")[0]), `session ${label} to register`);
  return {
    id: first.sessionId,
    proc: child,
    output,
    lines: () => output.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l)),
    stop: () => stopChild(child, output, "SIGINT"),
  };
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

/** A tool definition for test providers. */
export function toolDef(name, description) {
  return { name, description, parameters: { type: "object", properties: {} } };
}

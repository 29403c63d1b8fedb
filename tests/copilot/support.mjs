// Test support: the real `tap` (TAP_BIN), a `tap gateway` child, the real Copilot CLI
// (COPILOT_BIN, installed by scripts/test-copilot.sh) with a clean environment, and waits with
// deadlines instead of sleeps.

import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";

/** How long a test waits for something that should happen (a loaded machine is slow). */
export const PATIENCE_MS = 30000;
/** How soon a session must leave the gateway after the CLI exits: well under the session
 * hosts' 30 s resume window, so only the extension's own `session.end` can make it. */
export const SESSION_END_MS = 5000;
/** How long `exit()` waits for the CLI to act on `/exit` before typing it again. */
const EXIT_RETYPE_MS = 3000;
/** Poll interval for state only visible by asking (files, `tap status`). */
const POLL_MS = 50;

const cache = path.join(os.homedir(), ".cache", "tap-gateway", "copilot");
export const TAP_BIN = process.env.TAP_BIN;
export const COPILOT_BIN = process.env.COPILOT_BIN ?? path.join(cache, "node_modules", ".bin", "copilot");
const XDG_CACHE_HOME = process.env.COPILOT_XDG_CACHE_HOME ?? path.join(cache, "xdg");
if (!TAP_BIN) throw new Error("set TAP_BIN to the tap binary under test (scripts/test-copilot.sh does)");

/** Polls `f` until it returns a truthy value; throws after PATIENCE_MS naming `what`. */
export async function eventually(what, f, patience = PATIENCE_MS) {
  const deadline = Date.now() + patience;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/**
 * The complete lines of a JSON Lines file another process is still appending to, parsed. The
 * text after the last newline is a line being written (its writer has not finished it), so it
 * is left for the next read: parsing it failed a CI run with "Unexpected end of JSON input".
 */
export function readJsonLines(file) {
  const lines = (fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "").split("\n");
  lines.pop();
  return lines.filter(Boolean).map((l) => JSON.parse(l));
}

export function tempDir() {
  return fs.mkdtempSync(path.join(os.tmpdir(), "tap-copilot-"));
}

/** Runs `tap ARGS` to completion. */
export function tap(args, { tapHome, copilotHome } = {}) {
  const env = { PATH: process.env.PATH, HOME: process.env.HOME,
                ...(tapHome ? { TAP_HOME: tapHome } : {}), ...(copilotHome ? { COPILOT_HOME: copilotHome } : {}) };
  const r = spawnSync(TAP_BIN, args, { env, encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A `tap gateway --listen 127.0.0.1:0` child with its own TAP_HOME. */
export async function startGateway(dir) {
  const tapHome = path.join(dir, "tap");
  const copilotHome = path.join(dir, "copilot");
  const log = fs.openSync(path.join(dir, "gateway.log"), "a");
  const child = spawn(TAP_BIN, ["gateway", "--listen", "127.0.0.1:0"], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, TAP_HOME: tapHome, COPILOT_HOME: copilotHome },
    stdio: ["ignore", log, log],
  });
  const exited = new Promise((r) => child.on("exit", r));
  const state = await eventually("gateway.json", () => {
    if (child.exitCode !== null) throw new Error(`the gateway exited early: ${fs.readFileSync(path.join(dir, "gateway.log"), "utf8")}`);
    try {
      return JSON.parse(fs.readFileSync(path.join(tapHome, "gateway.json"), "utf8"));
    } catch {
      return null;
    }
  });
  return {
    child, tapHome, copilotHome, url: state.address,
    token: () => fs.readFileSync(path.join(tapHome, "provider-token"), "utf8").trim(),
    tap: (args) => tap(args, { tapHome, copilotHome }),
    status() {
      const r = tap(["status", "--json"], { tapHome });
      if (r.code !== 0) throw new Error(`tap status failed: ${r.stdout}${r.stderr}`);
      return JSON.parse(r.stdout);
    },
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/**
 * `copilot -p PROMPT` in `cwd`, offline against `modelUrl`, with nothing inherited that could
 * reach GitHub or change its behaviour. Resolves `done` with {code, stdout, stderr}.
 */
export function runCopilot({ cwd, prompt, copilotHome, tapHome, modelUrl }) {
  const env = {
    PATH: process.env.PATH, HOME: process.env.HOME, XDG_CACHE_HOME,
    COPILOT_HOME: copilotHome, TAP_HOME: tapHome,
    COPILOT_OFFLINE: "true", COPILOT_AUTO_UPDATE: "false",
    COPILOT_PROVIDER_BASE_URL: modelUrl, COPILOT_MODEL: "fake-model",
    ...(process.env.TAP_COPILOT_DEBUG ? { TAP_COPILOT_DEBUG: process.env.TAP_COPILOT_DEBUG } : {}),
  };
  const child = spawn(COPILOT_BIN, ["-p", prompt, "--allow-all-tools", "--no-auto-update"], {
    cwd, env, stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  const waiters = [];
  child.stdout.on("data", (d) => {
    stdout += d;
    for (const w of [...waiters]) if (w.re.test(stdout)) { waiters.splice(waiters.indexOf(w), 1); w.resolve(); }
  });
  child.stderr.on("data", (d) => (stderr += d));
  const done = new Promise((resolve) => child.on("exit", (code) => resolve({ code, stdout, stderr })));
  const timer = setTimeout(() => child.kill("SIGKILL"), PATIENCE_MS * 2);
  done.then(() => clearTimeout(timer));
  return {
    child, done,
    get stdout() { return stdout; },
    /** Resolves when stdout matches `re`; rejects when the CLI exits first. */
    waitFor(re) {
      if (re.test(stdout)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        waiters.push({ re, resolve });
        done.then(() => reject(new Error(`copilot exited before printing ${re}:\n${stdout}\n${stderr}`)));
      });
    },
  };
}

/**
 * An interactive Copilot CLI session (what a user runs: it stays up between turns, unlike
 * `copilot -p`) under a pseudo-terminal from util-linux `script`, started with `firstPrompt`.
 * The TUI redraws in place, so tests read the session's own record instead of the screen:
 * `$COPILOT_HOME/session-state/<id>/events.jsonl` (user/assistant messages, tool calls).
 * `COPILOT_ALLOW_ALL` skips the folder-trust dialog (the flag alone does not).
 */
export function runInteractiveCopilot({ cwd, firstPrompt, copilotHome, tapHome, modelUrl, debugFile }) {
  const env = {
    PATH: process.env.PATH, HOME: process.env.HOME, XDG_CACHE_HOME, TERM: "xterm-256color",
    COPILOT_HOME: copilotHome, TAP_HOME: tapHome,
    COPILOT_OFFLINE: "true", COPILOT_AUTO_UPDATE: "false", COPILOT_ALLOW_ALL: "true",
    COPILOT_PROVIDER_BASE_URL: modelUrl, COPILOT_MODEL: "fake-model",
    ...(debugFile ? { TAP_COPILOT_DEBUG: debugFile } : {}),
  };
  const quote = (s) => `'${s.replace(/'/g, "'\\''")}'`;
  const command = `stty cols 200 rows 50; exec ${quote(COPILOT_BIN)} --allow-all-tools --no-auto-update -i ${quote(firstPrompt)}`;
  // Its own process group, so that a failed test can stop `script` and the CLI together.
  const child = spawn("script", ["-qfec", command, "/dev/null"], { cwd, env, stdio: ["pipe", "pipe", "pipe"], detached: true });
  const kill = () => {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {} // already gone
  };
  let screen = "";
  child.stdout.on("data", (d) => (screen = (screen + d).slice(-20000)));
  child.stderr.on("data", (d) => (screen = (screen + d).slice(-20000)));
  const done = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
  const timer = setTimeout(kill, PATIENCE_MS * 6);
  done.then(() => clearTimeout(timer));
  let sessionId = null;
  return {
    child, done, kill,
    get screen() { return screen; },
    /** Copilot's session id (the extension registers it with the gateway): whose events to read. */
    set sessionId(id) { sessionId = id; },
    /** Copilot's id for the session started in `cwd` (from session-state), or null before it exists. */
    findSessionId() {
      const root = path.join(copilotHome, "session-state");
      for (const id of fs.existsSync(root) ? fs.readdirSync(root) : []) {
        try {
          const first = JSON.parse(fs.readFileSync(path.join(root, id, "events.jsonl"), "utf8").split("\n")[0]);
          if (first.type === "session.start" && first.data.context?.cwd === cwd) return first.data.sessionId;
        } catch {} // not a session directory, or not written yet
      }
      return null;
    },
    /** The session's recorded events so far. */
    events() {
      if (!sessionId) throw new Error("set the interactive session's sessionId first");
      return readJsonLines(path.join(copilotHome, "session-state", sessionId, "events.jsonl"));
    },
    /** Types `text` at the prompt and presses Enter. */
    send(text) {
      child.stdin.write(`${text}\r`);
    },
    /** Ends the session the way a user does (`/exit`); SIGKILL if it has not exited in time.
     * The TUI sometimes swallows a line typed while it is still drawing the last answer, so
     * `/exit` is typed again (after clearing the input line) until the CLI goes. */
    async exit() {
      const retype = () => {
        if (child.exitCode === null) child.stdin.write("\x15/exit\r");
      };
      retype();
      const again = setInterval(retype, EXIT_RETYPE_MS);
      const t = setTimeout(kill, PATIENCE_MS);
      await done;
      clearInterval(again);
      clearTimeout(t);
    },
  };
}

/** Debian's Chromium, headless, as the panel's e2e tests run it (never a downloaded browser;
 * CHROMIUM overrides the path). */
export function launchChromium() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
}

/** Logs into the gateway's panel (built into `tap`) with a `tap ui` login link in a new page of
 * `browser` and opens its Sessions page. */
export async function openSessionsPage(browser, gateway) {
  const login = gateway.tap(["ui", "--no-open"]);
  if (login.code !== 0) throw new Error(`tap ui failed: ${login.stdout}${login.stderr}`);
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(login.stdout.trim());
  await page.getByRole("status").filter({ hasText: "Live" }).waitFor();
  await page.getByRole("navigation", { name: "Pages" }).getByRole("link", { name: "Sessions" }).click();
  await page.getByRole("heading", { level: 1, name: "Sessions" }).waitFor();
  return page;
}

/** The Copilot CLI's own log files, for failure messages (extension errors only go there). */
export function copilotLogs(copilotHome) {
  const dir = path.join(copilotHome, "logs");
  try {
    return fs.readdirSync(dir).map((f) => fs.readFileSync(path.join(dir, f), "utf8")).join("\n").slice(-6000);
  } catch {
    return "(no logs)";
  }
}

/** Text of every user/tool message of a model request, for assertions on what it received. */
export function requestText(body) {
  return (body.messages ?? []).map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content))).join("\n");
}

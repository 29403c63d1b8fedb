// The Copilot suite's own helpers: the real Copilot CLI (COPILOT_BIN, installed by
// scripts/test-copilot.sh) with a clean environment, its session records and logs, and the
// panel's Sessions page. Waiting, the real `tap` (TAP_BIN) and `tap gateway`, temp dirs and
// Chromium are the JS test kit's (tests/js-support/), which the tests import directly.

import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";
import { goTo, openPanel } from "../js-support/browser.mjs";
import { startGateway as startTapGateway, tapBin } from "../js-support/gateway.mjs";
import { run, start, stopChild } from "../js-support/process.mjs";

/** This suite's playwright-core, for the kit's launchChromium (tests/js-support/browser.mjs). */
export { chromium };

/** How long a test waits for something that should happen (a loaded machine is slow). */
export const PATIENCE_MS = 30000;
/** How soon a session must leave the gateway after the CLI exits: well under the session
 * hosts' 30 s resume window, so only the extension's own `session.end` can make it. */
export const SESSION_END_MS = 5000;
/** How long `exit()` waits for the CLI to act on `/exit` before typing it again. */
const EXIT_RETYPE_MS = 3000;

const cache = path.join(os.homedir(), ".cache", "tap-gateway", "copilot");
export const COPILOT_BIN = process.env.COPILOT_BIN ?? path.join(cache, "node_modules", ".bin", "copilot");
const XDG_CACHE_HOME = process.env.COPILOT_XDG_CACHE_HOME ?? path.join(cache, "xdg");
tapBin(); // fails at once, naming TAP_BIN, when it is not set (scripts/test-copilot.sh sets it)

/** All a `tap` or gateway here inherits: nothing that could reach GitHub or change the CLI's behaviour. */
const cleanEnv = () => ({ PATH: process.env.PATH, HOME: process.env.HOME });

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

/** Runs `tap ARGS` to completion with no gateway of its own; resolves with {code, stdout, stderr}. */
export function tap(args, { tapHome, copilotHome } = {}) {
  const env = { ...cleanEnv(), ...(tapHome ? { TAP_HOME: tapHome } : {}), ...(copilotHome ? { COPILOT_HOME: copilotHome } : {}) };
  return run(tapBin(), args, { env });
}

/**
 * `tap install copilot` into `copilotHome`, then the install record's `tap` pointed at a path
 * that no longer exists (as after the user removed that build): with none on PATH either, the
 * extension has no `tap` to start a gateway with, for the tests of a session without one.
 */
export async function installWithoutTap(copilotHome) {
  const r = await tap(["install", "copilot", "--copilot-home", copilotHome]);
  if (r.code !== 0) throw new Error(`tap install copilot failed: ${r.stdout}${r.stderr}`);
  const record = path.join(copilotHome, "extensions/tap/.tap-install.json");
  const recorded = JSON.parse(fs.readFileSync(record, "utf8"));
  fs.writeFileSync(record, JSON.stringify({ ...recorded, tap: path.join(copilotHome, "removed", "tap") }));
}

/** A `tap gateway` (tests/js-support/gateway.mjs) in `dir` (TAP_HOME `dir/tap`), with the clean environment. */
export function startGateway(dir) {
  return startTapGateway({ dir, baseEnv: cleanEnv() });
}

/**
 * `copilot -p PROMPT` in `cwd`, offline against `modelUrl`, with nothing inherited that could
 * reach GitHub or change its behaviour (`env`: what a test adds, e.g. TAP_COPILOT_PROFILE).
 * Resolves `done` with {code, stdout, stderr}.
 */
export function runCopilot({ cwd, prompt, copilotHome, tapHome, modelUrl, env: extra = {} }) {
  const env = {
    PATH: process.env.PATH, HOME: process.env.HOME, XDG_CACHE_HOME,
    COPILOT_HOME: copilotHome, TAP_HOME: tapHome,
    COPILOT_OFFLINE: "true", COPILOT_AUTO_UPDATE: "false",
    COPILOT_PROVIDER_BASE_URL: modelUrl, COPILOT_MODEL: "fake-model",
    ...(process.env.TAP_COPILOT_DEBUG ? { TAP_COPILOT_DEBUG: process.env.TAP_COPILOT_DEBUG } : {}),
    ...extra,
  };
  const { child, output } = start(COPILOT_BIN, ["-p", prompt, "--allow-all-tools", "--no-auto-update"], { cwd, env });
  const done = output.exited.then((code) => ({ code, stdout: output.stdout, stderr: output.stderr }));
  // A run that hangs is killed: its test then fails on the exit code, with the output so far.
  const timer = setTimeout(() => stopChild(child, output, "SIGKILL"), PATIENCE_MS * 2);
  done.then(() => clearTimeout(timer));
  return {
    child, done,
    get stdout() { return output.stdout; },
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
  // `/exit` typed again while the CLI is already going finds the pipe closed (EPIPE): the
  // exit is what was asked for, so that error is not the test's.
  child.stdin.on("error", () => {});
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

/** Logs into the gateway's panel (built into `tap`) with a `tap ui` login link in a new page of
 * `browser` and opens its Sessions page. */
export async function openSessionsPage(browser, gateway) {
  const page = await openPanel(browser, gateway, { viewport: { width: 1280, height: 800 } });
  await goTo(page, "Sessions");
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

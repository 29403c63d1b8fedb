// The CI status logic, kept apart from the connection so the unit tests can drive it without a
// gateway: reading the configuration, running the status command, and deciding what a status
// means for `git push`.
import { execFile } from "node:child_process";

/** How often to run CI_STATUS_CMD when CI_POLL_SECONDS is not set. */
export const DEFAULT_POLL_SECONDS = 60;
/** Below this a poll loop would mostly measure process start-up; tests use 0.2. */
export const MIN_POLL_SECONDS = 0.1;
/** A status command that hangs longer than this counts as an error, so the loop keeps going. */
export const DEFAULT_CMD_TIMEOUT_SECONDS = 30;
/** The detail (run name, URL…) is for a reason line, not a log: keep it short. */
export const MAX_DETAIL_CHARS = 300;
/**
 * Tool names the gate rule is declared for. A hook rule's `match.tool` is an exact name (not a
 * regex), so there is one rule per name: `shell` (the spec's examples, `tap call`), `bash`
 * (Claude Code style runtimes) and `run_in_terminal` (VS Code / Copilot).
 */
export const DEFAULT_GATE_TOOLS = ["shell", "bash", "run_in_terminal"];
/**
 * Searched in the compact JSON of the tool's arguments (Rust regex syntax), e.g.
 * `{"command":"git push origin main"}`. `git push`, `git  push --force`; not `git pushd-ish`.
 */
export const GIT_PUSH_ARGS_REGEX = "\\bgit\\s+push\\b";
/** The gate id the rules name and the provider answers. */
export const GATE_ID = "ci-green";

/** Conclusions (GitHub Actions' vocabulary) that let a push through. */
const GREEN = new Set(["success", "neutral", "skipped"]);
/** Conclusions that block a push. */
const RED = new Set(["failure", "failed", "timed_out", "startup_failure", "action_required", "cancelled", "error"]);

export class ConfigError extends Error {}

/** Reads the template's settings from `env`; throws ConfigError naming the variable at fault. */
export function readConfig(env = process.env) {
  const command = (env.CI_STATUS_CMD ?? "").trim();
  if (!command) {
    throw new ConfigError("CI_STATUS_CMD is not set: give a shell command that prints the CI status, e.g. " +
      `CI_STATUS_CMD="gh run list --branch main --limit 1 --json conclusion -q '.[0].conclusion'"`);
  }
  return {
    command,
    pollSeconds: seconds(env, "CI_POLL_SECONDS", DEFAULT_POLL_SECONDS, MIN_POLL_SECONDS),
    cmdTimeoutSeconds: seconds(env, "CI_CMD_TIMEOUT_SECONDS", DEFAULT_CMD_TIMEOUT_SECONDS, MIN_POLL_SECONDS),
    gateTools: toolList(env.CI_GATE_TOOLS),
    name: (env.CI_PROVIDER_NAME ?? "").trim() || "ci-status",
  };
}

function seconds(env, name, fallback, min) {
  const raw = (env[name] ?? "").trim();
  if (!raw) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new ConfigError(`${name} must be a number of seconds, at least ${min}; got '${raw}'`);
  return n;
}

function toolList(raw) {
  if (!raw || !raw.trim()) return DEFAULT_GATE_TOOLS;
  const names = raw.split(",").map((s) => s.trim()).filter(Boolean);
  const bad = names.find((n) => !/^[A-Za-z0-9_-]{1,64}$/.test(n));
  if (bad !== undefined) throw new ConfigError(`CI_GATE_TOOLS: '${bad}' is not a tool name (1-64 of A-Z a-z 0-9 _ -)`);
  return names;
}

/** The onPreToolUse rules: one gate per shell-like tool, asked when its args contain `git push`. */
export function gateRules(gateTools) {
  // failOpen false: if this provider hangs, a push is refused rather than let through unchecked.
  return gateTools.map((tool) => ({ match: { tool, args: GIT_PUSH_ARGS_REGEX }, action: "gate", gateId: GATE_ID, failOpen: false }));
}

/**
 * Turns the command's output into a status. The first word of the first line is the conclusion
 * (`success`, `failure`, `in_progress`…); the rest of the output, if any, describes the run (its
 * name, its URL) and goes into the deny reason.
 */
export function parseOutput(stdout) {
  const text = String(stdout).trim();
  const [word = ""] = text.split(/\s+/);
  const conclusion = word.toLowerCase();
  const detail = text.slice(word.length).trim().slice(0, MAX_DETAIL_CHARS) || undefined;
  if (!conclusion) return { state: "unknown", conclusion: "", detail: "the status command printed nothing" };
  const state = GREEN.has(conclusion) ? "green" : RED.has(conclusion) ? "red" : "pending";
  return { state, conclusion, detail };
}

/** Runs the status command through `sh -c` (pipes and `gh … -q` work) and parses what it prints. */
export function checkOnce(command, timeoutSeconds) {
  return new Promise((resolve) => {
    execFile("/bin/sh", ["-c", command], { timeout: timeoutSeconds * 1000, maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      const checkedAt = new Date().toISOString();
      if (err) {
        // A failing command is not a red build: we just don't know (gh not logged in, offline…).
        const why = err.killed ? `timed out after ${timeoutSeconds} s` : `exited with ${err.code ?? err.signal}`;
        const tail = String(stderr).trim().split("\n").pop()?.slice(0, MAX_DETAIL_CHARS);
        return resolve({ state: "unknown", conclusion: "", detail: `the status command ${why}${tail ? `: ${tail}` : ""}`, checkedAt });
      }
      resolve({ ...parseOutput(stdout), checkedAt });
    });
  });
}

/** The gate's answer for the last known status. */
export function gateDecision(status) {
  if (!status) return { decision: "context", reason: "CI status not checked yet; pushing without it." };
  const what = status.detail ? `${status.conclusion} (${status.detail})` : status.conclusion;
  switch (status.state) {
    case "green": return { decision: "allow" };
    case "red": return { decision: "deny", reason: `CI is red: the last run is ${what}, checked ${status.checkedAt}. Fix the build before pushing.` };
    case "pending": return { decision: "context", reason: `CI is not finished (${what}); the push goes ahead.` };
    default: return { decision: "context", reason: `CI status unknown (${status.detail}); the push goes ahead.` };
  }
}

/** One line for a stream event about a status. */
export function describe(status, previous) {
  const now = status.conclusion || status.state;
  const base = previous ? `CI ${previous.conclusion || previous.state} → ${now}` : `CI is ${now}`;
  return status.detail ? `${base}: ${status.detail}` : base;
}

/** Whether two checks differ in what matters to a reader (not the time). */
export function changed(a, b) {
  return !a || a.state !== b.state || a.conclusion !== b.conclusion;
}

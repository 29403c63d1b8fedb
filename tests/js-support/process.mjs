// Child processes for the JS test suites: spawned and tracked (output collected, killed when
// the test process exits, so a failing test leaves nothing behind), stopped gracefully with a
// SIGKILL fallback, run to completion, waited on for a line of output; and temporary
// directories.

import { execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { GiveUp, waitFor } from "./wait.mjs";

/** Every tracked child still running; killed when this process exits. */
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

/**
 * Spawns `cmd ARGS…` (stdin ignored, output piped; `options` as for spawn) and tracks it as
 * `name`. Returns { child, output, stop(signal, grace) }.
 */
export function start(cmd, args, options = {}, name = path.basename(cmd)) {
  const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"], ...options });
  const output = track(child, name);
  return { child, output, stop: (signal, grace) => stopChild(child, output, signal, grace) };
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

/**
 * Waits until a tracked child's stdout matches `pattern` (a RegExp, or a function of the
 * text so far returning a truthy value, which is resolved with); fails at once if it exits first.
 */
export function waitForOutput(child, output, pattern, what, timeout) {
  const test = typeof pattern === "function" ? pattern : (text) => pattern.test(text);
  return waitFor(() => {
    const hit = test(output.stdout);
    if (hit) return hit;
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new GiveUp(`${output.name} exited (${child.exitCode ?? child.signalCode}) before ${what}: ${output.stdout}${output.stderr}`);
    }
    return null;
  }, what, timeout);
}

/** Runs a command; resolves with { code, stdout, stderr } (never rejects). */
export function run(cmd, args, { env = process.env, timeout = 30000, input, cwd } = {}) {
  return new Promise((resolve) => {
    const child = execFile(cmd, args, { env, timeout, cwd, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr });
    });
    if (input !== undefined) child.stdin.end(input);
  });
}

/** The binary named by env var `variable`: required, so a stale default can never be tested by mistake. */
export function requiredBin(variable, hint) {
  const bin = process.env[variable];
  if (!bin) throw new Error(`Set ${variable} (${hint})`);
  if (!existsSync(bin)) throw new Error(`${variable}=${bin} does not exist`);
  return bin;
}

/** A new empty directory `PREFIX…` under `parent` (the OS temp dir by default). */
export function tempDir(prefix = "tap-test-", parent = tmpdir()) {
  return mkdtempSync(path.join(parent, prefix));
}

/** Removes a directory tree (best effort). */
export function remove(dir) {
  rmSync(dir, { recursive: true, force: true });
}

// Test kit: a real `tap gateway` child on 127.0.0.1:0 with its own TAP_HOME, a session host
// speaking the session-host protocol over `ws`, and `tap call` as a child process.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";

export const TAP_BIN = process.env.TAP_BIN || "/work/tap-bin/tap";
/** Deadline for anything the tests wait on (gateway start, an event, a child's exit). */
export const WAIT_MS = 15_000;
/** Polling period while waiting on a condition that has no event (a file appearing). */
const POLL_MS = 25;

/** Polls `check` until it returns a truthy value or the deadline passes. */
export async function waitFor(check, what, ms = WAIT_MS) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** Waits for `emitter` to emit `event` with args passing `pred`. */
export function nextEvent(emitter, event, pred = () => true, ms = WAIT_MS) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { emitter.off(event, on); reject(new Error(`timed out waiting for '${event}'`)); }, ms);
    const on = (...args) => { if (pred(...args)) { clearTimeout(timer); emitter.off(event, on); resolve(args[0]); } };
    emitter.on(event, on);
  });
}

export async function startGateway({ port = 0, home } = {}) {
  home ??= mkdtempSync(join(tmpdir(), "tap-sdk-ts-"));
  const env = {
    ...process.env, TAP_HOME: home, COPILOT_HOME: join(home, "copilot"), TAP_LOG: "warn",
    TAP_GATEWAY_URL: "", TAP_PROVIDER_TOKEN: "", TAP_PROVIDER_TOKEN_FILE: "",
  };
  const child = spawn(TAP_BIN, ["gateway", "--listen", `127.0.0.1:${port}`], { env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => { stderr += d; });
  let exited = false;
  child.on("exit", () => { exited = true; });
  const info = await waitFor(() => {
    if (exited) throw new Error(`tap gateway exited: ${stderr}`);
    try {
      const j = JSON.parse(readFileSync(join(home, "gateway.json"), "utf8"));
      const token = readFileSync(join(home, "provider-token"), "utf8").trim();
      return j.pid === child.pid && token ? { ...j, token } : null;
    } catch { return null; }
  }, "gateway.json");
  return {
    home, env, child, url: info.address, token: info.token,
    hostToken: readFileSync(join(home, "host-token"), "utf8").trim(),
    /** SIGTERM (graceful) and wait for the exit. */
    async stop() {
      if (exited) return;
      const done = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await done;
    },
    cleanup() { rmSync(home, { recursive: true, force: true }); },
  };
}

/** Runs `tap ARGS` against the gateway; resolves with {code, stdout, stderr}. Returns the child too (to kill it). */
export function tap(gw, args) {
  const child = spawn(TAP_BIN, args, { env: gw.env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "", stderr = "";
  child.stdout.on("data", (d) => { stdout += d; });
  child.stderr.on("data", (d) => { stderr += d; });
  const done = new Promise((resolve) => child.on("exit", (code) => resolve({ code, stdout: stdout.trim(), stderr })));
  return { child, done, get stdout() { return stdout; } };
}

/** A session host over the session-host protocol: register sessions, invoke and cancel tools, watch deliveries. */
export async function openHost(gw) {
  const ws = new WebSocket(`${gw.url}/session`);
  const listeners = new Set();
  const frames = [];
  ws.on("message", (raw) => {
    const msg = JSON.parse(String(raw));
    frames.push(msg);
    for (const l of [...listeners]) l(msg);
  });
  await new Promise((res, rej) => { ws.once("open", res); ws.once("error", rej); });
  const send = (m) => ws.send(JSON.stringify(m));
  const expect = (pred, what, ms = WAIT_MS) => new Promise((resolve, reject) => {
    const hit = frames.find(pred);
    if (hit) return resolve(hit);
    const timer = setTimeout(() => { listeners.delete(l); reject(new Error(`host: timed out waiting for ${what}`)); }, ms);
    const l = (m) => { if (pred(m)) { clearTimeout(timer); listeners.delete(l); resolve(m); } };
    listeners.add(l);
  });
  send({ type: "auth", token: gw.hostToken, protocolVersion: 1, hostName: "sdk-test" });
  await expect((m) => m.type === "auth.ok", "auth.ok");
  let n = 0;
  return {
    frames, expect, send,
    async register(sessionId, { foreground = true, label } = {}) {
      const requestId = `reg-${++n}`;
      send({ type: "session.register", requestId, sessionId, foreground, label });
      await expect((m) => m.type === "session.registered" && m.requestId === requestId, `registered ${sessionId}`);
      return sessionId;
    },
    async end(sessionId) {
      const requestId = `end-${++n}`;
      send({ type: "session.end", requestId, sessionId });
      return expect((m) => m.type === "session.ended" && m.requestId === requestId, `ended ${sessionId}`);
    },
    /** Starts an invocation; returns {callId, result: Promise<tool.result>, progress: [] }. */
    invoke(sessionId, tool, args = {}) {
      const callId = `call-${++n}`;
      const progress = [];
      const l = (m) => { if (m.type === "tool.progress" && m.callId === callId) progress.push(m.message); };
      listeners.add(l);
      send({ type: "tool.invoke", callId, sessionId, tool, args });
      const result = expect((m) => m.type === "tool.result" && m.callId === callId, `result of ${callId}`).finally(() => listeners.delete(l));
      return { callId, result, progress };
    },
    cancel(callId) { send({ type: "tool.cancel", callId }); },
    /** Waits until the session's published tool set contains (or lacks) `tool`. */
    toolsInclude(sessionId, tool, present = true) {
      const has = (m) => m.type === "session.tools" && m.sessionId === sessionId && m.tools.some((t) => t.name === tool) === present;
      const latest = [...frames].reverse().find((m) => m.type === "session.tools" && m.sessionId === sessionId);
      if (latest && has(latest)) return Promise.resolve(latest);
      return expect((m) => has(m) && m === frames[frames.length - 1], `tools of ${sessionId} ${present ? "with" : "without"} ${tool}`);
    },
    close() { ws.close(); },
  };
}

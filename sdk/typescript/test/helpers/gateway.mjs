// The SDK suite's own helpers: a session host speaking the session-host protocol over `ws`,
// and `tap ARGS` as a child a test can kill. The rest (waiting, the real `tap gateway` on
// 127.0.0.1:0 with its own TAP_HOME, temp dirs, Chromium and the panel) is the repository's
// JS test kit in tests/js-support/, which the tests import directly; scripts/test-sdk-typescript.sh
// runs them from this checkout, so the relative path always resolves. (The published package
// ships dist/ only.)
import WebSocket from "ws";
import { tapBin } from "../../../../tests/js-support/gateway.mjs";
import { start } from "../../../../tests/js-support/process.mjs";
import { WAIT_MS } from "../../../../tests/js-support/wait.mjs";

/**
 * Runs `tap ARGS` against the gateway `gw`: `done` resolves with {code, stdout (trimmed),
 * stderr}; `child` is there to kill it, `stdout` is its output so far.
 */
export function tap(gw, args) {
  const { child, output } = start(tapBin(), args, { env: gw.env });
  const done = output.exited.then((code) => ({ code, stdout: output.stdout.trim(), stderr: output.stderr }));
  return { child, done, get stdout() { return output.stdout; } };
}

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

// Error mapping and call dispatch, with a fake socket standing in for the gateway.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Provider, TapError, toErrorResult } from "../../dist/index.js";

test("toErrorResult: a string code is kept, anything else is INTERNAL with the message", () => {
  assert.deepEqual(toErrorResult(new TapError("NOT_FOUND", "gone")), { error: "gone", errorCode: "NOT_FOUND" });
  assert.deepEqual(toErrorResult(new TapError("BUSY", "later", { retryable: true })), { error: "later", errorCode: "BUSY", retryable: true });
  assert.deepEqual(toErrorResult(Object.assign(new Error("no file"), { code: "ENOENT" })), { error: "no file", errorCode: "ENOENT" });
  assert.deepEqual(toErrorResult(new Error("boom")), { error: "boom", errorCode: "INTERNAL" });
  assert.deepEqual(toErrorResult(Object.assign(new Error("x"), { code: 42 })), { error: "x", errorCode: "INTERNAL" });
  assert.deepEqual(toErrorResult("plain string"), { error: "plain string", errorCode: "INTERNAL" });
  assert.deepEqual(toErrorResult({ weird: true }), { error: '{"weird":true}', errorCode: "INTERNAL" });
  assert.deepEqual(toErrorResult(undefined), { error: "undefined", errorCode: "INTERNAL" });
});

/** A provider on a fake socket; `sent` collects frames; `deliver` feeds gateway frames. */
function fake(tools) {
  const sent = [];
  let sock;
  const platform = {
    canPair: false,
    url: () => ({ url: "ws://fake", source: "test" }),
    token: async () => ({ token: "ptk-x", source: "test" }),
    socket: () => (sock = { send: (s) => sent.push(JSON.parse(s)), close() {}, onopen: null, onmessage: null, onclose: null, onerror: null }),
  };
  const p = new Provider({ name: "fake", tools }, platform);
  const deliver = (m) => sock.onmessage({ data: JSON.stringify(m) });
  const waitSent = async (pred) => {
    for (let i = 0; i < 200; i++) { const hit = sent.find(pred); if (hit) return hit; await new Promise((r) => setImmediate(r)); }
    throw new Error("frame not sent");
  };
  return { p, sent, deliver, waitSent, open: async () => { await p.connect(); sock.onopen(); } };
}

test("dispatch: invalid args are refused INVALID_JSON before the handler; throws map; no crash", async () => {
  let called = 0;
  const f = fake({
    greet: { parameters: { type: "object", properties: { name: { type: "string" } }, required: ["name"] }, handler: ({ name }) => { called++; return `hi ${name}`; } },
    sync: { handler: () => { throw new Error("sync throw"); } },
    coded: { handler: async () => { throw new TapError("UNAVAILABLE", "later", { retryable: true }); } },
    circular: { handler: () => { const o = {}; o.o = o; return o; } },
  });
  await f.open();
  assert.deepEqual(f.sent[0], { type: "auth", token: "ptk-x" });
  f.deliver({ type: "sessions", active: [{ id: "s1", foreground: true }] });
  const hello = await f.waitSent((m) => m.type === "hello");
  assert.equal(hello.session, "s1");
  assert.equal(hello.protocolVersion, 2);
  f.deliver({ type: "hello.ack", providerId: "p-1", sessionId: "s1", reconnectToken: "rtk-1" });
  await f.p.ready;

  f.deliver({ type: "tool.call", id: "c1", sessionId: "s1", tool: "greet", args: { name: 42 } });
  const r1 = await f.waitSent((m) => m.id === "c1");
  assert.deepEqual(r1, { type: "tool.result", id: "c1", error: `Invalid arguments for tool 'greet' at '/name': 42 is not of type "string"`, errorCode: "INVALID_JSON" });
  assert.equal(called, 0);
  f.deliver({ type: "tool.call", id: "c2", sessionId: "s1", tool: "sync", args: {} });
  assert.deepEqual(await f.waitSent((m) => m.id === "c2"), { type: "tool.result", id: "c2", error: "sync throw", errorCode: "INTERNAL" });
  f.deliver({ type: "tool.call", id: "c3", sessionId: "s1", tool: "coded", args: {} });
  assert.deepEqual(await f.waitSent((m) => m.id === "c3"), { type: "tool.result", id: "c3", error: "later", errorCode: "UNAVAILABLE", retryable: true });
  f.deliver({ type: "tool.call", id: "c4", sessionId: "s1", tool: "nope", args: {} });
  assert.equal((await f.waitSent((m) => m.id === "c4")).errorCode, "NOT_FOUND");
  f.deliver({ type: "tool.call", id: "c5", sessionId: "s1", tool: "circular", args: {} });
  assert.equal((await f.waitSent((m) => m.id === "c5")).errorCode, "INTERNAL");
  f.deliver({ type: "tool.call", id: "c6", sessionId: "s1", tool: "greet", args: { name: "Ada" } });
  assert.equal((await f.waitSent((m) => m.id === "c6")).data, "hi Ada");
  // Unknown message types are ignored (forward compatibility).
  f.deliver({ type: "something.new" });
});

test("dispatch: a cancelled call answers CANCELLED even if the handler then returns data", async () => {
  let release;
  const f = fake({ slow: { handler: () => new Promise((r) => { release = r; }) } });
  await f.open();
  f.deliver({ type: "sessions", active: [{ id: "s1", foreground: false }] });
  f.deliver({ type: "hello.ack", providerId: "p-1", sessionId: "s1" });
  await f.p.ready;
  f.deliver({ type: "tool.call", id: "c1", sessionId: "s1", tool: "slow", args: {} });
  await new Promise((r) => setImmediate(r));
  f.deliver({ type: "tool.cancel", id: "c1", sessionId: "s1", reason: "cancelled" });
  release("late data");
  assert.deepEqual(await f.waitSent((m) => m.id === "c1"), { type: "tool.result", id: "c1", error: "Cancelled", errorCode: "CANCELLED" });
});

// Integration suite against the real `tap gateway` (one per file, its own TAP_HOME).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { connectProvider, fileResult, TapError, RateLimitedError } from "../../dist/index.js";
import { startGateway } from "../../../../tests/js-support/gateway.mjs";
import { nextEvent, waitFor } from "../../../../tests/js-support/wait.mjs";
import { openHost, tap } from "../helpers/gateway.mjs";

let gw, host;
const opened = [];
before(async () => {
  gw = await startGateway();
  host = await openHost(gw);
});
after(async () => {
  for (const p of opened) await p.close().catch(() => {});
  host?.close();
  await gw?.stop();
});

/** connectProvider with the gateway's URL and token passed explicitly (discovery has its own tests). */
async function provider(opts) {
  const p = await connectProvider({ url: gw.url, token: gw.token, ...opts });
  opened.push(p);
  return p;
}

const greetSchema = { type: "object", properties: { name: { type: "string" } }, required: ["name"] };

test("call: arguments in, data and progress out; thrown errors keep their code or become INTERNAL", async () => {
  const s = await host.register("s-call");
  const p = await provider({
    name: "t-call", session: s,
    tools: {
      greet: { description: "Greet", parameters: greetSchema, handler: ({ name }, ctx) => { ctx.progress("thinking"); return `Hello, ${name}!`; } },
      missing: { handler: () => { throw new TapError("NOT_FOUND", "no such thing"); } },
      broken: { handler: async () => { throw new Error("kaboom"); } },
      nothing: { handler: () => undefined },
    },
  });
  assert.equal(p.sessionId, s);
  await host.toolsInclude(s, "greet");
  const call = host.invoke(s, "greet", { name: "Ada" });
  const r = await call.result;
  assert.equal(r.data, "Hello, Ada!");
  assert.deepEqual(call.progress, ["thinking"]);

  const missing = await tap(gw, ["call", "--session", s, "missing"]).done;
  assert.equal(missing.code, 1);
  assert.deepEqual(JSON.parse(missing.stdout), { errorCode: "NOT_FOUND", error: "no such thing" });
  const broken = await tap(gw, ["call", "--session", s, "broken"]).done;
  assert.deepEqual(JSON.parse(broken.stdout), { errorCode: "INTERNAL", error: "kaboom" });
  const nothing = await tap(gw, ["call", "--session", s, "nothing"]).done;
  assert.equal(nothing.stdout, "null");
  // The provider survived both failures.
  assert.equal((await host.invoke(s, "greet", { name: "Bob" }).result).data, "Hello, Bob!");
});

test("cancel: a host's tool.cancel aborts the handler's signal", async () => {
  const s = await host.register("s-cancel");
  let started;
  const startedP = new Promise((r) => { started = r; });
  let reason;
  const p = await provider({
    name: "t-cancel", session: s,
    tools: { wait: { handler: (_a, ctx) => new Promise((_res, rej) => {
      started();
      ctx.signal.addEventListener("abort", () => { reason = ctx.signal.reason; rej(ctx.signal.reason); });
    }) } },
  });
  await host.toolsInclude(s, "wait");
  const call = host.invoke(s, "wait");
  await startedP;
  host.cancel(call.callId);
  assert.equal((await call.result).errorCode, "CANCELLED");
  await waitFor(() => reason, "the handler's abort");
  assert.equal(reason.code, "CANCELLED");
  assert.match(reason.message, /cancelled/);
  assert.equal(p.state, "bound");
});

test("cancel: killing `tap call` cancels the call in the provider", async () => {
  const s = await host.register("s-kill");
  let started;
  const startedP = new Promise((r) => { started = r; });
  let aborted;
  const abortedP = new Promise((r) => { aborted = r; });
  await provider({
    name: "t-kill", session: s,
    tools: { hang: { handler: (_a, ctx) => { started(); return new Promise((_r, rej) => ctx.signal.addEventListener("abort", () => { aborted(ctx.signal.reason); rej(ctx.signal.reason); })); } } },
  });
  await host.toolsInclude(s, "hang");
  const run = tap(gw, ["call", "--session", s, "hang"]);
  await startedP;
  run.child.kill("SIGTERM");
  const out = await run.done;
  assert.equal(JSON.parse(out.stdout).errorCode, "CANCELLED");
  assert.equal((await abortedP).code, "CANCELLED");
});

test("timeout: the tool's timeout aborts the signal and the caller gets TIMEOUT", async () => {
  const s = await host.register("s-timeout");
  let reasonP;
  await provider({
    name: "t-timeout", session: s,
    tools: { slow: { timeout: 300, handler: (_a, ctx) => { reasonP = new Promise((r) => ctx.signal.addEventListener("abort", () => r(ctx.signal.reason))); return new Promise(() => {}); } } },
  });
  await host.toolsInclude(s, "slow");
  const r = await host.invoke(s, "slow").result;
  assert.equal(r.errorCode, "TIMEOUT");
  const reason = await reasonP;
  assert.ok(["TIMEOUT", "CANCELLED"].includes(reason.code), reason.message);
});

test("push: the 11th surface push in a second is RATE_LIMITED (and is the one rejected); delivered ones reach the host; retry waits it out", async () => {
  const s = await host.register("s-push");
  const p = await provider({ name: "t-push", session: s, tools: {} });
  // Sent back to back, all inside one second: the barrier after each push must attribute the
  // gateway's errors to exactly the pushes it refused.
  const results = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => p.push("surface", `event ${i}`, { stream: "ci", metadata: { i } })));
  assert.deepEqual(results.map((r) => r.status), [...Array(10).fill("fulfilled"), "rejected", "rejected"]);
  for (const r of results.slice(10)) {
    assert.ok(r.reason instanceof RateLimitedError, String(r.reason));
    assert.equal(r.reason.code, "RATE_LIMITED");
  }
  const d = await host.expect((m) => m.type === "delivery" && m.sessionId === s, "a delivery");
  assert.equal(d.level, "surface");
  await p.push("keep", "keep is not budgeted");
  await p.push("surface", "after the window", { retry: { attempts: 3 } });
  const hist = await p.query(["ci", "t-push"], 1);
  assert.equal(hist["t-push"][0].event, "after the window");
  assert.equal(hist.ci[0].event, "event 9");
  await assert.rejects(p.push("shout", "x"), (e) => e.code === "INVALID_JSON");
});

test("tools update: setTools resolves at the ack and the new tool is callable", async () => {
  const s = await host.register("s-update");
  const p = await provider({ name: "t-update", session: s, tools: { one: { handler: () => 1 } } });
  await host.toolsInclude(s, "one");
  const [r1, r2] = await Promise.all([
    p.setTools({ one: { handler: () => 1 }, two: { handler: () => 2 } }),
    p.setTools({ two: { handler: () => 22 } }), // serialized: the gateway would refuse it in flight
  ]);
  assert.deepEqual([r1, r2], [1, 2]);
  await host.toolsInclude(s, "one", false);
  assert.equal((await host.invoke(s, "two").result).data, 22);
  await assert.rejects(p.setTools({ "bad name": { handler: () => 0 } }), (e) => e.code === "INVALID_JSON");
  assert.equal((await host.invoke(s, "two").result).data, 22); // the old list stayed
});

test("hooks: a deny rule and a gate refuse `tap call` with DENIED; context and filters apply", async () => {
  const s = await host.register("s-hooks");
  const p = await provider({
    name: "t-hooks", session: s,
    tools: { shell: { parameters: { type: "object", properties: { command: { type: "string" } } }, handler: ({ command }) => `ran ${command}` } },
    hooks: { onPreToolUse: [
      { match: { tool: "shell", args: "rm -rf" }, action: "deny", reason: "not here" },
      { match: { tool: "shell", args: "git push" }, action: "gate", gateId: "ci" },
    ] },
    gates: { ci: (check) => ({ decision: "deny", reason: `CI is red for ${check.args.command}` }) },
    context: "CI is red.",
    filters: { noisy: [{ match: "^drop", outcome: "drop" }] },
  });
  await host.toolsInclude(s, "shell");
  const denied = await tap(gw, ["call", "--session", s, "shell", '{"command":"rm -rf /"}']).done;
  assert.deepEqual(JSON.parse(denied.stdout), { errorCode: "DENIED", error: "not here" });
  const gated = await tap(gw, ["call", "--session", s, "shell", '{"command":"git push"}']).done;
  assert.deepEqual(JSON.parse(gated.stdout), { errorCode: "DENIED", error: "CI is red for git push" });
  const ok = await tap(gw, ["call", "--session", s, "shell", '{"command":"ls"}']).done;
  assert.equal(ok.stdout, '"ran ls"');
  const prompt = JSON.parse((await tap(gw, ["prompt", "--session", s, "hi"]).done).stdout);
  assert.deepEqual(prompt.context, ["CI is red."]);
  await p.push("keep", "drop me", { stream: "noisy" });
  await p.push("keep", "kept", { stream: "noisy" });
  const hist = await p.query(["noisy"]);
  assert.deepEqual(hist.noisy.map((e) => e.event), ["kept"]);
  assert.equal(await p.setHooks({ onPreToolUse: [] }), 2); // revision 1 was the filter.set made after the bind
  const after = await tap(gw, ["call", "--session", s, "shell", '{"command":"rm -rf x"}']).done;
  assert.equal(after.stdout, '"ran rm -rf x"');
});

test("shutdown.pending: onShutdown runs, shutdown.ready is sent, and the provider binds to the next session", async () => {
  const s1 = await host.register("s-end-1", { foreground: false });
  let hook;
  const hookP = new Promise((r) => { hook = r; });
  const p = await provider({
    name: "t-end", tools: { ping: { handler: () => "pong" } },
    session: (list) => list.find((x) => x.id.startsWith("s-end"))?.id, // a chooser: not the foreground one
    onShutdown: (info) => hook(info),
  });
  assert.equal(p.sessionId, s1);
  const shutdownEvent = nextEvent(p, "shutdown");
  const unbound = nextEvent(p, "unbound");
  const ended = await host.end(s1);
  assert.equal(ended.reason, "ended by its host");
  assert.equal((await shutdownEvent).sessionId, s1);
  const info = await hookP;
  assert.equal(info.sessionId, s1);
  assert.ok(info.signal instanceof AbortSignal);
  await unbound;
  // Listen before registering: the provider may bind before the host hears session.registered.
  const boundP = nextEvent(p, "bound", (b) => b.sessionId === "s-end-2");
  const s2 = await host.register("s-end-2", { foreground: false });
  assert.equal((await boundP).sessionId, s2);
  await host.toolsInclude(s2, "ping");
  assert.equal((await host.invoke(s2, "ping").result).data, "pong");
});

test("DUPLICATE_INSTANCE: a second provider with the same name is refused; the first is unaffected", async () => {
  const s = await host.register("s-dup");
  await provider({ name: "t-dup", session: s, tools: { d1: { handler: () => "first" } } });
  await assert.rejects(
    connectProvider({ url: gw.url, token: gw.token, name: "t-dup", session: s, tools: {} }),
    (e) => e instanceof TapError && e.code === "DUPLICATE_INSTANCE",
  );
  await host.toolsInclude(s, "d1");
  assert.equal((await host.invoke(s, "d1").result).data, "first");
});

test("clear errors: a wrong token and an unreachable gateway reject connectProvider", async () => {
  await assert.rejects(connectProvider({ url: gw.url, token: "ptk-wrong", name: "t-bad", tools: {} }), (e) => e.code === "AUTH_FAILED");
  await assert.rejects(connectProvider({ url: "ws://127.0.0.1:1", token: "x", name: "t-bad", tools: {} }), (e) => e.code === "DISCONNECTED" && /127\.0\.0\.1:1/.test(e.message));
  await assert.rejects(connectProvider({ name: "", tools: {} }), (e) => e.code === "INVALID_JSON" && /name/.test(e.message));
  await assert.rejects(connectProvider({ url: gw.url, token: gw.token, name: "t-bad", tools: { x: {} } }), (e) => e.code === "INVALID_JSON" && /handler/.test(e.message));
});

test("file results and subscribed session events", async () => {
  const s = await host.register("s-file");
  const p = await provider({
    name: "t-file", session: s, subscribe: ["user.message"],
    tools: { report: { handler: (_a, ctx) => fileResult(ctx, "report body", "text/plain", 60) } },
  });
  assert.ok(p.persistDir, "a token provider has a persistDir");
  await host.toolsInclude(s, "report");
  const r = await host.invoke(s, "report").result;
  assert.equal(r.data.file.mimeType, "text/plain");
  assert.equal(r.data.file.size, 11);
  assert.equal(readFileSync(r.data.file.path, "utf8"), "report body");
  const ev = nextEvent(p, "session.event");
  const named = nextEvent(p, "event:user.message");
  host.send({ type: "session.event", sessionId: s, event: "user.message", data: { content: "fix it" } });
  assert.deepEqual(await ev, { sessionId: s, event: "user.message", data: { content: "fix it" } });
  assert.deepEqual(await named, { content: "fix it" });
});

test("annotations and resultFormat reach the gateway: destructiveHint is asked, an MCP result stays one", async () => {
  const s = await host.register("s-annotated");
  let removed = 0;
  const png = "iVBORw0KGgo=";
  await provider({
    name: "t-annotated", session: s,
    tools: {
      remove: { title: "Remove a file", annotations: { destructiveHint: true }, handler: () => { removed++; return "removed"; } },
      picture: { resultFormat: "mcp", handler: () => ({ content: [{ type: "image", data: png, mimeType: "image/png" }] }) },
    },
  });
  await host.toolsInclude(s, "remove");

  // The gateway's default policy asks before a destructive tool: the call waits until denied.
  const call = tap(gw, ["call", "--session", s, "remove"]);
  const waiting = await waitFor(async () => {
    const list = JSON.parse((await tap(gw, ["approvals", "list", "--json"]).done).stdout);
    return list.waiting.find((a) => a.tool === "remove");
  }, "the remove call waiting for approval");
  assert.deepEqual(waiting.annotations, { destructiveHint: true });
  assert.equal(waiting.why, "default: destructiveHint");
  assert.equal((await tap(gw, ["approvals", "deny", waiting.id]).done).code, 0);
  const denied = await call.done;
  assert.equal(JSON.parse(denied.stdout).errorCode, "DENIED");
  assert.equal(removed, 0, "a denied call never reaches the handler");

  // resultFormat "mcp": a session host gets the MCP result object (its image block) as is.
  const r = await host.invoke(s, "picture").result;
  assert.deepEqual(r.data, { content: [{ type: "image", data: png, mimeType: "image/png" }] });
});

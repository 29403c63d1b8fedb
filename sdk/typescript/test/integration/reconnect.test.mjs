// Reconnect: a socket dropped under the provider (a TCP proxy destroys it) comes back with the
// reconnectToken within 30 s and keeps its providerId; after 30 s it binds fresh.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { connectProvider, limits } from "../../dist/index.js";
import { startGateway } from "../../../../tests/js-support/gateway.mjs";
import { nextEvent } from "../../../../tests/js-support/wait.mjs";
import { openHost, tap } from "../helpers/gateway.mjs";
import { startProxy } from "../helpers/proxy.mjs";

/** The fresh-bind test waits out the gateway's 30 s token lifetime, plus this margin. */
const PAST_LIFETIME_MARGIN_MS = 1_000;
/** After the path comes back, one backoff step (at most 5 s) plus the bind must fit in this. */
const REBIND_DEADLINE_MS = 20_000;
const FRESH_TEST_TIMEOUT_MS = 90_000;

let gw, host, proxy;
const opened = [];
before(async () => {
  gw = await startGateway();
  host = await openHost(gw);
  proxy = await startProxy(gw.url);
});
after(async () => {
  for (const p of opened) await p.close().catch(() => {});
  host?.close();
  await proxy?.close();
  await gw?.stop();
});

async function status() {
  const out = await tap(gw, ["status", "--json"]).done;
  return JSON.parse(out.stdout);
}

test("within 30 s: the reconnectToken restores the binding (same providerId, tools, session)", async () => {
  const s = await host.register("s-rc");
  const p = await connectProvider({ url: proxy.url, token: gw.token, name: "t-rc", session: s, tools: { ping: { handler: () => "pong" } } });
  opened.push(p);
  const id = p.providerId;
  const disconnected = nextEvent(p, "disconnected");
  const rebound = nextEvent(p, "bound");
  proxy.drop();
  await disconnected;
  const b = await rebound;
  assert.equal(b.restored, true);
  assert.equal(b.providerId, id);
  assert.equal(p.sessionId, s);
  assert.equal((await host.invoke(s, "ping").result).data, "pong");
  const mine = (await status()).providers.filter((x) => x.name === "t-rc");
  assert.deepEqual(mine.map((x) => [x.id, x.state, x.session]), [[id, "bound", s]]);
});

test("after 30 s: the token has expired and the provider binds fresh (new providerId)", { timeout: FRESH_TEST_TIMEOUT_MS }, async () => {
  const s = await host.register("s-fresh");
  const p = await connectProvider({ url: proxy.url, token: gw.token, name: "t-fresh", session: s, tools: { ping2: { handler: () => "pong2" } } });
  opened.push(p);
  const id = p.providerId;
  const disconnected = nextEvent(p, "disconnected");
  proxy.block(true);
  proxy.drop();
  await disconnected;
  const downAt = Date.now();
  // The gateway's token lifetime is the thing under test: keep the path down past it.
  await new Promise((r) => setTimeout(r, limits.RECONNECT_TOKEN_LIFETIME_MS + PAST_LIFETIME_MARGIN_MS - (Date.now() - downAt)));
  const rebound = nextEvent(p, "bound", () => true, REBIND_DEADLINE_MS);
  proxy.block(false);
  const b = await rebound;
  assert.equal(b.restored, false);
  assert.notEqual(b.providerId, id);
  assert.equal(b.sessionId, s);
  assert.equal((await host.invoke(s, "ping2").result).data, "pong2");
  const mine = (await status()).providers.filter((x) => x.name === "t-fresh");
  assert.deepEqual(mine.map((x) => x.id), [b.providerId]);
});

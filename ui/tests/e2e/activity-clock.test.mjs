// The Overview's activity chart moves on while the gateway is idle (issue 42), without
// asking it anything: at each bucket's end the panel's one clock (useNow) shifts the window
// itself, the oldest bucket out and an empty one in; only traces.changed brings a query.
// A real gateway, a provider over a real WebSocket and `tap call`; the page's clock is
// Playwright's (installed running with real time, so the panel and the gateway agree), and
// the test moves it on past bucket ends instead of waiting minutes: the 15 min window (one
// bucket a minute), two minutes on, then a new call, then a whole window on.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { openPanel } from "../../../tests/js-support/browser.mjs";
import { waitFor } from "../../../tests/js-support/wait.mjs";
import { launchBrowser, nodeProvider, recordFrames, startGateway } from "./support.mjs";

const MINUTE = 60_000;

describe("the activity chart while idle", () => {
  let gateway, session, provider, browser, panel, frames;

  const chart = () => panel.getByTestId("timechart");
  /** What the chart shows: its window's start, buckets, calls, bars (bucket index → calls), axis labels. */
  const shown = () =>
    chart().evaluate((fig) => ({
      from: Number(fig.dataset.from),
      buckets: Number(fig.dataset.buckets),
      calls: Number(fig.dataset.calls),
      bars: [...fig.querySelectorAll("g.tc-bar")].map((g) => [Number(g.dataset.i), Number(g.dataset.calls)]),
      axis: [...fig.querySelectorAll("[data-testid=timechart-xaxis] text")].map((t) => t.textContent),
      pageNow: Date.now(),
    }));
  const call = async () => {
    const r = await gateway.tap(["call", "--session", session.id, "ping", "{}"]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
  };
  /** The control requests the page sent while `f` ran and the chart settled after it. */
  const requestsDuring = async (f, settled) => {
    const from = frames.sent.length;
    await f();
    await waitFor(settled, "the chart to move on");
    return frames.sent.slice(from);
  };

  before(async () => {
    gateway = await startGateway();
    session = await gateway.openSession("activity clock");
    provider = await nodeProvider(gateway, { name: "pings", session: session.id, tools: ["ping"] });
    await call();
    await call();
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
    frames = recordFrames(context);
    // The page's timers and Date under the test's hand; from now on it runs with real time.
    await context.clock.install();
    panel = await openPanel(context, gateway);
    await panel.getByTestId("activity-window").getByText("15 min").click();
    await waitFor(async () => (await chart().getAttribute("data-bucket-secs")) === "60" && (await chart().getAttribute("data-calls")) === "2", "15 min with the two calls");
  });

  after(async () => {
    provider?.close();
    await browser?.close();
    await gateway?.stop();
  });

  test("at a bucket's end the window moves on by itself, and nothing is asked", async () => {
    await waitFor(() => Date.now() - frames.last > 1500, "the panel quiet");
    const before = await shown();
    assert.equal(before.buckets, 15);
    assert.deepEqual(
      before.bars.map(([, c]) => c).reduce((a, b) => a + b, 0),
      2,
    );
    let after;
    const sent = await requestsDuring(
      () => panel.clock.fastForward(2 * MINUTE),
      async () => {
        after = await shown();
        return after.from >= before.from + 2 * MINUTE;
      },
    );
    assert.deepEqual(sent, [], "no control request while the window moved");
    const moved = (after.from - before.from) / MINUTE;
    assert.ok(Number.isInteger(moved) && moved >= 2, `moved by whole buckets: ${moved}`);
    assert.equal(after.buckets, 15, "as many buckets");
    // The last bucket is the one the page's now falls in.
    assert.ok(after.pageNow >= after.from + 14 * MINUTE && after.pageNow < after.from + 15 * MINUTE, `now ${after.pageNow} in the last bucket of ${after.from}`);
    // The calls' bars moved left by as many buckets, with their counts; the axis moved too.
    assert.deepEqual(after.bars, before.bars.map(([i, c]) => [i - moved, c]));
    assert.equal(after.calls, 2);
    assert.notDeepEqual(after.axis, before.axis, `the axis moved: ${before.axis} → ${after.axis}`);
  });

  test("a new call is asked for on traces.changed and shown in the moved window", async () => {
    const was = await shown();
    const from = frames.sent.length;
    await call();
    await waitFor(async () => (await shown()).calls === 3, "the third call counted");
    assert.ok(frames.sent.slice(from).includes("activity.query"), `asked after the event: ${frames.sent.slice(from)}`);
    const now = await shown();
    // The gateway answered for its own (real) time; the page, two minutes ahead, moves it on.
    assert.equal(now.from, was.from, "the window the page's clock says");
    assert.equal(now.buckets, 15);
  });

  test("a whole window later every call has left it: empty, still without asking", async () => {
    await waitFor(() => Date.now() - frames.last > 1500, "the panel quiet");
    const before = await shown();
    const sent = await requestsDuring(
      () => panel.clock.fastForward(15 * MINUTE),
      async () => (await shown()).from >= before.from + 15 * MINUTE,
    );
    assert.deepEqual(sent, []);
    const after = await shown();
    assert.equal(after.calls, 0);
    assert.deepEqual(after.bars, []);
    assert.equal(await panel.getByTestId("activity-totals").getAttribute("data-calls"), "0");
    assert.match(await panel.getByTestId("overview-activity").innerText(), /No tool calls in the last 15 minutes/);
    assert.deepEqual(panel.errors, []);
  });
});

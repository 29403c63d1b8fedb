// The Overview's health and activity (issue 42) against a real gateway fed by a real
// provider (over WebSocket, its `deploy` answering with an error) and a real MCP stdio
// server (tests/mcp/servers/good.py): the test makes tool calls with `tap call`, some
// failing, and checks what the page shows against the ledger (`tap traces list --json`):
// the totals, the rows per provider or server and per tool (a failing one red, the others
// not), the errors of the
// last hour under Needs attention, the window selector changing the buckets and the axis,
// a new call appearing without a reload and without polling, a row opening its traces, and
// the page at 800×600. Saves overview-light.png and overview-dark.png (1100×760).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { goTo, openPanel } from "../../../tests/js-support/browser.mjs";
import { remove, tempDir } from "../../../tests/js-support/process.mjs";
import { waitFor } from "../../../tests/js-support/wait.mjs";
import { providerToken, tokenHandshake, toolDef } from "../../../tests/js-support/gateway.mjs";
import { launchBrowser, recordFrames, screenshot, startGateway, watchIdle } from "./support.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const GOOD = path.resolve(here, "../../../tests/mcp/servers/good.py");
/** The Python the other MCP tests use (scripts/test.sh sets it), else `python3`. */
const PYTHON = process.env.TAP_TEST_PYTHON || "python3";
const SIZE = { width: 1100, height: 760 };
const DAYS = /^(Sun|Mon|Tue|Wed|Thu|Fri|Sat) \d\d:\d\d$/;

/**
 * A provider over Node's WebSocket whose `run_build` works and whose `deploy` fails (a
 * `tool.result` with an error, as a provider reports a failure): the failure the rows must
 * show red.
 */
async function buildsProvider(gateway, session) {
  const ws = new WebSocket(`ws://${gateway.hostPort}/`);
  const inbox = [];
  ws.addEventListener("message", (e) => {
    const msg = JSON.parse(String(e.data));
    inbox.push(msg);
    if (msg.type !== "tool.call") return;
    const answer =
      msg.tool === "deploy" ? { error: "deploy failed: no target", errorCode: "TOOL_ERROR" } : { data: { built: msg.args ?? {} } };
    ws.send(JSON.stringify({ type: "tool.result", id: msg.id, ...answer }));
  });
  await new Promise((resolve, reject) => {
    ws.addEventListener("open", resolve, { once: true });
    ws.addEventListener("error", () => reject(new Error("builds: cannot connect")), { once: true });
  });
  await tokenHandshake(ws, inbox, await providerToken(gateway.env.TAP_HOME), {
    name: "builds",
    instance: "builds-1",
    session,
    tools: [toolDef("run_build", "Runs a build (e2e)"), toolDef("deploy", "Deploys, and fails (e2e)")],
  });
  return { close: () => ws.close() };
}

describe("the Overview's activity", () => {
  let dir, gateway, session, provider, browser, context, panel, frames;

  before(async () => {
    dir = tempDir("tap-e2e-activity-");
    mkdirSync(path.join(dir, "tap"));
    writeFileSync(path.join(dir, "tap", "mcp.json"), JSON.stringify({ mcpServers: { good: { command: PYTHON, args: [GOOD] } } }));
    gateway = await startGateway({ ownHome: true, dir });
    session = await gateway.openSession("activity-e2e");
    provider = await buildsProvider(gateway, session.id);
    await waitFor(
      async () => JSON.parse((await gateway.tap(["mcp", "list", "--json"])).stdout).find((s) => s.name === "good")?.state === "ready",
      "good ready",
      20000,
    );
    // 3 calls to the provider that work and 2 that fail; 2 to the server that work.
    for (const [tool, args] of [
      ["run_build", { n: 1 }],
      ["run_build", { n: 2 }],
      ["run_build", { n: 3 }],
      ["deploy", {}],
      ["good__echo", { message: "a" }],
      ["good__echo", { message: "b" }],
      ["deploy", {}],
    ]) {
      await call(tool, args);
    }
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: SIZE, colorScheme: "light" });
    frames = recordFrames(context);
    panel = await openPanel(context, gateway);
    await panel.evaluate(() => (window.__notReloaded = true));
  });

  after(async () => {
    provider?.close();
    await browser?.close();
    await gateway?.stop();
    if (dir) remove(dir);
  });

  async function call(tool, args) {
    const r = await gateway.tap(["call", "--session", session.id, tool, JSON.stringify(args)], 60000);
    // A tool's own error is still a call (the ledger records it as failed); refusals are not expected here.
    assert.ok(!/DENIED|NOT_FOUND/.test(r.stdout + r.stderr), `${tool}: ${r.stdout}${r.stderr}`);
  }

  /** The ledger's tool calls: what the page's figures must equal. */
  async function ledgerCalls() {
    const r = await gateway.tap(["traces", "list", "--name", "tool.call", "--since", "1h", "--limit", "1000", "--json"]);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout);
  }
  const byKey = (traces, key) => {
    const m = new Map();
    for (const t of traces) {
      const k = t[key] ?? "";
      const e = m.get(k) ?? { calls: 0, errors: 0 };
      e.calls++;
      if (t.status === "error") e.errors++;
      m.set(k, e);
    }
    return m;
  };

  const totals = () => panel.getByTestId("activity-totals");
  const chart = () => panel.getByTestId("overview-activity").getByTestId("timechart");
  const rows = () => panel.getByTestId("activity-rows").locator("tbody tr");
  const shownRows = async () =>
    rows().evaluateAll((trs) => trs.map((tr) => ({ key: tr.dataset.key, calls: +tr.dataset.calls, errors: +tr.dataset.errors, red: tr.classList.contains("row-error") })));
  const totalsAre = (calls, errors) =>
    waitFor(async () => (await totals().getAttribute("data-calls")) === String(calls) && (await totals().getAttribute("data-errors")) === String(errors), `${calls} calls, ${errors} errors shown`, 15000);

  test("the totals and the chart show the calls the ledger holds, errors included", async () => {
    await goTo(panel, "Overview");
    const ledger = await ledgerCalls();
    assert.equal(ledger.length, 7, `seven tool calls in the ledger: ${JSON.stringify(ledger.map((t) => [t.tool, t.status]))}`);
    const errors = ledger.filter((t) => t.status === "error").length;
    assert.equal(errors, 2, `the two deploy calls failed: ${JSON.stringify(ledger.map((t) => [t.tool, t.status]))}`);
    await totalsAre(7, 2);
    assert.equal(await chart().getAttribute("data-calls"), "7");
    assert.equal(await chart().getAttribute("data-errors"), "2");
    assert.equal(await chart().getAttribute("data-bucket-secs"), "60", "1 h by minute");
    // The bars add up to the figures, the failed ones drawn red.
    const bars = await chart().locator("g.tc-bar").evaluateAll((gs) => gs.map((g) => [+g.dataset.calls, +g.dataset.errors, g.querySelectorAll(".tc-err").length]));
    assert.equal(bars.reduce((s, b) => s + b[0], 0), 7);
    assert.equal(bars.reduce((s, b) => s + b[1], 0), 2);
    assert.ok(bars.every(([, e, red]) => (e > 0) === (red > 0)), `red where errors are: ${JSON.stringify(bars)}`);
    assert.match(await chart().locator(".tc-plot").getAttribute("aria-label"), /Tool calls per minute, last hour: 7 calls, 2 errors/);
    // The p50/p95 lines have points.
    assert.ok((await chart().locator("circle.tc-p95-dot").count()) >= 1, "a p95 point");
  });

  test("hovering a bar shows its figures", async () => {
    const bar = chart().locator("g.tc-bar").last();
    const want = await bar.getAttribute("data-calls");
    const box = await bar.locator("rect.tc-ok").boundingBox();
    await panel.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    const tip = panel.getByTestId("timechart-tip");
    await tip.waitFor();
    assert.match(await tip.innerText(), new RegExp(`\\b${want} calls?\\b`));
    assert.match(await tip.innerText(), /p50 .+ · p95 /);
    await panel.mouse.move(0, 0);
    await tip.waitFor({ state: "detached" });
    // From the keyboard: the chart takes the focus, End goes to the newest bucket, Escape closes.
    await chart().locator(".tc-plot").focus();
    await panel.keyboard.press("End");
    await tip.waitFor();
    const end = await chart().getByTestId("timechart-xaxis").locator("text").last().textContent();
    assert.ok((await tip.innerText()).includes(`–${end}`), `the newest bucket ends at the window's end, ${end}: ${await tip.innerText()}`);
    await panel.keyboard.press("Escape");
    await tip.waitFor({ state: "detached" });
  });

  test("rows per provider or server match the ledger; the one with errors is red", async () => {
    const want = byKey(await ledgerCalls(), "provider");
    await waitFor(async () => (await rows().count()) === want.size, `${want.size} provider rows`);
    const shown = await shownRows();
    for (const r of shown) {
      const w = want.get(r.key);
      assert.ok(w, `a row for ${r.key}, which the ledger has: ${[...want.keys()]}`);
      assert.deepEqual([r.calls, r.errors], [w.calls, w.errors], `figures of ${r.key}`);
      assert.equal(r.red, r.errors > 0, `${r.key} is red exactly when it has errors`);
    }
    assert.ok(shown.some((r) => r.red) && shown.some((r) => !r.red), `one red row, one not: ${JSON.stringify(shown)}`);
    assert.deepEqual(
      shown.find((r) => r.key === "builds"),
      { key: "builds", calls: 5, errors: 2, red: true },
    );
    // Red in the page's colours, not just a class.
    const bg = (key) => rows().and(panel.locator(`[data-key="${key}"]`)).evaluate((tr) => getComputedStyle(tr).backgroundColor);
    const other = shown.find((r) => !r.red).key;
    assert.notEqual(await bg("builds"), await bg(other), `the red row's background differs from ${other}'s`);
  });

  test("rows per tool: deploy is red with its two errors, the others are not", async () => {
    await panel.getByTestId("activity-by").getByText("Tools").click();
    await waitFor(async () => (await panel.getByTestId("activity-rows").getAttribute("data-by")) === "tool", "the tool rows");
    const want = byKey(await ledgerCalls(), "tool");
    await waitFor(async () => (await rows().count()) === want.size, `${want.size} tool rows`);
    const shown = await shownRows();
    assert.deepEqual(
      Object.fromEntries(shown.map((r) => [r.key, [r.calls, r.errors, r.red]])),
      Object.fromEntries([...want].map(([k, w]) => [k, [w.calls, w.errors, w.errors > 0]])),
    );
    assert.deepEqual(
      shown.filter((r) => r.red).map((r) => r.key),
      ["deploy"],
    );
  });

  test("rows per client add up to every call", async () => {
    await panel.getByTestId("activity-by").getByText("Clients").click();
    await waitFor(async () => (await panel.getByTestId("activity-rows").getAttribute("data-by")) === "client", "the client rows");
    const shown = await shownRows();
    assert.equal(
      shown.reduce((s, r) => s + r.calls, 0),
      7,
    );
    assert.equal(
      shown.reduce((s, r) => s + r.errors, 0),
      2,
    );
    await panel.getByTestId("activity-by").getByText("Providers and servers").click();
    await waitFor(async () => (await panel.getByTestId("activity-rows").getAttribute("data-by")) === "provider", "the provider rows again");
  });

  test("Needs attention says how many calls failed in the last hour, and which provider", async () => {
    const errors = panel.getByTestId("overview-errors");
    await errors.waitFor();
    assert.match(await errors.innerText(), /2 of 7 tool calls failed in the last hour/);
    const failing = await errors.locator("li[data-provider]").evaluateAll((lis) => lis.map((li) => li.dataset.provider));
    const want = [...byKey(await ledgerCalls(), "provider")].filter(([, w]) => w.errors > 0).map(([k]) => k);
    assert.deepEqual(failing, want);
    assert.match(await errors.getByRole("link", { name: "their traces" }).getAttribute("href"), /^#\/traces\?kind=tool\.call&status=error&range=1h$/);
  });

  test("the window selector changes the range: buckets and axis labels", async () => {
    // SVG text has no innerText: its textContent is what is drawn.
    const axis = () => chart().getByTestId("timechart-xaxis").locator("text").evaluateAll((ts) => ts.map((t) => t.textContent));
    const hourAxis = await axis();
    assert.ok(hourAxis.every((t) => /^\d\d:\d\d$/.test(t)), `clock times for an hour: ${hourAxis}`);
    await panel.getByTestId("activity-window").getByText("24 h").click();
    await waitFor(async () => (await chart().getAttribute("data-bucket-secs")) === "1800", "24 h by half hour");
    await totalsAre(7, 2);
    assert.match(await totals().innerText(), /last 24 hours, per 30 min/);
    const dayAxis = await axis();
    assert.notDeepEqual(dayAxis, hourAxis);
    await panel.getByTestId("activity-window").getByText("7 d").click();
    await waitFor(async () => (await chart().getAttribute("data-bucket-secs")) === "10800", "7 d by 3 hours");
    const weekAxis = await axis();
    assert.ok(weekAxis.every((t) => DAYS.test(t)), `week days on a week's axis: ${weekAxis}`);
    assert.equal(await chart().locator("g.tc-bar").count(), 1, "a week: the calls fall in one 3-hour bar");
    await panel.getByTestId("activity-window").getByText("15 min").click();
    await waitFor(async () => (await chart().getAttribute("data-bucket-secs")) === "60", "15 min by minute");
    await totalsAre(7, 2);
    await panel.getByTestId("activity-window").getByText("1 h").click();
    await waitFor(async () => (await axis()).every((t) => /^\d\d:\d\d$/.test(t)), "the hour's axis again");
  });

  test("a new call appears without a reload, told by traces.changed; idle, nothing is asked", async () => {
    const before = frames.events.filter((k) => k === "traces.changed").length;
    await call("deploy", {});
    await totalsAre(8, 3);
    assert.equal(await panel.evaluate(() => window.__notReloaded), true, "no reload");
    assert.ok(frames.sent.includes("traces.follow"), `the page follows traces: ${frames.sent}`);
    assert.ok(frames.events.filter((k) => k === "traces.changed").length > before, "the call was told as traces.changed");
    await waitFor(async () => /3 of 8 tool calls failed/.test(await panel.getByTestId("overview-errors").innerText()), "Needs attention updated too");
    // No timer: while nothing happens, activity.query is not asked more often than told. The
    // throttle may still owe one query per chart for events a moment ago: wait that out first.
    await waitFor(() => Date.now() - frames.last > 1500, "the panel quiet for longer than the throttle");
    const idle = await watchIdle(frames);
    const asked = idle.sent.filter((m) => m === "activity.query").length;
    const told = idle.events.filter((k) => k === "traces.changed").length;
    assert.ok(asked <= 2 * told, `activity.query asked ${asked} times after ${told} traces.changed: ${idle.sent}`);
  });

  test("screenshots in both themes at 1100×760", async () => {
    await panel.mouse.move(0, 0);
    await screenshot(panel, "overview-light");
    const dark = await browser.newContext({ viewport: SIZE, colorScheme: "dark" });
    const page = await openPanel(dark, gateway);
    await goTo(page, "Overview");
    await page.getByTestId("activity-totals").filter({ hasText: "8" }).waitFor();
    await page.getByTestId("activity-rows").waitFor();
    // The red row reads in the dark theme too: its text and background differ enough.
    const [fg, bg] = await page
      .getByTestId("activity-rows")
      .locator("tr.row-error th a")
      .first()
      .evaluate((a) => [getComputedStyle(a).color, getComputedStyle(a.closest("tr")).backgroundColor]);
    const lum = (rgb) => {
      const [r, g, b] = rgb.match(/\d+/g).map(Number);
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    assert.ok(lum(fg) - lum(bg) > 90, `a light red on a dark red (${fg} on ${bg})`);
    await screenshot(page, "overview-dark");
    assert.deepEqual(page.errors, []);
    await dark.close();
  });

  test("at 800×600 nothing spills sideways and the chart fits", async () => {
    await panel.setViewportSize({ width: 800, height: 600 });
    await goTo(panel, "Overview");
    await chart().waitFor();
    await waitFor(async () => {
      const [main, svg] = await Promise.all([
        panel.locator("main").evaluate((m) => [m.scrollWidth, m.clientWidth]),
        chart().locator("svg.tc-calls").evaluate((s) => s.getBoundingClientRect().right),
      ]);
      return main[0] <= main[1] && svg <= 800;
    }, "the main column and the chart within 800 px");
    await panel.setViewportSize(SIZE);
  });

  test("a row opens the Traces page filtered to it", async () => {
    const row = rows().filter({ has: panel.locator("td.error") }).first();
    const key = await row.getAttribute("data-key");
    await row.locator("td.num").first().click();
    await panel.getByRole("heading", { level: 1, name: "Traces" }).waitFor();
    assert.match(new URL(panel.url()).hash, new RegExp(`^#/traces\\?kind=tool\\.call&provider=${key}&range=1h$`));
    assert.equal(await panel.getByRole("combobox", { name: "Provider" }).inputValue(), key);
    assert.equal(await panel.getByRole("combobox", { name: "Time" }).inputValue(), "1h");
    const want = byKey(await ledgerCalls(), "provider").get(key).calls;
    const list = panel.locator('[data-testid="traces-list"] tbody tr');
    await waitFor(async () => (await list.count()) === want, `${want} traces of ${key}`);
    assert.ok((await list.allInnerTexts()).every((t) => t.includes(key)));
  });

  test("the page logged no errors", async () => {
    assert.deepEqual(panel.errors, []);
  });
});

// The Traces page and history browsing against the real gateway and its ledger: pushes a
// provider surfaces become traces (push → delivery); the list shows them live, a trace opens
// as a waterfall with a span's attributes in the side panel, a stream event links to its
// trace, and a session's events stay browsable on the Streams page after the session ended
// and after the gateway restarted on the same TAP_HOME (search and "Load older" included).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { goTo, openPanel } from "../../../tests/js-support/browser.mjs";
import { waitFor } from "../../../tests/js-support/wait.mjs";
import { launchBrowser, nodeProvider, recordFrames, screenshot, startGateway, watchIdle } from "./support.mjs";

const LONG_PROVIDER = "com.example.a-provider-with-an-unusually-long-name-for-the-trace-list";

describe("the Traces page", () => {
  let gateway, session, browser, panel, provider, frames;

  before(async () => {
    gateway = await startGateway();
    session = await gateway.openSession("traces-e2e");
    provider = await nodeProvider(gateway, { name: LONG_PROVIDER, session: session.id, tools: ["run_build"] });
    provider.push("build", "build 1 finished", "surface", { run: 1, branch: "main" });
    provider.push("build", "build 2 finished", "inject", { run: 2 });
    provider.push("notes", "kept, not delivered", "keep");
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: "light" });
    frames = recordFrames(context);
    panel = await openPanel(context, gateway);
    await panel.evaluate(() => (window.__notReloaded = true));
  });

  after(async () => {
    provider?.close();
    await browser?.close();
    await gateway?.stop();
  });

  const rows = () => panel.locator('[data-testid="traces-list"] tbody tr');
  // Sessions starting and ending are traces too; these tests are about pushes.
  const onlyPushes = () => panel.getByRole("combobox", { name: "Kind" }).selectOption("push");

  test("the list shows a trace per delivered push, newest first, with session, provider, status and spans", async () => {
    await goTo(panel, "Traces");
    await onlyPushes();
    await waitFor(async () => (await rows().count()) === 2, "two traces (the keep push has none)");
    const text = await rows().first().innerText();
    for (const word of ["push", "traces-e2e", "ok", "2"]) assert.ok(text.includes(word), `${word} in ${text}`);
    assert.ok(text.replace(/\s/g, "").includes(LONG_PROVIDER), `the provider in ${text}`);
    const heads = await panel.locator('[data-testid="traces-list"] thead th').allInnerTexts();
    assert.deepEqual(
      heads.map((h) => h.trim().toLowerCase()),
      ["time", "name", "session", "provider · tool", "duration", "status", "spans"],
    );
  });

  test("a new push appears while the page is open (told by traces.changed, no reload)", async () => {
    provider.push("build", "build 3 finished", "surface", { run: 3 });
    await waitFor(async () => (await rows().count()) === 3, "the third trace", 10000);
    assert.equal(await panel.evaluate(() => window.__notReloaded), true);
    // Told, not polled: the page follows traces and the new one came after a traces.changed.
    assert.ok(frames.sent.includes("traces.follow"), `the page follows traces: ${frames.sent}`);
    assert.ok(frames.events.includes("traces.changed"), `the push's trace came as an event: ${frames.events}`);
  });

  test("an idle Traces page asks for nothing (no polling)", async () => {
    const idle = await watchIdle(frames);
    const lists = idle.sent.filter((m) => m === "traces.list").length;
    const told = idle.events.filter((k) => k === "traces.changed").length;
    assert.ok(lists <= told, `traces.list asked ${lists} times after ${told} traces.changed: ${idle.sent}`);
  });

  test("filters: status error matches none, the session filter keeps them", async () => {
    await panel.getByRole("combobox", { name: "Status" }).selectOption("error");
    await panel.getByText("No trace matches these filters.").waitFor();
    await panel.getByRole("combobox", { name: "Status" }).selectOption("all");
    await panel.getByRole("combobox", { name: "Session" }).selectOption(session.id);
    await waitFor(async () => (await rows().count()) === 3, "three traces of the session");
    await panel.getByRole("spinbutton", { name: /Min duration/ }).fill("60000");
    await panel.getByText("No trace matches these filters.").waitFor();
    await panel.getByRole("button", { name: "Clear filters" }).click();
    await onlyPushes();
    await waitFor(async () => (await rows().count()) === 3, "three traces again");
  });

  test("a trace opens as a waterfall: push, then delivery indented under it", async () => {
    const id = await rows().first().getAttribute("data-trace-id");
    await rows().first().getByRole("link").click();
    await waitFor(() => new URL(panel.url()).hash === `#/traces/${id}`, "the trace id in the URL");
    const view = panel.getByTestId("trace-view");
    const spans = view.locator("li.wf-row");
    await waitFor(async () => (await spans.count()) === 2, "two spans");
    assert.deepEqual(await spans.locator(".wf-name").allInnerTexts(), ["push", "delivery"]);
    assert.deepEqual(await spans.evaluateAll((els) => els.map((e) => e.dataset.depth)), ["0", "1"]);
    const [rootPad, childPad] = await spans.locator(".wf-name").evaluateAll((els) => els.map((e) => parseFloat(getComputedStyle(e).paddingLeft)));
    assert.ok(childPad > rootPad, `the child is indented (${childPad} > ${rootPad})`);
    assert.match(await spans.nth(1).getAttribute("title"), /^delivery: starts at \+.+, lasts .+/);
    // The bars sit in the trace's time range: the root's starts at the left edge.
    const rootBar = await spans.first().locator(".wf-bar").evaluate((e) => e.style.left);
    assert.equal(rootBar, "0%");
    assert.equal(await panel.evaluate(() => window.__notReloaded), true);
  });

  test("clicking a span shows its attributes, status and events in the side panel", async () => {
    const view = panel.getByTestId("trace-view");
    await view.locator("li.wf-row").first().locator(".wf-name").click();
    const detail = panel.getByTestId("span-detail");
    await detail.waitFor();
    const attrs = await detail.getByTestId("span-attributes").innerText();
    assert.match(attrs, /stream\s+build/);
    assert.match(attrs, /level\s+surface/);
    assert.match(await detail.innerText(), /ok/);
    assert.match(await detail.innerText(), /events \(0\)/i);
    await screenshot(panel, "traces");
    await view.locator("li.wf-row").nth(1).locator(".wf-name").click();
    await waitFor(async () => /delivery/.test(await detail.locator("h3").innerText()), "the delivery span's details");
    assert.match(await detail.innerText(), /Parent/);
  });

  test("a stream event's trace link opens the Traces page on that trace", async () => {
    await goTo(panel, "Streams");
    const list = panel.getByRole("list", { name: /Stream events/ });
    const item = list.getByRole("listitem").filter({ hasText: "build 1 finished" });
    const link = item.getByRole("link", { name: "trace" });
    await link.waitFor();
    const id = await link.getAttribute("data-trace-id");
    assert.equal(await list.getByRole("listitem").filter({ hasText: "kept, not delivered" }).getByRole("link").count(), 0, "a kept event has no trace");
    await link.click();
    await panel.getByRole("heading", { level: 1, name: "Traces" }).waitFor();
    assert.equal(new URL(panel.url()).hash, `#/traces/${id}`);
    const view = panel.getByTestId("trace-view");
    await waitFor(async () => (await view.locator("li.wf-row").count()) === 2, "the linked trace's spans");
    assert.ok((await view.innerText()).includes(id.slice(0, 8)), "the view names the trace");
    assert.equal(await panel.locator(`[data-testid="traces-list"] tr[data-trace-id="${id}"]`).getAttribute("aria-current"), "true");
  });

  test("a live event gets its trace link once the ledger has it", async () => {
    await goTo(panel, "Streams");
    provider.push("build", "build 4 finished live", "surface", { run: 4 });
    const item = panel.getByRole("list", { name: /Stream events/ }).getByRole("listitem").filter({ hasText: "build 4 finished live" });
    await item.getByRole("link", { name: "trace" }).waitFor({ timeout: 10000 });
  });

  test("a deep link opens the trace after a reload", async () => {
    await goTo(panel, "Traces");
    await onlyPushes();
    await waitFor(async () => (await rows().count()) === 4, "four traces");
    const traceId = await rows().nth(1).getAttribute("data-trace-id");
    await panel.goto(`${gateway.httpBase}/#/traces/${traceId}`);
    await panel.reload();
    await panel.getByRole("status").filter({ hasText: "Live" }).waitFor();
    await waitFor(async () => (await panel.getByTestId("trace-view").locator("li.wf-row").count()) === 2, "the deep-linked trace");
    assert.equal(await panel.locator(`[data-testid="traces-list"] tr[data-trace-id="${traceId}"]`).getAttribute("aria-current"), "true");
  });

  test("Diagnostics shows the history card, durable, and the panel shows no memory-only notice", async () => {
    await goTo(panel, "Diagnostics");
    await waitFor(async () => (await panel.getByTestId("diag-history-durable").textContent()) === "Durable", "durable history");
    assert.match(await panel.getByTestId("diag-history-path").innerText(), /history\.sqlite3$/);
    assert.match(await panel.getByTestId("diag-history-written").innerText(), /^\d+$/);
    assert.equal(await panel.getByTestId("history-notice").count(), 0);
  });

  test("the page logged no errors", async () => {
    assert.deepEqual(panel.errors, []);
  });
});

describe("history on the Streams page, across a session's end and a gateway restart", () => {
  const KEPT = 620;
  let gateway, session, browser, context, panel, provider;

  before(async () => {
    gateway = await startGateway();
    session = await gateway.openSession("history-e2e");
    provider = await nodeProvider(gateway, { name: "recorder", session: session.id });
    // `keep` is not budgeted: enough events for two pages (500 a page).
    for (let i = 0; i < KEPT; i++) provider.push("log", `line ${i}${i % 100 === 3 ? " haystack-needle" : ""}`, "keep", { i });
    provider.push("alerts", "the build broke", "surface", { severity: "high" });
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: "light" });
    panel = await openPanel(context, gateway);
  });

  after(async () => {
    provider?.close();
    await browser?.close();
    await gateway?.stop();
  });

  const count = () => panel.getByTestId("streams-count").innerText();
  const counts = (start, what) => waitFor(async () => (await count()).startsWith(start), what);
  const list = () => panel.getByRole("list", { name: /Stream events/ });

  /** The ended session's events: a page, the older ones, a search (with its trace link). */
  async function browseEnded() {
    await panel.getByRole("combobox", { name: "Session" }).selectOption(session.id);
    await counts("500 events · newest first, older ones below · the session has ended", "the newest page of the ended session");
    assert.equal(await panel.getByTestId("streams-tail").innerText(), "ended");
    assert.match(await panel.getByRole("combobox", { name: "Session" }).locator("option:checked").innerText(), /ended/);
    assert.match(await list().getByRole("listitem").first().innerText(), /the build broke/);
    await panel.getByRole("button", { name: "Load older" }).click();
    await counts(`${KEPT + 1} events · newest first · the session has ended`, "every event after Load older");
    await panel.getByRole("searchbox", { name: "Search" }).fill("haystack-needle");
    await counts("7 events matching", "the search's matches");
    assert.match(await list().getByRole("listitem").first().innerText(), /line 603 haystack-needle/);
    await panel.getByRole("searchbox", { name: "Search" }).fill("");
    await panel.getByRole("combobox", { name: "Outcome" }).selectOption("surface");
    await counts("1 event matching", "the surfaced event");
    await list().getByRole("listitem").first().getByRole("link", { name: "trace" }).waitFor();
    await panel.getByRole("combobox", { name: "Outcome" }).selectOption("all");
  }

  test("after the session ended, its events are still listed, paged and searchable", async () => {
    await goTo(panel, "Streams");
    await counts("500 events", "the live session's newest page");
    await session.stop();
    provider.close();
    await waitFor(async () => (await gateway.tap(["status", "--json"])).stdout.includes(session.id) === false, "the session to end");
    await browseEnded();
  });

  test("after the gateway restarted on the same TAP_HOME, they are still there", async () => {
    await gateway.restart();
    panel = await openPanel(context, gateway);
    await goTo(panel, "Streams");
    await browseEnded();
    await goTo(panel, "Traces");
    await panel.getByRole("combobox", { name: "Kind" }).selectOption("push");
    const rows = panel.locator('[data-testid="traces-list"] tbody tr');
    await waitFor(async () => (await rows.count()) === 1, "the surfaced push's trace, from before the restart");
    assert.match(await rows.first().innerText(), /recorder/);
  });

  test("the pages logged no errors", async () => {
    assert.deepEqual(panel.errors, []);
  });
});

describe("history the gateway cannot write", () => {
  let gateway, browser, panel;

  before(async () => {
    gateway = await startGateway();
    // A directory where the database file belongs: the ledger cannot open it and keeps
    // history in memory, with the reason.
    await gateway.stopProcesses();
    const file = path.join(gateway.env.TAP_HOME, "history.sqlite3");
    for (const f of [file, `${file}-wal`, `${file}-shm`]) await rm(f, { force: true });
    await mkdir(file);
    await gateway.restart();
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: "light" });
    panel = await openPanel(context, gateway);
  });

  after(async () => {
    await browser?.close();
    await gateway?.stop();
  });

  test("every page says history is in memory only, and Diagnostics says why", async () => {
    const notice = panel.getByTestId("history-notice");
    await notice.waitFor();
    assert.match(await notice.innerText(), /History in memory only/);
    await goTo(panel, "Traces");
    await notice.waitFor();
    await goTo(panel, "Diagnostics");
    await waitFor(async () => (await panel.getByTestId("diag-history-durable").textContent()) === "Memory only", "memory-only history");
    assert.deepEqual(panel.errors, []);
  });
});

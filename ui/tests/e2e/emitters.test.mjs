// The Emitters page against the real gateway and its emitter engine: a command emitter made
// from the page's form runs, its EventFilter drops a line (kept 2, dropped 1), the run shows
// as a bar on the timeline whose details link to the run's trace and to its lines on the
// Streams page; the rule tester names the rule a pasted line matches; a bad regex is refused
// naming its rule; a continuous emitter is stopped from the page.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { goTo, openPanel } from "../../../tests/js-support/browser.mjs";
import { waitFor } from "../../../tests/js-support/wait.mjs";
import { launchBrowser, recordFrames, screenshot, startGateway, watchIdle } from "./support.mjs";

const COMMAND = "for i in 1 2 3; do echo line-$i; done";

describe("the Emitters page", () => {
  let gateway, session, browser, panel, frames;

  before(async () => {
    gateway = await startGateway({ ownHome: true });
    session = await gateway.openSession("emitters-e2e");
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: "light" });
    frames = recordFrames(context);
    panel = await openPanel(context, gateway);
    await panel.evaluate(() => (window.__notReloaded = true));
  });

  after(async () => {
    await browser?.close();
    await gateway?.stop();
  });

  const form = () => panel.getByRole("form", { name: "New emitter" });
  const card = (name) => panel.locator(`li.emitter[data-emitter="${name}"]`);
  const count = (name, which) => card(name).locator(`[data-testid="emitter-counts"] [data-count="${which}"] dd`);
  const status = (name) => card(name).getByTestId("emitter-status");

  /** Opens the form and fills name, command and every. */
  async function fillForm(name, command, every = "") {
    if ((await form().count()) === 0) await panel.getByRole("button", { name: "New emitter" }).click();
    await form().getByRole("textbox", { name: "Name", exact: true }).fill(name);
    await form().getByRole("textbox", { name: /^Command/ }).fill(command);
    await form().getByRole("textbox", { name: "Every" }).fill(every);
  }

  test("a new session has no emitters; the page is in the navigation", async () => {
    await goTo(panel, "Emitters");
    await panel.getByText("This session runs no emitters.").waitFor();
    assert.equal(await panel.getByRole("combobox", { name: "Session" }).inputValue(), session.id);
  });

  test("the rule tester names the rule a pasted line matches, and its outcome", async () => {
    await fillForm("count-lines", COMMAND, "1h");
    await form().getByRole("button", { name: "Add rule" }).click();
    await form().getByRole("textbox", { name: "Rule 1 regex" }).fill("line-2");
    assert.equal(await form().getByRole("combobox", { name: "Rule 1 outcome" }).inputValue(), "drop");
    await form().getByRole("button", { name: "Add rule" }).click();
    await form().getByRole("textbox", { name: "Rule 2 regex" }).fill("^LINE-3$");
    await form().getByRole("combobox", { name: "Rule 2 outcome" }).selectOption("surface");
    const result = form().getByTestId("rule-tester-result");
    const tester = form().getByRole("textbox", { name: "Test a line" });
    await tester.fill("line-2");
    await waitFor(async () => (await result.innerText()) === "Rule 1 (line-2) matches: drop", "rule 1 matches line-2");
    assert.equal(await form().locator("li.rule.matched").getAttribute("data-rule"), "0");
    await tester.fill("line-3");
    await waitFor(async () => (await result.innerText()) === "Rule 2 (^LINE-3$) matches: surface", "rule 2 matches line-3 (case-insensitive)");
    await tester.fill("line-1");
    await waitFor(async () => (await result.innerText()) === "No rule matches: keep", "no rule matches line-1");
    // Moving and removing rules: rule 2 goes first, then is removed.
    await form().getByRole("button", { name: "Move rule 2 up" }).click();
    assert.equal(await form().getByRole("textbox", { name: "Rule 1 regex" }).inputValue(), "^LINE-3$");
    await form().getByRole("button", { name: "Remove rule 1" }).click();
    assert.equal(await form().locator("li.rule").count(), 1);
    assert.equal(await form().getByRole("textbox", { name: "Rule 1 regex" }).inputValue(), "line-2");
  });

  test("a bad regex is refused by the gateway, naming its rule, next to the form", async () => {
    await form().getByRole("button", { name: "Add rule" }).click();
    await form().getByRole("textbox", { name: "Rule 2 regex" }).fill("(unclosed");
    await form().getByRole("button", { name: "Start emitter" }).click();
    const error = form().getByTestId("emitter-form-error");
    await error.waitFor();
    // The gateway counts rules from 0; the form says which of its rules that is.
    assert.match(await error.innerText(), /eventFilter rule 1: '\(unclosed' is not a valid regex/);
    assert.match(await error.innerText(), /rule 2 in the form/);
    await waitFor(async () => (await form().getByRole("textbox", { name: "Rule 2 regex" }).getAttribute("aria-invalid")) === "true", "rule 2 marked invalid");
    await form().getByRole("button", { name: "Remove rule 2" }).click();
  });

  test("a command emitter made in the form runs: 3 lines, kept 2, dropped 1, one run bar", async () => {
    await form().getByRole("button", { name: "Start emitter" }).click();
    await form().waitFor({ state: "detached" });
    await card("count-lines").waitFor();
    await waitFor(async () => (await count("count-lines", "lines").innerText()) === "3", "3 lines read", 15000);
    assert.equal(await count("count-lines", "kept").innerText(), "2");
    assert.equal(await count("count-lines", "dropped").innerText(), "1");
    assert.equal(await count("count-lines", "surfaced").innerText(), "0");
    // Timed: between runs, the next one an hour away.
    await waitFor(async () => (await status("count-lines").innerText()) === "waiting", "waiting for its next run");
    assert.equal(await card("count-lines").getByTestId("emitter-schedule").innerText(), "every 1h");
    assert.match(await card("count-lines").getByTestId("emitter-next").innerText(), /^in (59m|1h)/);
    const bars = card("count-lines").locator(".run-bar");
    await waitFor(async () => (await bars.count()) === 1, "one run bar");
    assert.match(await bars.first().getAttribute("class"), /\brun-ok\b/);
    assert.match(await bars.first().getAttribute("aria-label"), /^Run 1: exited 0/);
    const details = card("count-lines").getByTestId("run-details");
    assert.match(await details.getByTestId("run-lines").innerText(), /^3 lines: 2 kept, 1 dropped/);
    assert.equal(await panel.evaluate(() => window.__notReloaded), true);
  });

  test("a run's trace link opens the Traces page on that trace", async () => {
    const bar = card("count-lines").locator(".run-bar").first();
    await bar.hover();
    await bar.click();
    assert.equal(await bar.getAttribute("aria-pressed"), "true");
    const link = card("count-lines").getByTestId("run-details").getByRole("link", { name: "trace" });
    const id = await link.getAttribute("data-trace-id");
    assert.match(id, /^[0-9a-f]{32}$/);
    await link.click();
    await panel.getByRole("heading", { level: 1, name: "Traces" }).waitFor();
    assert.equal(new URL(panel.url()).hash, `#/traces/${id}`);
    const view = panel.getByTestId("trace-view");
    await waitFor(async () => (await view.locator("li.wf-row").count()) >= 1, "the run's spans", 10000);
    assert.ok((await view.innerText()).includes(id.slice(0, 8)), "the view names the trace");
  });

  test("the stream link shows the emitter's lines on the Streams page", async () => {
    await goTo(panel, "Emitters");
    await card("count-lines").getByTestId("run-details").getByRole("link", { name: "lines in count-lines" }).click();
    await panel.getByRole("heading", { level: 1, name: "Streams" }).waitFor();
    assert.equal(new URL(panel.url()).hash, `#/streams/${encodeURIComponent(session.id)}?stream=count-lines`);
    assert.equal(await panel.getByRole("combobox", { name: "Stream" }).inputValue(), "count-lines");
    const items = panel.getByRole("list", { name: /Stream events/ }).getByRole("listitem");
    await items.filter({ hasText: "line-1" }).first().waitFor({ timeout: 10000 });
    await items.filter({ hasText: "line-3" }).first().waitFor();
    for (const text of await items.allInnerTexts()) assert.match(text, /count-lines/, `only the count-lines stream: ${text}`);
    // "All streams" drops the stream from the address.
    await panel.getByRole("combobox", { name: "Stream" }).selectOption("all");
    await waitFor(() => new URL(panel.url()).hash === `#/streams/${encodeURIComponent(session.id)}`, "no stream in the address");
  });

  test("a continuous emitter runs until it is stopped from the page (user-owned: asks, then force)", async () => {
    await goTo(panel, "Emitters");
    await fillForm("sleeper", "sleep 1000");
    await form().getByRole("textbox", { name: "Description" }).fill("Sleeps until stopped");
    await form().getByRole("button", { name: "Start emitter" }).click();
    await card("sleeper").waitFor();
    await waitFor(async () => (await status("sleeper").innerText()) === "running", "sleeper running", 15000);
    assert.equal(await card("sleeper").getByTestId("emitter-schedule").innerText(), "continuous");
    await waitFor(async () => (await card("sleeper").locator(".run-bar.run-running").count()) === 1, "a running bar");
    // A running run lasts until now: its duration grows without new answers from the gateway.
    const lasted = card("sleeper").getByTestId("run-details").getByTestId("run-duration");
    await waitFor(async () => / s$/.test(await lasted.innerText()), "the running run past a second", 10000);
    await card("count-lines").locator(".run-bar").first().hover();
    await screenshot(panel, "emitters");

    await card("sleeper").getByRole("button", { name: "Stop sleeper" }).click();
    await card("sleeper").getByRole("button", { name: "Yes, stop" }).click();
    await waitFor(async () => (await status("sleeper").innerText()) === "stopped", "sleeper stopped", 15000);
    await waitFor(async () => (await card("sleeper").locator(".run-bar.run-stopped").count()) === 1, "the run bar shows stopped");
    await card("sleeper").getByRole("button", { name: "Start sleeper" }).waitFor();
    assert.equal(await panel.evaluate(() => window.__notReloaded), true);
  });

  test("changes arrive as emitters.changed events; an idle page asks for nothing (no polling)", async () => {
    await goTo(panel, "Emitters");
    await card("sleeper").getByRole("button", { name: "Start sleeper" }).waitFor();
    assert.ok(frames.sent.includes("emitters.follow"), `the page follows emitters: ${frames.sent}`);
    assert.ok(frames.events.includes("emitters.changed"), `runs, counts and stops came as events: ${frames.events}`);
    // Nothing runs now (count-lines waits an hour, sleeper is stopped).
    const idle = await watchIdle(frames);
    const lists = idle.sent.filter((m) => m === "emitters.list").length;
    const told = idle.events.filter((k) => k === "emitters.changed").length;
    assert.ok(lists <= told, `emitters.list asked ${lists} times after ${told} emitters.changed: ${idle.sent}`);
    assert.deepEqual(idle.sent, [], "no request while nothing changes");
  });

  test("the panel logged no errors", async () => {
    assert.deepEqual(panel.errors, []);
  });
});

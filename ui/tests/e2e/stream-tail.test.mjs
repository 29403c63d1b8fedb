// The Streams page's live tail: events appear as they are stored, Pause holds them (and
// counts them), Resume adds them, and thousands of live events stay virtualized.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { goTo } from "../../../tests/js-support/browser.mjs";
import { waitFor } from "../../../tests/js-support/wait.mjs";
import { launchBrowser, nodeProvider, panelInNewContext, screenshot, startGateway } from "./support.mjs";

describe("the live stream tail", () => {
  let gateway, session, browser, panel, provider;

  before(async () => {
    gateway = await startGateway();
    session = await gateway.openSession("tail");
    provider = await nodeProvider(gateway, { name: "ticker", session: session.id });
    provider.push("history", "stored before the page opened");
    browser = await launchBrowser();
    ({ panel } = await panelInNewContext(browser, gateway));
    await panel.evaluate(() => (window.__notReloaded = true));
  });

  after(async () => {
    await browser?.close();
    await gateway?.stop();
  });

  const count = () => panel.getByTestId("streams-count").innerText();
  const shows = (n) => waitFor(async () => (await count()).startsWith(`${n} event${n === 1 ? "" : "s"} ·`), `${n} events`);
  const list = () => panel.getByRole("list", { name: /Stream events/ });

  test("new events appear live on top of the history", async () => {
    await goTo(panel, "Streams");
    await shows(1);
    assert.match(await count(), /history, then live$/);
    assert.equal(await panel.getByTestId("streams-tail").innerText(), "live");
    for (let i = 1; i <= 3; i++) provider.push("ticks", `tick ${i}`, "keep", { i });
    await shows(4);
    assert.match(await list().getByRole("listitem").first().innerText(), /tick 3/);
    assert.match(await list().getByRole("listitem").last().innerText(), /stored before the page opened/);
  });

  test("Pause holds new events and counts them; Resume adds them", async () => {
    const pause = panel.getByRole("button", { name: "Pause" });
    await pause.focus();
    await panel.keyboard.press("Enter");
    const tail = panel.getByTestId("streams-tail");
    await waitFor(async () => (await tail.innerText()) === "paused · 0 new waiting", "paused");
    for (let i = 4; i <= 8; i++) provider.push("ticks", `tick ${i}`);
    await waitFor(async () => (await tail.innerText()) === "paused · 5 new waiting", "5 waiting");
    assert.ok((await count()).startsWith("4 events ·"), "the list stayed still");
    assert.equal(await panel.getByRole("button", { name: "Resume" }).getAttribute("aria-pressed"), "true");
    await screenshot(panel, "streams-paused");
    await panel.getByRole("button", { name: "Resume" }).click();
    await shows(9);
    assert.equal(await tail.innerText(), "live");
    assert.match(await list().getByRole("listitem").first().innerText(), /tick 8/);
  });

  test("thousands of live events stay fast: filtered, searched, and only the rows in view rendered", async () => {
    const N = 3000;
    for (let i = 0; i < N; i++) provider.push(`burst-${i % 10}`, `burst ${i}${i % 500 === 0 ? " marker" : ""}`);
    await shows(9 + N);
    const rendered = await list().getByRole("listitem").count();
    assert.ok(rendered > 5 && rendered < 80, `only the rows in view are in the DOM (${rendered})`);
    assert.match(await list().getByRole("listitem").first().innerText(), new RegExp(`burst ${N - 1}\\b`));
    // The search asks the gateway's ledger (full text), and new live rows must match it too.
    await panel.getByRole("searchbox", { name: "Search" }).fill("marker");
    await waitFor(async () => (await count()).startsWith(`${N / 500} events matching`), "search over the stored events");
    provider.push("burst-0", "one more marker, live");
    provider.push("burst-0", "live, not matching");
    await waitFor(async () => (await count()).startsWith(`${N / 500 + 1} events matching`), "a live row that matches");
    assert.match(await list().getByRole("listitem").first().innerText(), /one more marker, live/);
    // Without a search the newest page is back, the older ones a click away.
    await panel.getByRole("searchbox", { name: "Search" }).fill("");
    await waitFor(async () => (await count()).startsWith("500 events · newest first, older ones below"), "the newest page again");
    assert.match(await list().getByRole("listitem").first().innerText(), /live, not matching/);
    assert.equal(await panel.evaluate(() => window.__notReloaded), true);
  });

  test("the page logged no errors", async () => {
    assert.deepEqual(panel.errors, []);
  });
});

// The tray popup at its own window size (400 px wide): a long session label must not make
// the page scroll sideways (the session picker shortens it and shows it whole on hover), and
// the countdown is calm while there is time left (the warning colour is for the last minute).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { waitFor } from "../../../tests/js-support/wait.mjs";
import { launchBrowser, popupLoginUrl, startGateway } from "./support.mjs";

const LONG_LABEL = "refactor-payment-service-branch-with-the-new-ledger-and-retries";

describe("the popup at its window size", () => {
  let gateway, browser, popup, ws;

  before(async () => {
    gateway = await startGateway();
    await gateway.openSession(LONG_LABEL);
    ws = new WebSocket(`ws://${gateway.hostPort}/`);
    const frames = [];
    ws.addEventListener("message", (e) => frames.push(JSON.parse(String(e.data))));
    await new Promise((r) => ws.addEventListener("open", r, { once: true }));
    ws.send(JSON.stringify({ type: "auth", mode: "pair", name: "a provider with a rather long name too" }));
    await waitFor(() => frames.find((f) => f.type === "auth.pairing"), "auth.pairing");
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 400, height: 520 } });
    popup = await context.newPage();
    await popup.goto(await popupLoginUrl(gateway));
    await popup.locator("li.popup-request").waitFor();
  });

  after(async () => {
    ws?.close();
    await browser?.close();
    await gateway?.stop();
  });

  test("a long session label does not make the popup scroll sideways", async () => {
    const { scroll, client } = await popup.evaluate(() => ({
      scroll: document.documentElement.scrollWidth,
      client: document.documentElement.clientWidth,
    }));
    assert.ok(scroll <= client, `the popup is ${scroll} px wide in a ${client} px window`);
  });

  test("the session picker shows the whole label on hover", async () => {
    const picker = popup.locator("li.popup-request select");
    const title = await picker.getAttribute("title");
    assert.ok(title?.includes(LONG_LABEL), `title: ${title}`);
  });

  test("the countdown starts calm, not in the warning colour", async () => {
    const fill = popup.locator("[data-testid=pairing-countdown] .bar-fill");
    assert.equal(await fill.getAttribute("data-urgent"), "false");
    const colours = await fill.evaluate((el) => {
      const root = getComputedStyle(document.documentElement);
      const probe = document.createElement("div");
      document.body.append(probe);
      probe.style.color = root.getPropertyValue("--attention");
      const attention = getComputedStyle(probe).color;
      probe.remove();
      return { fill: getComputedStyle(el).backgroundColor, attention };
    });
    assert.notEqual(colours.fill, colours.attention, "the bar is drawn in the warning colour from the start");
  });
});

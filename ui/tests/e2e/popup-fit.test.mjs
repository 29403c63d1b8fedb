// The tray popup sized to its content: the page reports how tall it wants to be
// (`data-wanted-height`), the desktop app gives the window that height within its bounds
// (crates/tap-desktop-core/src/popup.rs), and this test does what the app does with the
// browser's viewport. With one request there is no large empty area; with three the list
// scrolls while the header and "Deny all" stay in view, and no Deny button is cut off.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { waitFor } from "../../../tests/js-support/wait.mjs";
import { launchBrowser, popupLoginUrl, startGateway } from "./support.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));

/** The popup's bounds, read from the Rust constants (named once, there). */
async function popupBounds() {
  const rust = await readFile(path.resolve(here, "../../../crates/tap-desktop-core/src/popup.rs"), "utf8");
  const constant = (name) => {
    const m = new RegExp(`pub const ${name}: f64 = ([0-9.]+);`).exec(rust);
    if (!m) throw new Error(`${name} not found in popup.rs`);
    return Number(m[1]);
  };
  return { width: constant("POPUP_WIDTH"), min: constant("POPUP_MIN_HEIGHT"), max: constant("POPUP_MAX_HEIGHT") };
}

/** Empty space the popup may leave under its content (the page's own bottom padding is not counted). */
const MAX_EMPTY_PX = 16;

describe("the popup window fits its content", () => {
  let gateway, browser, popup, bounds;
  const providers = [];

  /** A provider asking to pair (it stays pending until closed). */
  async function request(name) {
    const ws = new WebSocket(`ws://${gateway.hostPort}/`);
    const frames = [];
    ws.addEventListener("message", (e) => frames.push(JSON.parse(String(e.data))));
    await new Promise((r) => ws.addEventListener("open", r, { once: true }));
    ws.send(JSON.stringify({ type: "auth", mode: "pair", name }));
    await waitFor(() => frames.find((f) => f.type === "auth.pairing"), "auth.pairing");
    providers.push(ws);
  }

  /** What the desktop app does: the window takes the wanted height, within bounds. */
  async function fitTo(requests) {
    await waitFor(async () => (await popup.locator("li.popup-request").count()) === requests, `${requests} requests in the popup`);
    // The height settles once the page re-measured after the last change.
    const wanted = await waitFor(async () => {
      const a = Number(await popup.locator("main.popup").getAttribute("data-wanted-height"));
      const expectFoot = requests > 1 ? await popup.getByRole("button", { name: "Deny all" }).count() : 1;
      return a > 0 && expectFoot > 0 ? a : null;
    }, "the popup's wanted height");
    const height = Math.min(bounds.max, Math.max(bounds.min, wanted));
    await popup.setViewportSize({ width: bounds.width, height });
    return { wanted, height };
  }

  /** Geometry of the page at its current size. */
  function layout() {
    return popup.evaluate(() => {
      const rect = (el) => el && el.getBoundingClientRect().toJSON();
      const list = document.querySelector(".popup-list");
      const main = document.querySelector("main.popup");
      return {
        viewport: { width: innerWidth, height: innerHeight },
        page: { scrollHeight: document.documentElement.scrollHeight, clientHeight: document.documentElement.clientHeight },
        list: { ...rect(list), scrollHeight: list.scrollHeight, clientHeight: list.clientHeight },
        contentBottom: rect(main.lastElementChild).bottom,
        paddingBottom: parseFloat(getComputedStyle(main).paddingBottom),
        denyAll: rect([...document.querySelectorAll("button")].find((b) => b.textContent.trim() === "Deny all")),
        denies: [...document.querySelectorAll("li.popup-request button")]
          .filter((b) => b.textContent.trim() === "Deny")
          .map((b) => rect(b)),
      };
    });
  }

  before(async () => {
    bounds = await popupBounds();
    gateway = await startGateway();
    await gateway.openSession("popup-fit");
    await request("first provider");
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: bounds.width, height: bounds.max }, colorScheme: "light" });
    popup = await context.newPage();
    await popup.goto(await popupLoginUrl(gateway));
  });

  after(async () => {
    for (const ws of providers) ws.close();
    await browser?.close();
    await gateway?.stop();
  });

  test("with one request the window is as tall as the request, with no large empty area", async () => {
    const { wanted, height } = await fitTo(1);
    assert.ok(wanted < bounds.max, `one request wants ${wanted} px, the most is ${bounds.max}`);
    const l = await layout();
    const empty = l.viewport.height - l.contentBottom - l.paddingBottom;
    assert.ok(empty <= MAX_EMPTY_PX, `${empty} px empty under one request in a ${height} px window`);
    assert.ok(l.page.scrollHeight <= l.page.clientHeight, `the page scrolls: ${JSON.stringify(l.page)}`);
    for (const d of l.denies) assert.ok(d.bottom <= l.viewport.height, `Deny is cut off: ${JSON.stringify(d)}`);
  });

  test("with two requests both Deny buttons and Deny all are in view", async () => {
    await request("second provider");
    await fitTo(2);
    const l = await layout();
    assert.ok(l.denyAll, "Deny all is shown");
    assert.ok(l.denyAll.bottom <= l.viewport.height, `Deny all below the fold: ${JSON.stringify(l.denyAll)}`);
    assert.equal(l.denies.length, 2);
    for (const d of l.denies) assert.ok(d.bottom <= l.viewport.height, `Deny below the fold: ${JSON.stringify(d)} in ${l.viewport.height}`);
  });

  test("with three requests only the list scrolls; the header and Deny all stay in view", async () => {
    await request("third provider");
    const { wanted, height } = await fitTo(3);
    assert.ok(wanted > bounds.max && height === bounds.max, `three requests want ${wanted} px (window ${height})`);
    const l = await layout();
    assert.ok(l.page.scrollHeight <= l.page.clientHeight, `the page itself scrolls: ${JSON.stringify(l.page)}`);
    assert.ok(l.list.scrollHeight > l.list.clientHeight, `the list scrolls: ${JSON.stringify(l.list)}`);
    assert.ok(l.denyAll && l.denyAll.bottom <= l.viewport.height, `Deny all in view: ${JSON.stringify(l.denyAll)}`);
    assert.ok(await popup.getByRole("heading", { level: 1, name: /Pairing requests/ }).isVisible());
    // A Deny button is either inside the list's visible part, or scrolled away entirely.
    const visible = l.denies.filter((d) => d.bottom > l.list.top && d.top < l.list.bottom);
    assert.ok(visible.length >= 1, "at least one Deny in view");
    for (const d of visible) assert.ok(d.top >= l.list.top - 1 && d.bottom <= l.list.bottom + 1, `a Deny is cut by the list's edge: ${JSON.stringify(d)} in ${JSON.stringify(l.list)}`);
    // Scrolled to the end, the last request's Deny is reachable.
    await popup.locator(".popup-list").evaluate((el) => (el.scrollTop = el.scrollHeight));
    const end = await layout();
    const last = end.denies.at(-1);
    assert.ok(last.top >= end.list.top - 1 && last.bottom <= end.list.bottom + 1, `the last Deny after scrolling: ${JSON.stringify(last)}`);
  });
});

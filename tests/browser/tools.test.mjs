// The extension's read tools on the real React app (issue 41, "Done when"): the user pairs it
// with the code the panel shows, shares the app's tab (badge TAP), picks an element with the
// inspector (real mouse), and `tap call` and the official MCP client get the real outline, the
// picked element with its React component's props and state, the page's console error, the
// failed fetches (a 404 and a refused connection) and a screenshot that is a picture of the
// page. "Ask the agent" from the inspector reaches the session as an inject; Escape ends a
// pick. A second tab is shared only when the user clicks, with no new code, and calls reach
// the tab their target names; the browser-errors stream's filter drops favicon.ico failures;
// unsharing removes the tools at once.
// TAP_SCREENSHOTS=1 also writes docs/screenshots/browser-popup.png and browser-inspector.png.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { PNG } from "pngjs";
import { largestForeignBlock } from "../js-support/uniform-blocks.mjs";
import { clickShare, pairAndShare, popupScreenshot, saveScreenshot, setup, tabRow, waitFor, waitForShared, WAIT_MS } from "./support.mjs";
import { shadowControls } from "./inspector.mjs";

let h, popup, app, tabId, target, notesTab;
const SCREENSHOTS = process.env.TAP_SCREENSHOTS === "1";

before(async () => {
  h = await setup({ sessionLabel: "browser-tools" });
  app = await h.openApp({ tab: "app" });
  popup = await h.popup();
  tabId = await h.tabIdOf(app, popup);
  target = `tab-${tabId}`;
});

after(async () => {
  await h?.close();
});

/** A call with the app's tab as `target` that must succeed. */
const read = (tool, args = {}) => h.callOk(tool, { target, ...args });

test("the built app is React's development build: the function component's fiber has its props and state", async () => {
  // What the extension's React tools read is there at all (else they could only fail).
  const fiber = await app.evaluate(() => {
    const li = document.querySelector("li[data-item=apples]");
    let f = li[Object.keys(li).find((k) => k.startsWith("__reactFiber$"))];
    while (f && typeof f.type !== "function") f = f.return;
    return { name: f.type.name, props: f.memoizedProps, state: f.memoizedState.memoizedState, debug: "_debugOwner" in f };
  });
  assert.deepEqual(fiber, { name: "TodoList", props: { title: "Groceries", items: ["apples", "bread", "milk"] }, state: ["bread"], debug: true });
});

test("pairing: the popup asks for the code the panel shows; the shared tab gets the badge TAP and is an instance", async () => {
  assert.equal(await h.badge(popup, tabId), "", "no badge before sharing");
  await pairAndShare(h, popup, tabId);
  const instances = await h.callOk("list_browser_instances");
  const text = JSON.stringify(instances);
  assert.match(text, new RegExp(`tab-${tabId}`));
  assert.match(text, /Tap test app/, "the tab's title in its metadata");
  const tools = await h.toolNames();
  for (const name of ["browser_outline", "browser_query", "browser_picked_element", "browser_styles", "browser_console", "browser_failed_requests", "browser_screenshot", "browser_react_tree", "browser_click", "browser_type", "browser_navigate", "browser_evaluate", "list_browser_instances"]) {
    assert.ok(tools.includes(name), `${name} in the session's tools: ${tools}`);
  }
  assert.deepEqual(popup.errors, [], "the popup's errors");
});

test("a second tab is listed but not shared until the user clicks: no badge, not an instance", async () => {
  const notes = await h.openTab(h.appUrl("/notes.html", { tab: "notes" }));
  // The user is on the app's tab when they open the popup (it lists that tab first).
  await app.bringToFront();
  await popup.reload();
  const notesId = await h.tabIdOf(notes, popup);
  const row = tabRow(popup, notesId);
  await row.waitFor({ timeout: WAIT_MS });
  assert.match(await row.textContent(), /Release notes/);
  assert.equal((await row.locator("button.share").textContent()).trim(), "Share");
  assert.equal(await h.badge(popup, notesId), "");
  assert.doesNotMatch(JSON.stringify(await h.callOk("list_browser_instances")), new RegExp(`tab-${notesId}\\b`));
  assert.equal((await tabRow(popup, tabId).locator("button.share").textContent()).trim(), "Stop sharing");
  if (SCREENSHOTS) await saveScreenshot("browser-popup", await popupScreenshot(popup));
  notesTab = { page: notes, id: notesId };
});

test("sharing the second tab needs no new code: two instances of one pairing, each call routed by target", async () => {
  const { page: notes, id: notesId } = notesTab;
  await tabRow(popup, notesId).locator("button.share").click();
  await waitForShared(h, popup, notesId);
  assert.equal(await popup.locator("#pair-form").isVisible(), false, "no code asked");
  assert.equal((await h.gateway.pairings()).length, 1, "still one pairing");
  const instances = JSON.stringify(await h.callOk("list_browser_instances"));
  assert.match(instances, new RegExp(`tab-${tabId}\\b`));
  assert.match(instances, new RegExp(`tab-${notesId}\\b`));
  assert.equal((await h.callOk("browser_outline", { target: `tab-${notesId}`, maxNodes: 3 })).title, "Release notes");
  assert.equal((await h.callOk("browser_outline", { target, maxNodes: 3 })).title, "Tap test app");
  await tabRow(popup, notesId).locator("button.share", { hasText: "Stop sharing" }).click();
  await waitFor(async () => !JSON.stringify((await h.call("list_browser_instances")).json).includes(`tab-${notesId}`), "the notes tab to leave");
  assert.equal((await read("browser_outline", { maxNodes: 1 })).title, "Tap test app", "the app's tab still shared");
  await notes.close();
});

test("browser_outline gives the real page: headings, list items, buttons with their names", async () => {
  const outline = await read("browser_outline");
  assert.equal(outline.title, "Tap test app");
  assert.equal(new URL(outline.url).pathname, "/");
  assert.equal(outline.truncated, false);
  const flat = outline.nodes.map((n) => `${n.role ?? ""}|${n.tag}|${n.name ?? ""}|${n.text ?? ""}`).join("\n");
  for (const expected of [/heading\|h1\|[^\n]*Tap test app/, /\|h2\|[^\n]*Groceries/, /\|li\|[^\n]*apples/, /button\|button\|[^\n]*Log an error/, /\|input\|/]) {
    assert.match(flat, expected);
  }
  for (const n of outline.nodes) assert.equal(typeof n.selector, "string");
  // Bounded: a small maxNodes is obeyed and says it cut.
  const cut = await read("browser_outline", { maxNodes: 5 });
  assert.equal(cut.nodes.length, 5);
  assert.equal(cut.truncated, true);
});

test("browser_query by selector and by text, browser_styles of a match", async () => {
  const bySelector = await read("browser_query", { selector: "#todo-title" });
  assert.equal(bySelector.total, 1);
  assert.equal(bySelector.matches[0].text.trim(), "Groceries");
  assert.ok(bySelector.matches[0].box.width > 0);
  const byText = await read("browser_query", { text: "Fetch a missing file" });
  assert.ok(byText.matches.some((m) => m.tag === "button"), JSON.stringify(byText));
  const styles = await read("browser_styles", { selector: "h1", properties: ["color", "display"] });
  assert.equal(styles.styles.color, "rgb(29, 78, 137)"); // #1d4e89 in app.css
  assert.equal(styles.styles.display, "block");
  const h1 = await app.locator("h1").boundingBox();
  assert.deepEqual([styles.box.x, styles.box.y, styles.box.width, styles.box.height].map(Math.round), [h1.x, h1.y, h1.width, h1.height].map(Math.round));
  const bad = await h.call("browser_query", { target, selector: "#todo-title", text: "both" });
  assert.notEqual(bad.code, 0, "selector and text together are refused");
});

test("the inspector: Pick element in the popup, hover and click in the page; the click does not reach the app; the picked element has its React props and state", async () => {
  const none = await h.call("browser_picked_element", { target });
  assert.equal(none.json?.errorCode, "NOT_FOUND", none.stdout);

  await tabRow(popup, tabId).locator("button.pick").click();
  await app.bringToFront();
  const item = app.locator("li[data-item=apples]");
  const box = await item.boundingBox();
  await app.mouse.move(box.x + 5, box.y + box.height / 2);
  await app.mouse.move(box.x + box.width / 3, box.y + box.height / 2, { steps: 4 });
  // The overlay names the hovered element before the user clicks.
  await waitFor(async () => (await shadowControls(app)).texts.some((t) => t.includes("li")), "the overlay's label for the hovered li");
  await app.mouse.click(box.x + box.width / 3, box.y + box.height / 2);

  const picked = await waitFor(async () => {
    const r = await h.call("browser_picked_element", { target });
    return r.code === 0 && r.json;
  }, "the picked element");
  assert.equal(picked.tag, "li");
  assert.equal(picked.text.trim(), "apples");
  assert.equal(await app.locator(picked.selector).getAttribute("data-item"), "apples", `the selector ${picked.selector} finds it`);
  assert.equal(picked.react?.component, "TodoList", JSON.stringify(picked.react));
  assert.deepEqual(picked.react.props, { title: "Groceries", items: ["apples", "bread", "milk"] });
  assert.match(JSON.stringify(picked.react.state), /bread/, "useState's value");
  // The pick's click was swallowed: the li would have toggled to done.
  assert.equal(await item.getAttribute("class"), "");
  assert.equal(await app.locator(".summary").textContent(), "1 of 3 done");

  const tree = await read("browser_react_tree", {});
  assert.equal(tree.component, "TodoList");
  assert.ok(tree.owners.some((o) => (o.name ?? o) === "App"), JSON.stringify(tree.owners));
  const counter = await read("browser_react_tree", { selector: "#count" });
  assert.equal(counter.component, "Counter");
  assert.deepEqual(counter.props, { label: "Clicks", start: 3 });
  assert.deepEqual(counter.state, { count: 3 });
});

test("Ask the agent from the inspector reaches the session as an inject with the element's context", async () => {
  const question = "Why is apples not crossed out?";
  const controls = await shadowControls(app);
  const field = controls.textareas[0] ?? controls.inputs[0];
  assert.ok(field, `the Ask the agent box has a text field: ${JSON.stringify(controls)}`);
  const ask = controls.buttons.find((b) => /ask/i.test(b.text));
  assert.ok(ask, `an Ask button among ${JSON.stringify(controls.buttons)}`);
  await app.mouse.click(field.x, field.y);
  await app.keyboard.type(question);
  if (SCREENSHOTS) await saveScreenshot("browser-inspector", await app.screenshot());
  await app.mouse.click(ask.x, ask.y);
  const line = await waitFor(() => h.session.lines().find((l) => JSON.stringify(l).includes(question)), "the inject in the session's events");
  const text = JSON.stringify(line);
  assert.equal(line.level, "inject", text);
  assert.match(text, /apples/, "the element's text");
  assert.match(text, /TodoList/, "the component");
});

test("Escape ends a pick without picking: the overlay goes, the picked element stays the one picked before", async () => {
  const before = await read("browser_picked_element");
  await popup.bringToFront();
  await tabRow(popup, tabId).locator("button.pick").click();
  await app.bringToFront();
  const host = app.locator("div[data-tap-inspector]");
  await waitFor(async () => (await host.getAttribute("data-tap-state")) === "picking", "the inspector to pick");
  const box = await app.locator("#count").boundingBox();
  await app.mouse.move(box.x + box.width / 2, box.y + box.height / 2, { steps: 3 });
  await app.keyboard.press("Escape");
  await waitFor(async () => (await host.getAttribute("data-tap-state")) !== "picking", "the pick to end");
  const after = await read("browser_picked_element");
  assert.equal(after.selector, before.selector);
  assert.equal(after.pickedAt, before.pickedAt);
});

test("console and failed requests: the app's error, its 404 and its refused fetch, from tap call; the stream's filter drops favicon.ico", async () => {
  const since = Date.now();
  // What Chromium does for a page without an icon, after the share (its own request came before).
  assert.equal(await app.evaluate(() => fetch("/favicon.ico").then((r) => r.status)), 404);
  await app.click("#log-error");
  await app.click("#fetch-missing");
  await app.waitForFunction(() => document.getElementById("last-fetch").textContent.endsWith(": 404"));
  await app.click("#fetch-refused");
  await app.waitForFunction(() => /Failed to fetch/.test(document.getElementById("last-fetch").textContent));

  const console_ = await waitFor(async () => {
    const r = await read("browser_console", { since, levels: ["error"] });
    return r.entries.some((e) => e.text.includes("boom from the app")) && r;
  }, "the console error");
  assert.ok(console_.entries.every((e) => e.level === "error"));
  const failed = await waitFor(async () => {
    const r = await read("browser_failed_requests", { since });
    const missing = r.requests.find((q) => q.url.endsWith("/missing.json"));
    const refused = r.requests.find((q) => q.url.startsWith(`http://127.0.0.1:${h.refusedPort}/`));
    return missing && refused && { missing, refused };
  }, "the 404 and the refused fetch");
  assert.equal(failed.missing.status, 404);
  assert.equal(failed.missing.method, "GET");
  assert.match(failed.refused.error, /ERR_CONNECTION_REFUSED/);
  // Both reached the browser-errors stream too (a keep push each).
  const history = await waitFor(async () => {
    const r = await h.gateway.tap(["streams", "history", "--session", h.session.id, "--stream", "browser-errors@browser", "--json"]);
    const events = r.code === 0 ? JSON.parse(r.stdout) : [];
    return JSON.stringify(events).includes("boom from the app") && JSON.stringify(events).includes("missing.json") && events;
  }, "the errors on the browser-errors stream");
  assert.ok(history.length >= 2);
  // The stream's default filter drops favicon.ico failures (stored with outcome drop: the
  // agent is never shown them), pushed before missing.json's; the tool still lists it.
  const all = await read("browser_failed_requests", { since });
  assert.ok(all.requests.some((q) => q.url.endsWith("/favicon.ico") && q.status === 404), JSON.stringify(all.requests));
  const outcomes = Object.fromEntries(history.map((e) => [new URL(e.metadata.url).pathname.replace(/^\/$/, e.metadata.kind), e.outcome]));
  assert.equal(outcomes["/favicon.ico"], "drop", JSON.stringify(history));
  assert.equal(outcomes["/missing.json"], "keep");
  // `since` after them: none of them.
  const later = Date.now() + 1;
  assert.deepEqual((await read("browser_console", { since: later, levels: ["error"] })).entries, []);
  assert.deepEqual((await read("browser_failed_requests", { since: later })).requests, []);
});

test("a screenshot from tap call is a PNG of the page: its size, and not one flat colour", async () => {
  await app.bringToFront();
  const r = await read("browser_screenshot");
  const image = r.content.find((c) => c.type === "image");
  assert.equal(image.mimeType, "image/png");
  checkScreenshot(Buffer.from(image.data, "base64"));
});

test("the MCP client: the tools listed once with target, the outline, the picked element, the console and a screenshot as an image content block", async () => {
  const client = await h.mcp();
  const { tools } = await client.listTools();
  const outlineTool = tools.find((t) => t.name === "browser_outline");
  assert.ok(outlineTool, tools.map((t) => t.name).join(", "));
  assert.ok(outlineTool.inputSchema.properties.target, "the gateway's target parameter");
  assert.equal(tools.filter((t) => t.name === "browser_outline").length, 1);
  assert.equal(tools.find((t) => t.name === "browser_click")?.annotations?.destructiveHint, true);

  const text = async (name, args) => {
    const res = await client.callTool({ name, arguments: { target, ...args } });
    assert.ok(!res.isError, `${name}: ${JSON.stringify(res.content)}`);
    return JSON.parse(res.content.find((c) => c.type === "text").text);
  };
  const outline = await text("browser_outline", {});
  assert.equal(outline.title, "Tap test app");
  const picked = await text("browser_picked_element", {});
  assert.equal(picked.react.component, "TodoList");
  assert.equal(picked.react.props.title, "Groceries");
  const logged = await text("browser_console", { levels: ["error"] });
  assert.ok(logged.entries.some((e) => e.text.includes("boom from the app")));

  await app.bringToFront();
  const shot = await client.callTool({ name: "browser_screenshot", arguments: { target } });
  assert.ok(!shot.isError, JSON.stringify(shot.content).slice(0, 500));
  const image = shot.content.find((c) => c.type === "image");
  assert.ok(image, `an image content block: ${shot.content.map((c) => c.type)}`);
  assert.equal(image.mimeType, "image/png");
  checkScreenshot(Buffer.from(image.data, "base64"));
});

test("a tab that is not in front: the screenshot is refused NOT_VISIBLE, not another tab's picture", async () => {
  const other = await h.openTab(h.appUrl("/notes.html", { tab: "front" }));
  await other.bringToFront();
  const r = await h.call("browser_screenshot", { target });
  assert.equal(r.json?.errorCode, "NOT_VISIBLE", r.stdout);
  await other.close();
  await app.bringToFront();
});

test("unsharing removes the tab's tools at once; sharing again brings them back", async () => {
  await popup.bringToFront();
  await tabRow(popup, tabId).locator("button.share", { hasText: "Stop sharing" }).click();
  await waitFor(async () => !(await h.toolNames()).includes("browser_outline"), "the browser tools to leave the session");
  assert.equal(await h.badge(popup, tabId), "");
  const gone = await h.call("list_browser_instances");
  assert.notEqual(gone.code, 0, gone.stdout);
  const client = await h.mcp();
  const names = (await client.listTools()).tools.map((t) => t.name);
  assert.ok(!names.some((n) => n.startsWith("browser_") || n === "list_browser_instances"), `an MCP client's tools: ${names}`);
  await clickShare(popup, tabId);
  await waitForShared(h, popup, tabId);
  assert.equal((await read("browser_outline", { maxNodes: 1 })).title, "Tap test app");
});

/** The PNG of the app's tab: its header and size (the viewport), and not one flat colour. */
function checkScreenshot(png) {
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], "the PNG signature");
  const img = PNG.sync.read(png);
  assert.equal(img.width, 1000, "the viewport's width");
  assert.equal(img.height, 700, "the viewport's height");
  const colours = new Set();
  for (let i = 0; i < img.data.length; i += 4 * 97) colours.add((img.data[i] << 16) | (img.data[i + 1] << 8) | img.data[i + 2]);
  assert.ok(colours.size > 20, `colours sampled: ${colours.size}`);
  // The app's background (#f4f1ea) dominates, and nothing large and flat is drawn over it.
  const block = largestForeignBlock(img);
  assert.ok(!block || block.share < 0.05, JSON.stringify(block));
}

// A real MCP client (the TypeScript SDK, tests/mcp/node_client.mjs, through `tap mcp`) calls
// a provider's tool annotated destructiveHint: true, which the gateway asks the user about by
// default. The tray popup opens by itself with the call (tool, provider, session and client,
// the arguments with the secret masked, the annotations), the tray menu has its line, a click
// on "For this session" lets the call finish, and the next call of that tool in the same
// session goes through with no popup (the session grant decides it). Saves
// docs/screenshots/desktop-approval.png through WebDriver.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";
import { gatewayJson, openSession, providerToken, tapBin, tokenHandshake } from "../js-support/gateway.mjs";
import { remove, run, start, stopChild } from "../js-support/process.mjs";
import { waitFor } from "../js-support/wait.mjs";
import { SCREENSHOTS, closeNotifications, freshHome, mapState, monitorNotifications, saveWebviewScreenshot, screenshotX, startApp, startTrayer, tap, trayIconWindow, trayMenu, webdriverSession } from "./support.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const POPUP = "Tap — tool calls waiting";
const SECRET = "ghp_0123456789abcdefghijABCDEFGHIJ";

/** A provider bound to `session` offering `deploy` (destructiveHint: true); answers every call. */
async function deployProvider(address, home, session) {
  const ws = new WebSocket(`${address}/`);
  const inbox = [];
  ws.on("message", (m) => {
    const msg = JSON.parse(String(m));
    inbox.push(msg);
    if (msg.type === "tool.call") ws.send(JSON.stringify({ type: "tool.result", id: msg.id, data: { deployed: msg.args.service } }));
  });
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  const tool = {
    name: "deploy",
    description: "Deploys a service to production",
    parameters: {
      type: "object",
      properties: { service: { type: "string" }, token: { type: "string" }, notes: { type: "string" } },
      required: ["service"],
    },
    annotations: { destructiveHint: true, openWorldHint: true },
  };
  const rollback = { name: "rollback", description: "Rolls a service back", parameters: { type: "object", properties: { service: { type: "string" } } }, annotations: { destructiveHint: true } };
  await tokenHandshake(ws, inbox, await providerToken(home), { name: "ops", session, tools: [tool, rollback] });
  return { calls: () => inbox.filter((m) => m.type === "tool.call"), close: () => ws.close() };
}

/** The SDK client over `tap mcp --session ID` (stdio), driven line by line. */
async function mcpClient(env, session) {
  const script = path.resolve(here, "../mcp/node_client.mjs");
  const { child, output } = start(process.execPath, [script, "stdio", session], { env: { ...env, TAP_BIN: tapBin() }, stdio: ["pipe", "pipe", "pipe"] }, "mcp client");
  const lines = () => output.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l));
  await waitFor(() => lines().find((l) => l.op === "ready"), "the MCP client to connect");
  return {
    send: (cmd) => child.stdin.write(JSON.stringify(cmd) + "\n"),
    lines,
    stop: () => stopChild(child, output),
  };
}

/** Switches WebDriver to the popup's webview. */
function toPopup(browser) {
  return waitFor(async () => {
    for (const handle of await browser.getWindowHandles()) {
      await browser.switchToWindow(handle);
      if ((await browser.getUrl()).includes("view=popup")) return handle;
    }
    return null;
  }, "the popup's webview");
}

describe("tool-call approvals from the tray", () => {
  let trayer, h, driver, session, provider, client;

  before(async () => {
    trayer = await startTrayer();
    h = await freshHome("approvals");
    driver = await webdriverSession(h.env, []);
    const { address } = await gatewayJson(h.home);
    await trayIconWindow();
    session = await openSession(h.env, "PR 42");
    provider = await deployProvider(address, h.home, session.id);
    client = await mcpClient(h.env, session.id);
  });

  after(async () => {
    client?.send({ op: "exit" });
    await client?.stop();
    provider?.close();
    await session?.stop();
    await driver?.stop();
    await trayer?.stop();
    if (h) await remove(h.dir);
  });

  test("the popup asks, 'For this session' lets the call through, and the next call is not asked", async () => {
    client.send({ op: "tools" });
    const names = (await waitFor(() => client.lines().find((l) => l.op === "tools"), "tools/list")).names;
    const deploy = names.find((n) => n === "deploy" || n.endsWith("deploy"));
    assert.ok(deploy, `deploy in ${JSON.stringify(names)}`);
    const notes = "Roll out the new billing worker. ".repeat(8);

    assert.notEqual(await mapState(POPUP), "IsViewable");
    client.send({ op: "call", id: "1", tool: deploy, args: { service: "billing", token: SECRET, notes }, progress: true });

    // The call waits (the gateway says so in its progress) and the popup opens by itself.
    const [waiting] = await waitFor(async () => {
      const r = await tap(h.env, ["approvals", "list", "--json"]);
      const list = JSON.parse(r.stdout).waiting;
      return list.length ? list : null;
    }, "the call to wait for approval");
    assert.equal(waiting.tool, "deploy");
    await waitFor(async () => (await mapState(POPUP)) === "IsViewable", "the popup window");
    const browser = driver.browser;
    await toPopup(browser);
    const tool = await browser.$('[data-testid="approval-tool"]');
    await tool.waitForExist({ timeout: 15000 });
    assert.equal(await tool.getText(), "deploy");
    assert.equal(await (await browser.$('[data-testid="approval-provider"]')).getText(), "ops");
    const item = await browser.$(`li[data-approval-id="${waiting.id}"]`);
    const text = await item.getText();
    assert.match(text, /PR 42/, `the session label: ${text} / ${JSON.stringify(waiting)}`);
    assert.match(text, /destructive/, "the annotations");
    const args = await (await browser.$('[data-testid="approval-args"]')).getText();
    assert.match(args, /"service": "billing"/);
    assert.match(args, /"token": "••••• masked \(34 chars\)"/);
    assert.ok(!args.includes(SECRET), "the secret is masked");
    assert.match(args, /more chars\)"/, "the long notes are folded");
    assert.equal(provider.calls().length, 0, "nothing reached the provider yet");

    // Closed (the page's own close, as the window manager's would), the tray menu's
    // "1 tool call waiting…" line opens it again (an X capture of the open menu is saved as
    // desktop-tray-menu-approval.png). The window is destroyed, so the call's answer may never come.
    await browser.execute(() => void window.__TAURI_INTERNALS__.invoke("hide_window")).catch(() => {});
    await waitFor(async () => (await mapState(POPUP)) === null, "the popup to close");
    await closeNotifications();
    const menuShot = path.join(SCREENSHOTS, "desktop-tray-menu-approval.png");
    await trayMenu(2, (menu) => screenshotX(menuShot, menu));
    await waitFor(async () => (await mapState(POPUP)) === "IsViewable", "the popup again, from the tray menu");
    await toPopup(browser);

    // WebKit's own picture of the popup, once the page has its final size.
    await waitFor(async () => {
      const wanted = Number(await (await browser.$("main.popup")).getAttribute("data-wanted-height"));
      const inner = await browser.execute(() => window.innerHeight);
      return wanted > 0 && Math.abs(inner - Math.min(Math.max(wanted, 200), 600)) <= 1;
    }, "the popup laid out at its fitted height");
    await saveWebviewScreenshot(browser, path.join(SCREENSHOTS, "desktop-approval.png"));

    await (await browser.$('li[data-approval-id] button[data-answer="session"]')).click();
    const first = await waitFor(() => client.lines().find((l) => l.op === "result" && l.id === "1"), "the first call's result");
    assert.equal(first.isError, false, JSON.stringify(first));
    assert.match(JSON.stringify(first.content), /billing/);
    assert.equal(provider.calls().length, 1);
    await waitFor(async () => (await mapState(POPUP)) !== "IsViewable", "the popup to close once nothing waits");

    const grants = JSON.parse((await tap(h.env, ["approvals", "grants", "--json"])).stdout).grants;
    assert.equal(grants.length, 1, JSON.stringify(grants));
    assert.equal(grants[0].scope, "session");
    assert.equal(grants[0].session, session.id);

    // The next call in the same session: through at once, no call waits, no popup.
    client.send({ op: "call", id: "2", tool: deploy, args: { service: "search" } });
    const second = await waitFor(() => client.lines().find((l) => l.op === "result" && l.id === "2"), "the second call's result");
    assert.equal(second.isError, false, JSON.stringify(second));
    assert.match(JSON.stringify(second.content), /search/);
    assert.equal(provider.calls().length, 2);
    assert.notEqual(await mapState(POPUP), "IsViewable", "no popup for the second call");
    assert.equal(JSON.parse((await tap(h.env, ["approvals", "list", "--json"])).stdout).waiting.length, 0);
    assert.ok(!client.lines().some((l) => l.op === "progress" && l.id === "2"), "the second call never waited");
  });

  test("the keyboard answers the selected call: D denies it, and nothing reaches the provider", async () => {
    const names = client.lines().find((l) => l.op === "tools").names;
    const rollback = names.find((n) => n === "rollback" || n.endsWith("rollback"));
    const before = provider.calls().length;
    // Another tool of the same session: the session grant was for deploy only.
    client.send({ op: "call", id: "3", tool: rollback, args: { service: "billing" } });
    await waitFor(async () => (await mapState(POPUP)) === "IsViewable", "the popup for the other tool");
    const browser = driver.browser;
    await toPopup(browser);
    const tool = await browser.$('[data-testid="approval-tool"]');
    await tool.waitForExist({ timeout: 15000 });
    assert.equal(await tool.getText(), "rollback");
    // It opened without taking the keyboard; a click on the call gives it the keys.
    await tool.click();
    // The answer closes the popup (its window is destroyed), which can end the key action
    // before WebDriver hears back: the call's answer is what tells.
    await browser.keys(["d"]).catch(() => {});
    const third = await waitFor(() => client.lines().find((l) => (l.op === "result" || l.op === "error") && l.id === "3"), "the third call's answer");
    assert.ok(third.op === "error" || third.isError, `denied: ${JSON.stringify(third)}`);
    assert.match(JSON.stringify(third), /approv|denied/i);
    assert.equal(provider.calls().length, before, "a denied call never reaches the provider");
    await waitFor(async () => (await mapState(POPUP)) !== "IsViewable", "the popup to close");
  });
});

// The notification: TAP_DESKTOP_NOTIFY_AFTER_MS=0 makes a waiting call notify at once (as when
// the popup cannot be shown). Its Notify call carries the answers as actions; the user's pick
// comes back from the notification server as an ActionInvoked signal, which this test sends
// itself on the session bus (dunst sends it from its context menu, which needs dmenu), and the
// app answers the call through its gateway.
describe("tool-call approvals from a notification", () => {
  let monitor, h, app, session, provider, client;

  before(async () => {
    monitor = await monitorNotifications();
    h = await freshHome("approvals-notify", { TAP_DESKTOP_NOTIFY_AFTER_MS: "0" });
    app = await startApp(h.env, ["--hidden"]);
    session = await openSession(h.env, "PR 44");
    provider = await deployProvider(app.info.address, h.home, session.id);
    client = await mcpClient(h.env, session.id);
  });

  after(async () => {
    client?.send({ op: "exit" });
    await client?.stop();
    provider?.close();
    await session?.stop();
    await app?.stop();
    await monitor?.stop();
    await closeNotifications();
    if (h) await remove(h.dir);
  });

  test("the notification offers the answers, and its 'For this session' approves the call", async () => {
    client.send({ op: "tools" });
    const names = (await waitFor(() => client.lines().find((l) => l.op === "tools"), "tools/list")).names;
    const deploy = names.find((n) => n === "deploy" || n.endsWith("deploy"));
    client.send({ op: "call", id: "n1", tool: deploy, args: { service: "billing", token: SECRET } });
    const id = Number(await waitFor(() => /notification shown with actions id=(\d+)/.exec(app.output.stderr)?.[1], "the notification with actions"));
    const seen = monitor.text();
    assert.match(seen, /string "Tap: PR 44 wants to run deploy"/);
    for (const key of ["approve-once", "approve-session", "approve-hour", "approve-always", "deny"]) assert.match(seen, new RegExp(`string "${key}"`));
    assert.match(seen, /string "For this session"/);
    assert.ok(!seen.includes(SECRET), "no argument in the notification");
    assert.equal(provider.calls().length, 0);

    const sent = await run("dbus-send", ["--session", "--type=signal", "/org/freedesktop/Notifications", "org.freedesktop.Notifications.ActionInvoked", `uint32:${id}`, "string:approve-session"]);
    assert.equal(sent.code, 0, sent.stderr);
    const result = await waitFor(() => client.lines().find((l) => l.op === "result" && l.id === "n1"), "the call's result");
    assert.equal(result.isError, false, JSON.stringify(result));
    const grants = JSON.parse((await tap(h.env, ["approvals", "grants", "--json"])).stdout).grants;
    assert.deepEqual(grants.map((g) => [g.scope, g.session, g.tool]), [["session", session.id, "deploy"]]);
    assert.match(app.output.stderr, /tool call answered from its notification/);
  });
});

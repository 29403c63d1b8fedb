// The panel's own helpers for its browser end-to-end tests: a gateway serving the built
// panel, screenshots for the docs, another origin's page, and a provider over Node's
// WebSocket. The rest (waiting, the `tap` gateway and its commands, Chromium and the panel's
// login and navigation) is the JS test kit in tests/js-support/, which the tests import
// directly.

import { readFile, mkdir } from "node:fs/promises";
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { launchChromium, openPanel } from "../../../tests/js-support/browser.mjs";
import { waitFor } from "../../../tests/js-support/wait.mjs";
import { providerToken, startGateway as startTapGateway, tokenHandshake, toolDef } from "../../../tests/js-support/gateway.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
export const UI_DIST = path.resolve(here, "../../dist");
export const SCREENSHOTS = path.resolve(here, "../../../docs/screenshots");
export const FIXTURES = path.join(here, "fixtures");

/**
 * Starts `tap gateway --listen 127.0.0.1:0` (tests/js-support/gateway.mjs) serving the
 * built panel, with no display. `ownHome` gives it (and so the emitters' `bash -lc` login
 * shells) an empty HOME. `dir` (tests/js-support/gateway.mjs) is a directory made beforehand,
 * e.g. with a `tap/mcp.json` in it; the caller removes it. `env`: more variables for the
 * gateway and its `tap` commands (e.g. `XDG_CONFIG_HOME`).
 */
export async function startGateway({ ownHome = false, dir, env: extra = {} } = {}) {
  if (!existsSync(path.join(UI_DIST, "index.html"))) {
    throw new Error(`${UI_DIST}/index.html is missing: run \`npm run build\` in ui/ first`);
  }
  const env = { TAP_UI_DIR: UI_DIST, TAP_LOG: process.env.TAP_LOG ?? "info", DISPLAY: undefined, WAYLAND_DISPLAY: undefined, ...extra };
  return startTapGateway({ prefix: "tap-e2e-", env, ownHome, dir });
}

/** Debian's Chromium, headless (tests/js-support/browser.mjs), with this suite's playwright-core. */
export const launchBrowser = () => launchChromium(chromium);

/**
 * A new context of `browser` (`contextOptions`: 1280x800 unless they give a viewport) with
 * the panel logged in there (tests/js-support/browser.mjs `openPanel`): { context, panel }.
 */
export async function panelInNewContext(browser, gateway, contextOptions = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...contextOptions });
  return { context, panel: await openPanel(context, gateway) };
}

/** A fresh one-time login link that opens the tray popup's view (`?view=popup`) instead of the panel. */
export async function popupLoginUrl(gateway) {
  const login = new URL(await gateway.loginUrl());
  login.search = "?view=popup";
  return login.toString();
}

/** Saves a 1280x800 screenshot of `page` to docs/screenshots/NAME.png. */
export async function screenshot(page, name) {
  await mkdir(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`) });
}

/**
 * Serves `html` at `/` from 127.0.0.1 on another port than the gateway: another origin,
 * as any web page the user visits would be.
 */
export async function serveOtherOrigin(html) {
  const server = createServer((req, res) => {
    if (req.url === "/" || req.url?.startsWith("/?")) {
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" });
      res.end(html);
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;
  return {
    origin,
    url: `${origin}/`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/**
 * The browser provider page: the spec's example (fixtures/provider-page.html) with only its
 * GATEWAY line pointed at this gateway.
 */
export async function providerPageHtml(hostPort) {
  const template = await readFile(path.join(FIXTURES, "provider-page.html"), "utf8");
  const line = 'const GATEWAY = "localhost:9400";';
  if (!template.includes(line)) throw new Error("the fixture no longer has the spec's GATEWAY line");
  return template.replace(line, `const GATEWAY = "${hostPort}";`);
}

/**
 * A minimal project-trust provider over Node's WebSocket (token auth): binds to `session`
 * with `tools` and can push stream events. Used to give the panel real providers and
 * streams to show.
 */
export async function nodeProvider(gateway, { name, session, tools = [] }) {
  const token = await providerToken(gateway.env.TAP_HOME);
  const ws = new WebSocket(`ws://${gateway.hostPort}/`);
  const inbox = [];
  let closed = false;
  ws.addEventListener("message", (e) => {
    const msg = JSON.parse(String(e.data));
    inbox.push(msg);
    if (msg.type === "tool.call") {
      ws.send(JSON.stringify({ type: "tool.result", id: msg.id, data: { tool: msg.tool, args: msg.args ?? {} } }));
    }
  });
  ws.addEventListener("close", () => (closed = true));
  await new Promise((resolve, reject) => {
    ws.addEventListener("open", resolve, { once: true });
    ws.addEventListener("error", () => reject(new Error(`${name}: cannot connect`)), { once: true });
  });
  await tokenHandshake(ws, inbox, token, {
    name,
    instance: `${name}-1`,
    session,
    tools: tools.map((t) => toolDef(t, `${t} (e2e)`)),
  });
  return {
    inbox,
    get closed() {
      return closed;
    },
    push(stream, event, level = "keep", metadata) {
      ws.send(JSON.stringify({ type: "push", stream, event, level, ...(metadata ? { metadata } : {}) }));
    },
    close() {
      ws.close();
    },
  };
}

/**
 * The control requests the panel sends and the events it receives, read off its WebSocket
 * (so a test can tell a refresh on an event from a poll).
 */
export function recordFrames(context) {
  const frames = { sent: [], events: [], last: Date.now() };
  const parse = (f) => {
    try {
      return JSON.parse(String(f.payload));
    } catch {
      return null;
    }
  };
  context.on("page", (page) =>
    page.on("websocket", (ws) => {
      ws.on("framesent", (f) => {
        const v = parse(f);
        frames.last = Date.now();
        if (v?.type === "request") frames.sent.push(v.method);
      });
      ws.on("framereceived", (f) => {
        const v = parse(f);
        frames.last = Date.now();
        if (v?.type === "event") frames.events.push(v.event.kind);
      });
    }),
  );
  return frames;
}

/**
 * Waits until the panel has been quiet a moment, then watches it for longer than the 2 s
 * the pages used to poll at: what it asked for, and what it was told, meanwhile.
 */
export async function watchIdle(frames, ms = 2500) {
  await waitFor(() => Date.now() - frames.last > 600, "the panel quiet");
  const sent = frames.sent.length;
  const events = frames.events.length;
  await new Promise((resolve) => setTimeout(resolve, ms)); // the window observed, not a readiness wait
  return { sent: frames.sent.slice(sent), events: frames.events.slice(events) };
}

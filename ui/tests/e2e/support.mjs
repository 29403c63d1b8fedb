// Helpers for the panel's browser end-to-end tests: the real `tap` binary, a real
// Chromium driven by playwright-core, real sockets on 127.0.0.1 port 0. What the desktop
// suite shares (waitFor, child processes, `tap` commands, the provider handshake) is in
// tests/js-support/support.mjs.
//
// Nothing here sleeps to wait for readiness: `waitFor` polls a condition until a deadline.

import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, mkdir } from "node:fs/promises";
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import {
  openSession,
  pairings,
  providerToken,
  run,
  stopChild,
  tapBin,
  tokenHandshake,
  toolDef,
  track,
  waitFor,
} from "../../../tests/js-support/support.mjs";

export { tapBin, waitFor };

const here = path.dirname(fileURLToPath(import.meta.url));
export const UI_DIST = path.resolve(here, "../../dist");
export const SCREENSHOTS = path.resolve(here, "../../../docs/screenshots");
export const FIXTURES = path.join(here, "fixtures");

/** The gateway is stopped like Ctrl-C stops it, and given this long to stop cleanly. */
const STOP_GRACE_MS = 15000;

/** Spawns `tap gateway --listen LISTEN` and waits for a gateway.json newer than `previous`. */
async function spawnGateway(bin, env, listen, previous) {
  const child = spawn(bin, ["gateway", "--listen", listen], { env, stdio: ["ignore", "pipe", "pipe"] });
  const output = track(child, "gateway");
  const info = await waitFor(async () => {
    if (child.exitCode !== null) throw new Error(`tap gateway exited with ${child.exitCode}: ${output.stderr}`);
    try {
      const info = JSON.parse(await readFile(path.join(env.TAP_HOME, "gateway.json"), "utf8"));
      return info.pid === child.pid && info.pid !== previous?.pid ? info : null;
    } catch {
      return null;
    }
  }, "gateway.json");
  return { child, output, info };
}

/**
 * Starts `tap gateway --listen 127.0.0.1:0` with its own TAP_HOME and COPILOT_HOME and the
 * built panel, and waits for `$TAP_HOME/gateway.json` to name its address. `ownHome` gives
 * it (and so the emitters' `bash -lc` login shells) an empty HOME, so that the user's shell
 * profile (a slow `pyenv init`, a lock it waits on) cannot delay a test's command.
 */
export async function startGateway({ ownHome = false } = {}) {
  const bin = tapBin();
  if (!existsSync(path.join(UI_DIST, "index.html"))) {
    throw new Error(`${UI_DIST}/index.html is missing: run \`npm run build\` in ui/ first`);
  }
  const home = await mkdtemp(path.join(tmpdir(), "tap-e2e-"));
  const env = {
    ...process.env,
    TAP_HOME: path.join(home, "tap"),
    COPILOT_HOME: path.join(home, "copilot"),
    TAP_UI_DIR: UI_DIST,
    TAP_LOG: process.env.TAP_LOG ?? "info",
  };
  delete env.DISPLAY;
  delete env.WAYLAND_DISPLAY;
  if (ownHome) {
    env.HOME = path.join(home, "home");
    await mkdir(env.HOME);
  }
  let proc = await spawnGateway(bin, env, "127.0.0.1:0");
  const hostPort = new URL(proc.info.address).host; // "127.0.0.1:PORT"
  const gateway = {
    home,
    env,
    hostPort,
    httpBase: `http://${hostPort}`,
    get info() {
      return proc.info;
    },
    get output() {
      return proc.output;
    },
    children: [],
    /** Runs `tap ARGS…` against this gateway; resolves with { code, stdout, stderr }. */
    tap(args, timeout = 30000) {
      return run(bin, args, { env, timeout });
    },
    /** A fresh one-time login link (`tap ui --no-open`). */
    async loginUrl() {
      const r = await gateway.tap(["ui", "--no-open"]);
      if (r.code !== 0) throw new Error(`tap ui failed (${r.code}): ${r.stdout}${r.stderr}`);
      return r.stdout.trim();
    },
    /** `tap session open --label LABEL` as a child; resolves once it printed its session id. */
    async openSession(label, extra = []) {
      const session = await openSession(env, label, extra);
      gateway.children.push(session);
      return session;
    },
    /** `tap pairing list --json`. */
    pairings() {
      return pairings(env);
    },
    /** Stops the sessions opened here, then the gateway (gracefully: SIGINT). */
    async stopProcesses() {
      for (const c of gateway.children) await c.stop();
      gateway.children = [];
      await stopChild(proc.child, proc.output, "SIGINT", STOP_GRACE_MS);
    },
    /** Stops everything, then starts the gateway again on the same port with the same TAP_HOME. */
    async restart() {
      const previous = proc.info;
      await gateway.stopProcesses();
      proc = await spawnGateway(bin, env, hostPort, previous);
    },
    async stop() {
      await gateway.stopProcesses();
      await rm(home, { recursive: true, force: true });
    },
  };
  return gateway;
}

/** Debian's Chromium, headless; never a downloaded browser. */
export function launchBrowser() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
}

/** Opens a login link in a new 1280x800 page and waits until the panel is live. */
export async function openPanel(context, gateway) {
  const page = await context.newPage();
  // Anything the panel logs as an error (an exception, a CSP violation, a failed load).
  page.errors = [];
  page.on("pageerror", (e) => page.errors.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") page.errors.push(`console: ${m.text()}`);
  });
  await page.goto(await gateway.loginUrl());
  await page.getByRole("status").filter({ hasText: "Live" }).waitFor();
  return page;
}

/** Saves a 1280x800 screenshot of `page` to docs/screenshots/NAME.png. */
export async function screenshot(page, name) {
  await mkdir(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`) });
}

/** Navigates the panel with its own links (no reload), then waits for the page heading. */
export async function goTo(panel, title) {
  await panel.getByRole("navigation", { name: "Pages" }).getByRole("link", { name: title }).click();
  await panel.getByRole("heading", { level: 1, name: title }).waitFor();
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

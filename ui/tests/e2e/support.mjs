// Helpers for the panel's browser end-to-end tests: the real `tap` binary, a real
// Chromium driven by playwright-core, real sockets on 127.0.0.1 port 0.
//
// Nothing here sleeps to wait for readiness: `waitFor` polls a condition until a deadline.

import { spawn, execFile } from "node:child_process";
import { mkdtemp, readFile, rm, mkdir } from "node:fs/promises";
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const here = path.dirname(fileURLToPath(import.meta.url));
export const UI_DIST = path.resolve(here, "../../dist");
export const SCREENSHOTS = path.resolve(here, "../../../docs/screenshots");
export const FIXTURES = path.join(here, "fixtures");

/** The gateway binary under test: required, so a stale default can never be tested by mistake. */
export function tapBin() {
  const bin = process.env.TAP_BIN;
  if (!bin) {
    throw new Error(
      "Set TAP_BIN to the tap binary to test, e.g. `cargo build -p tap-cli && TAP_BIN=$PWD/target/debug/tap npm run test:e2e`",
    );
  }
  if (!existsSync(bin)) throw new Error(`TAP_BIN=${bin} does not exist`);
  return bin;
}

/** Polls `check` (sync or async) until it returns a truthy value; throws `what` after `timeout` ms. */
export async function waitFor(check, what, timeout = 15000, every = 50) {
  const deadline = Date.now() + timeout;
  let lastError;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeout} ms waiting for ${what}${lastError ? ` (last error: ${lastError.message})` : ""}`);
    }
    await new Promise((r) => setTimeout(r, every));
  }
}

/** Collects a child's output (so its pipe never fills) and resolves `exited` with its exit code. */
function track(child, name) {
  const out = { stdout: "", stderr: "", name };
  child.stdout?.setEncoding("utf8").on("data", (d) => (out.stdout += d));
  child.stderr?.setEncoding("utf8").on("data", (d) => (out.stderr += d));
  out.exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve(code ?? signal)));
  return out;
}

/** Stops a child with SIGINT (graceful), then SIGKILL after `grace` ms. */
async function stopChild(child, output, grace = 15000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGINT");
  const timer = setTimeout(() => child.kill("SIGKILL"), grace);
  await output.exited;
  clearTimeout(timer);
}

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
 * built panel, and waits for `$TAP_HOME/gateway.json` to name its address.
 */
export async function startGateway() {
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
      return new Promise((resolve) => {
        execFile(bin, args, { env, timeout }, (error, stdout, stderr) => {
          resolve({ code: error ? (error.code ?? 1) : 0, stdout, stderr });
        });
      });
    },
    /** A fresh one-time login link (`tap ui --no-open`). */
    async loginUrl() {
      const r = await gateway.tap(["ui", "--no-open"]);
      if (r.code !== 0) throw new Error(`tap ui failed (${r.code}): ${r.stdout}${r.stderr}`);
      return r.stdout.trim();
    },
    /** `tap session open --label LABEL` as a child; resolves once it printed its session id. */
    async openSession(label, extra = []) {
      const child = spawn(bin, ["session", "open", "--label", label, ...extra], { env, stdio: ["ignore", "pipe", "pipe"] });
      const out = track(child, `session ${label}`);
      const id = await waitFor(() => {
        if (child.exitCode !== null) throw new Error(`tap session open exited: ${out.stdout}${out.stderr}`);
        const first = out.stdout.split("\n")[0];
        return out.stdout.includes("\n") ? JSON.parse(first).sessionId : null;
      }, `session ${label} to register`);
      const session = { id, proc: child, output: out, stop: () => stopChild(child, out) };
      gateway.children.push(session);
      return session;
    },
    /** `tap pairing list --json`. */
    async pairings() {
      const r = await gateway.tap(["pairing", "list", "--json"]);
      if (r.code !== 0) throw new Error(`tap pairing list failed: ${r.stdout}${r.stderr}`);
      return JSON.parse(r.stdout);
    },
    /** Stops the sessions opened here, then the gateway (gracefully: SIGINT). */
    async stopProcesses() {
      for (const c of gateway.children) await c.stop();
      gateway.children = [];
      await stopChild(proc.child, proc.output);
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
  const token = (await readFile(path.join(gateway.env.TAP_HOME, "provider-token"), "utf8")).trim();
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
  const expect = (type) => waitFor(() => inbox.find((m) => m.type === type || m.type === "error"), `${name}: ${type}`);
  ws.send(JSON.stringify({ type: "auth", token }));
  const sessions = await expect("sessions");
  if (sessions.type === "error") throw new Error(`${name}: ${JSON.stringify(sessions)}`);
  ws.send(
    JSON.stringify({
      type: "hello",
      name,
      protocolVersion: 2,
      instance: `${name}-1`,
      session,
      tools: tools.map((t) => ({ name: t, description: `${t} (e2e)`, parameters: { type: "object", properties: {} } })),
    }),
  );
  const ack = await expect("hello.ack");
  if (ack.type === "error") throw new Error(`${name}: ${JSON.stringify(ack)}`);
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

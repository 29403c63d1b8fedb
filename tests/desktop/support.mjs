// Helpers for the desktop app's end-to-end tests. They run inside `tests/desktop/run.sh`:
// an Xvfb display, a private D-Bus session (with gnome-keyring unlocked for the session),
// and a throwaway HOME. The app is the real binary (TAP_DESKTOP_BIN), the CLI the real `tap`
// (TAP_BIN), the tray host `trayer`, notifications go to dunst (D-Bus activated) and are
// observed with `dbus-monitor`, WebDriver is tauri-driver + WebKitWebDriver.
//
// What the other JS suites share (waitFor, child processes, temp dirs, `tap` commands,
// gateway.json, the provider handshake) is the JS test kit in tests/js-support/; the tests
// import it directly, and this file keeps what is the desktop suite's own.
//
// Nothing here sleeps to wait for readiness: `waitFor` polls a condition until a deadline.

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, readFile, readdir, stat, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { PNG } from "pngjs";
import WebSocket from "ws";
import { MAX_FOREIGN_BLOCK, largestForeignBlock } from "../js-support/uniform-blocks.mjs";
import { gatewayJson, providerToken, tapBin, tokenHandshake, toolDef } from "../js-support/gateway.mjs";
import { requiredBin, run, start, stopChild, tempDir } from "../js-support/process.mjs";
import { waitFor } from "../js-support/wait.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
export const SCREENSHOTS = path.resolve(here, "../../docs/screenshots");
/** Where the tests keep their TAP_HOMEs and logs (run.sh makes it and removes it). */
export const SCRATCH = process.env.TAP_DESKTOP_SCRATCH ?? "/tmp";

/**
 * The most a quit may take in these tests (SIGTERM or the tray's Quit until the process
 * exited). The app aims under ~200 ms (`QUIT_WAIT` in crates/tap-desktop-core/src/engine.rs
 * bounds the wait on the gateway); this leaves room for a loaded CI machine while still
 * catching a quit that waits seconds on a peer.
 */
export const QUIT_BOUND_MS = 1000;

export const appBin = () => requiredBin("TAP_DESKTOP_BIN", "the tap-desktop binary to test");

/** A free TCP port on 127.0.0.1 (for tauri-driver, which needs a fixed one). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** A fresh TAP_HOME (and COPILOT_HOME) under the scratch directory, and the env to run the app and `tap` with. */
export async function freshHome(name, extraEnv = {}) {
  await mkdir(SCRATCH, { recursive: true });
  const dir = tempDir(`${name}-`, SCRATCH);
  const env = {
    ...process.env,
    TAP_HOME: path.join(dir, "tap"),
    COPILOT_HOME: path.join(dir, "copilot"),
    TAP_DESKTOP_LISTEN: "127.0.0.1:0",
    TAP_LOG: process.env.TAP_LOG ?? "info",
    ...extraEnv,
  };
  delete env.TAP_DESKTOP_SHOW;
  return { dir, env, home: env.TAP_HOME };
}

/**
 * Starts the app (`args`) with `env`; resolves once its gateway wrote gateway.json.
 * Returns { child, output, info, stop() }.
 */
export async function startApp(env, args = [], { waitForGateway = true } = {}) {
  const { child, output } = start(appBin(), args, { env }, "tap-desktop");
  const app = {
    child,
    output,
    info: null,
    /** SIGTERM (the app quits like the tray's Quit) and the exit code. */
    stop: () => stopChild(child, output),
  };
  if (waitForGateway) {
    const gone = () => (child.exitCode !== null ? `tap-desktop exited with ${child.exitCode}: ${output.stderr}` : null);
    app.info = await gatewayJson(env.TAP_HOME, child.pid, "the app's gateway.json", gone);
  }
  return app;
}

/** Runs `tap ARGS…` with `env`. */
export function tap(env, args) {
  return run(tapBin(), args, { env });
}

// ---- X11: windows, tray, screenshots ---------------------------------------------------------

/** `xwininfo -root -tree`. */
export async function windowTree() {
  return (await run("xwininfo", ["-root", "-tree"])).stdout;
}

/** The map state of the top-level window titled `name`: "IsViewable", "IsUnMapped", … or null when there is none. */
export async function mapState(name) {
  const r = await run("xwininfo", ["-name", name]);
  if (r.code !== 0) return null;
  return /Map State:\s*(\S+)/.exec(r.stdout)?.[1] ?? null;
}

/** Starts `trayer` (an XEmbed tray host, bottom right) and waits for its panel window. */
export async function startTrayer() {
  const { child, output } = start("trayer", ["--edge", "bottom", "--align", "right", "--widthtype", "request", "--height", "32", "--transparent", "false", "--SetDockType", "true"]);
  await waitFor(async () => / "panel": \("panel" "trayer"\)/.test(await windowTree()), "trayer's panel window");
  return { child, output, stop: () => stopChild(child, output) };
}

/** The X window id of the app's tray icon, once it exists. */
export function trayIconWindow() {
  return waitFor(async () => /^\s*(0x[0-9a-f]+) "tap-desktop": \("tray-icon tray app main"/m.exec(await windowTree())?.[1], "the tray icon window");
}

/** Ids of the app's visible X windows (`xdotool search --onlyvisible`). */
async function visibleAppWindows() {
  const r = await run("xdotool", ["search", "--onlyvisible", "--class", "tap-desktop"]);
  return new Set(r.stdout.split("\n").filter(Boolean));
}

/**
 * Opens the tray menu (a left click on the icon: appindicator's menu opens on it) and,
 * once the menu window is up, presses Down `downs` times and Return. Disabled items are
 * skipped by the keyboard: with no pairing request pending, 1 = Open panel, 2 = Start at
 * login, 3 = Quit. `beforeKeys(menuWindowId)` runs while the menu is open (screenshots).
 */
export async function trayMenu(downs, beforeKeys) {
  const icon = await trayIconWindow();
  const before = await visibleAppWindows();
  const click = await run("xdotool", ["mousemove", "--window", icon, "10", "10", "click", "1"]);
  if (click.code !== 0) throw new Error(`xdotool click failed: ${click.stderr}`);
  const menu = await waitFor(async () => [...(await visibleAppWindows())].find((w) => !before.has(w)), "the tray menu to open", 10000);
  if (beforeKeys) await beforeKeys(`0x${Number(menu).toString(16)}`);
  const keys = [...Array(downs).fill("Down"), "Return"];
  const typed = await run("xdotool", ["key", "--delay", "100", ...keys]);
  if (typed.code !== 0) throw new Error(`xdotool key failed: ${typed.stderr}`);
}

/** Saves a screenshot of the root window (or window `id`) to `file`. */
export async function screenshotX(file, id = "root") {
  await mkdir(path.dirname(file), { recursive: true });
  const r = await run("import", ["-window", id, file]);
  if (r.code !== 0) throw new Error(`import failed: ${r.stderr}`);
  return file;
}

/** Mean brightness and standard deviation (0..1) of an image, with the real ImageMagick. */
export async function brightness(file) {
  const r = await run("/usr/bin/convert", [file, "-colorspace", "Gray", "-format", "%[fx:mean] %[fx:standard_deviation]", "info:"]);
  if (r.code !== 0) throw new Error(`convert failed: ${r.stderr}`);
  const [mean, sd] = r.stdout.trim().split(/\s+/).map(Number);
  // Distinct colours: anti-aliased text gives hundreds; an empty page with another window's
  // corner over it (trayer's black box) gives a handful yet passes the mean/sd test.
  const k = await run("/usr/bin/convert", [file, "-format", "%k", "info:"]);
  if (k.code !== 0) throw new Error(`convert failed: ${k.stderr}`);
  return { mean, sd, colors: Number(k.stdout.trim()) };
}

/**
 * Screenshots window `id` into `file` until the picture shows a rendered page: an
 * unpainted window is black (mean ≈ 0), a page not drawn yet is one flat colour
 * (standard deviation ≈ 0) or a few flat colours. Returns the picture's { mean, sd, colors }.
 */
export async function renderedShot(file, id) {
  return waitFor(async () => {
    await screenshotX(file, id);
    const b = await brightness(file);
    return b.sd > 0.03 && b.mean > 0.2 && b.colors > 64 ? b : null;
  }, `a rendered (not blank) picture of window ${id}`);
}

/**
 * Asks the window titled `name` to close as a window manager's close button does (a
 * WM_DELETE_WINDOW message; Xvfb runs no window manager). The sender is
 * scripts/lib/wm-close.c, compiled on first use. False when there is no such window.
 */
export async function closeWindow(name) {
  const bin = path.join(SCRATCH, "wm-close");
  if (!existsSync(bin)) {
    const src = path.resolve(here, "../../scripts/lib/wm-close.c");
    const cc = await run("cc", ["-O1", "-o", bin, src, "-lX11"]);
    if (cc.code !== 0) throw new Error(`cc wm-close.c failed: ${cc.stderr}`);
  }
  const r = await run(bin, [name]);
  if (r.code > 1) throw new Error(`wm-close failed (${r.code}): ${r.stderr}`);
  return r.code === 0;
}

/**
 * The names (`comm`) of every process under `pid`: WebKit runs each webview's page in a
 * WebKitWebProcess and the network in a WebKitNetworkProcess, started by the app (under
 * bwrap when sandboxed).
 */
export async function descendants(pid) {
  const parents = new Map();
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const status = await readFile(`/proc/${entry}/status`, "utf8").catch(() => null);
    const ppid = status && /^PPid:\s*(\d+)/m.exec(status)?.[1];
    const name = status && /^Name:\s*(.*)$/m.exec(status)?.[1];
    if (ppid) parents.set(Number(entry), { ppid: Number(ppid), name });
  }
  const under = new Set([pid]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [p, { ppid }] of parents) {
      if (!under.has(p) && under.has(ppid)) {
        under.add(p);
        grew = true;
      }
    }
  }
  under.delete(pid);
  return [...under].map((p) => parents.get(p)?.name ?? "?");
}

/** The X window id of the top-level window titled `name`. */
export async function windowId(name) {
  const r = await run("xwininfo", ["-name", name]);
  return /Window id: (0x[0-9a-f]+)/.exec(r.stdout)?.[1] ?? null;
}

// ---- D-Bus: notifications, keyring ---------------------------------------------------------

/** Starts `dbus-monitor` on Notify calls; `text()` is what it saw so far. */
export async function monitorNotifications() {
  const { child, output } = start("dbus-monitor", ["--session", "type='method_call',interface='org.freedesktop.Notifications',member='Notify'"]);
  // It prints its own NameAcquired signal once it is listening.
  await waitFor(() => output.stdout.includes("NameAcquired") || output.stdout.includes("member=NameLost"), "dbus-monitor to listen", 10000);
  return { text: () => output.stdout, stop: () => stopChild(child, output, "SIGTERM", 2000) };
}

/**
 * Closes every notification on screen (dunst, through `dunstctl`; D-Bus starts dunst if it
 * is not running, which then has nothing to close), so an X capture that follows shows the
 * app only. Best effort: 06-screenshots.test.mjs checks the pictures themselves.
 */
export async function closeNotifications() {
  await run("dunstctl", ["close-all"]);
}

/** The keyring entry the app files the control token under (`secret-tool lookup`). */
export async function keyringLookup(account) {
  const r = await run("secret-tool", ["lookup", "service", "tap-gateway", "username", account]);
  return r.code === 0 ? r.stdout.trim() : null;
}

/** File mode bits (e.g. 0o600). */
export async function mode(file) {
  return (await stat(file)).mode & 0o777;
}

// ---- Providers -----------------------------------------------------------------------------

/**
 * A browser-like provider asking to pair (the spec's external flow): connects with an
 * `Origin`, sends `auth {mode:"pair"}` and waits for `auth.pairing`.
 */
export async function pairingProvider(address, { origin, name }) {
  const ws = new WebSocket(`${address}/`, { origin });
  const inbox = [];
  ws.on("message", (m) => inbox.push(JSON.parse(String(m))));
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  ws.send(JSON.stringify({ type: "auth", mode: "pair", name }));
  const prompt = await waitFor(() => inbox.find((m) => m.type === "auth.pairing" || m.type === "error"), "auth.pairing");
  if (prompt.type !== "auth.pairing") throw new Error(`pairing refused: ${JSON.stringify(prompt)}`);
  return {
    inbox,
    prompt,
    closed: new Promise((resolve) => ws.once("close", resolve)),
    confirm: (code) => ws.send(JSON.stringify({ type: "auth.confirm", code })),
    close: () => ws.close(),
  };
}

/** A project-trust provider with the gateway token, bound to `session` with one tool. */
export async function tokenProvider(address, home, name, session) {
  const token = await providerToken(home);
  const ws = new WebSocket(`${address}/`);
  const inbox = [];
  ws.on("message", (m) => inbox.push(JSON.parse(String(m))));
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  const tool = toolDef(`${name.replace(/[^A-Za-z0-9_-]/g, "_")}_tool`, "desktop e2e");
  await tokenHandshake(ws, inbox, token, { name, session, tools: [tool] });
  return { inbox, close: () => ws.close() };
}

// ---- WebDriver (tauri-driver + WebKitWebDriver) --------------------------------------------

/**
 * Starts tauri-driver with `env` (the app it launches inherits it), optionally inside
 * `wrapper` (e.g. another D-Bus session), and opens a WebDriver session on the app with
 * `args`. Returns { browser, stop() }.
 */
export async function webdriverSession(env, args = ["--show"], wrapper = []) {
  const { remote } = await import("webdriverio");
  const port = await freePort();
  const nativePort = await freePort();
  const cmd = [...wrapper, "tauri-driver", "--port", String(port), "--native-port", String(nativePort)];
  // Its own process group: a wrapper (dbus-run-session) does not pass signals on.
  const { child, output } = start(cmd[0], cmd.slice(1), { env, detached: true }, "tauri-driver");
  await waitFor(async () => {
    if (child.exitCode !== null) throw new Error(`tauri-driver exited: ${output.stderr}`);
    const r = await fetch(`http://127.0.0.1:${port}/status`).catch(() => null);
    return r !== null;
  }, "tauri-driver to listen");
  const browser = await remote({
    hostname: "127.0.0.1",
    port,
    logLevel: "error",
    capabilities: {
      browserName: "wry",
      // Required: WDIO 9 otherwise asks for BiDi, which WebKitWebDriver does not offer.
      "wdio:enforceWebDriverClassic": true,
      "tauri:options": { application: appBin(), args },
    },
  });
  return {
    browser,
    driverOutput: output,
    /**
     * Quits the app the way the tray's Quit does (SIGTERM: the gateway stops gracefully,
     * its files and keyring entry go), then ends the session and tauri-driver. (Ending
     * the session alone would kill the app without letting it clean up.) Resolves with
     * the quit's duration in ms (SIGTERM until the process exited), null if it was gone.
     */
    async stop() {
      const state = path.join(env.TAP_HOME, "gateway.json");
      const pid = await readFile(state, "utf8").then((t) => JSON.parse(t).pid, () => null);
      let quitMs = null;
      if (pid) {
        try {
          const asked = performance.now();
          process.kill(pid, "SIGTERM");
          await waitFor(() => processGone(pid), "the app to quit", 20000, 2);
          quitMs = Math.round(performance.now() - asked);
          assert(!existsSync(state), "gateway.json removed on quit");
        } catch (e) {
          if (e?.code !== "ESRCH") throw e; // already gone
        }
      }
      await browser.deleteSession().catch(() => {});
      if (child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(-child.pid, "SIGTERM");
        } catch {
          /* already gone */
        }
        const timer = setTimeout(() => {
          try {
            process.kill(-child.pid, "SIGKILL");
          } catch {
            /* already gone */
          }
        }, 5000);
        await output.exited;
        clearTimeout(timer);
      }
      return quitMs;
    },
  };
}

/**
 * Whether process `pid` has exited: no longer in /proc, or a zombie (exited, not yet
 * reaped by its parent, here WebKitWebDriver).
 */
export async function processGone(pid) {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => null);
  return stat === null || /^\d+ \(.*\) Z /.test(stat);
}

/** Captures a webview may take before a finished paint: a resize lands in X first, and a
 * picture taken between that and WebKit's next paint shows black where the old viewport
 * ended. */
const WEBVIEW_CAPTURE_TRIES = 20;

/**
 * WebDriver's picture of the webview, written to `file` once it is a finished paint: taken
 * after two animation frames, and taken again (after two more) while it holds a flat block
 * the README check (06-screenshots) would refuse. Fails, naming the block, if no capture
 * comes out whole.
 */
export async function saveWebviewScreenshot(browser, file) {
  let block = null;
  for (let i = 0; i < WEBVIEW_CAPTURE_TRIES; i++) {
    await browser.executeAsync((done) => requestAnimationFrame(() => requestAnimationFrame(() => done())));
    // WebKitWebDriver's capture waits for the webview's next paint, and a page where nothing
    // moves never paints again: the held-tools popup (no countdown ticking, no scrollbar
    // fading) made it wait past the HTTP timeout. A second and a half of a change nobody can
    // see (opacity 1 and 0.999, the same 8-bit colours) gives it paints to wait for.
    await browser.execute(() => {
      const root = document.documentElement;
      const end = performance.now() + 1500;
      const step = () => {
        root.style.opacity = root.style.opacity === "0.999" || performance.now() >= end ? "" : "0.999";
        if (performance.now() < end) requestAnimationFrame(step);
      };
      requestAnimationFrame(step);
    });
    const png = Buffer.from(await browser.takeScreenshot(), "base64");
    block = largestForeignBlock(PNG.sync.read(png));
    if (!block || block.share <= MAX_FOREIGN_BLOCK) {
      await writeFile(file, png);
      return;
    }
  }
  throw new Error(`no whole capture for ${path.basename(file)} in ${WEBVIEW_CAPTURE_TRIES} tries: ${JSON.stringify(block)}`);
}

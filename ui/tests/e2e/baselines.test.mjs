// Screenshot baselines: the popup, Overview and Providers drawn from fixed data at fixed
// sizes, compared with committed PNGs (tests/e2e/baselines/) with a tolerance, so a layout
// regression fails CI while anti-aliasing noise does not. What changes from run to run
// (pairing codes, countdowns, uptime, ports, temporary paths, ids, "connected 3s ago") is
// masked, and animations are off.
//
// Re-baseline after an intended change: TAP_UPDATE_BASELINES=1 npm run test:e2e (or run
// this file alone), look at the new PNGs, commit them. On a mismatch the actual picture and
// a diff (changed pixels in red) are written next to the temporary directory the failure names.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pixelmatch from "pixelmatch";
import { PNG } from "pngjs";
import { goTo, openPanel } from "../../../tests/js-support/browser.mjs";
import { waitFor } from "../../../tests/js-support/wait.mjs";
import { launchBrowser, nodeProvider, startGateway } from "./support.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const BASELINES = path.join(here, "baselines");
const UPDATE = process.env.TAP_UPDATE_BASELINES === "1";
/** pixelmatch's per-pixel colour distance (0..1) under which two pixels count as equal. */
const PIXEL_THRESHOLD = 0.1;
/** Share of the picture that may differ: anti-aliasing noise stays far below; a moved block does not. */
const MAX_DIFF_RATIO = 0.005;
const PANEL_SIZE = { width: 1100, height: 760 };
const POPUP_WIDTH = 400;

/** Compares `png` (a Buffer) with the baseline `name`.png; writes it instead when re-baselining. */
async function matchesBaseline(png, name) {
  const file = path.join(BASELINES, `${name}.png`);
  if (UPDATE || !existsSync(file)) {
    assert.ok(UPDATE, `${file} is missing: run with TAP_UPDATE_BASELINES=1 to create it`);
    await mkdir(BASELINES, { recursive: true });
    await writeFile(file, png);
    return;
  }
  const expected = PNG.sync.read(await readFile(file));
  const actual = PNG.sync.read(png);
  const { width, height } = expected;
  const out = async (diffPng) => {
    const dir = await mkdtemp(path.join(tmpdir(), `tap-baseline-${name}-`));
    await writeFile(path.join(dir, "actual.png"), png);
    if (diffPng) await writeFile(path.join(dir, "diff.png"), PNG.sync.write(diffPng));
    return dir;
  };
  if (actual.width !== width || actual.height !== height) {
    assert.fail(`${name}: ${actual.width}x${actual.height}, baseline ${width}x${height} (actual in ${await out(null)})`);
  }
  const diff = new PNG({ width, height });
  const changed = pixelmatch(expected.data, actual.data, diff.data, width, height, { threshold: PIXEL_THRESHOLD });
  const ratio = changed / (width * height);
  if (ratio > MAX_DIFF_RATIO) {
    assert.fail(`${name}: ${(ratio * 100).toFixed(2)}% of the pixels differ (at most ${MAX_DIFF_RATIO * 100}%); see ${await out(diff)}`);
  }
}

/** A screenshot with what changes between runs masked and animations stopped. */
function stableShot(page, mask) {
  return page.screenshot({ animations: "disabled", caret: "hide", mask: mask.map((s) => page.locator(s)), maskColor: "#888888" });
}

describe("screenshot baselines", () => {
  let gateway, browser, context;
  const providers = [];
  const pairing = [];

  before(async () => {
    gateway = await startGateway();
    const session = await gateway.openSession("baseline-session");
    for (const [i, name] of ["com.example.build-tools", "com.example.docs-search"].entries()) {
      providers.push(
        await nodeProvider(gateway, { name, session: session.id, tools: [`build_step_${i}`, `lint_step_${i}`] }),
      );
    }
    const ws = new WebSocket(`ws://${gateway.hostPort}/`);
    const frames = [];
    ws.addEventListener("message", (e) => frames.push(JSON.parse(String(e.data))));
    await new Promise((r) => ws.addEventListener("open", r, { once: true }));
    ws.send(JSON.stringify({ type: "auth", mode: "pair", name: "page-tools" }));
    await waitFor(() => frames.find((f) => f.type === "auth.pairing"), "auth.pairing");
    pairing.push(ws);
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: PANEL_SIZE, colorScheme: "light", reducedMotion: "reduce" });
  });

  after(async () => {
    for (const p of providers) p.close();
    for (const ws of pairing) ws.close();
    await browser?.close();
    await gateway?.stop();
  });

  test("the popup with one request matches its baseline", async () => {
    const login = new URL(await gateway.loginUrl());
    login.search = "?view=popup";
    const popup = await context.newPage();
    await popup.goto(login.toString());
    await popup.locator("li.popup-request").waitFor();
    // As the desktop app sizes it: the height the page asks for, once it is settled (the
    // page re-measures as its data and fonts arrive, and the window follows each time).
    await waitFor(async () => {
      const wanted = Number(await popup.locator("main.popup").getAttribute("data-wanted-height"));
      if (!(wanted > 0)) return false;
      if (wanted === popup.viewportSize().height) return true;
      await popup.setViewportSize({ width: POPUP_WIDTH, height: wanted });
      return false;
    }, "the popup's settled height");
    await matchesBaseline(await stableShot(popup, ['[data-testid="pairing-code"]', '[data-testid="pairing-countdown"]']), "popup");
    await popup.close();
  });

  test("Overview matches its baseline", async () => {
    const panel = await openPanel(context, gateway);
    await goTo(panel, "Overview");
    await panel.getByTestId("overview-sessions").filter({ hasText: "1" }).waitFor();
    await panel.getByTestId("overview-activity").getByTestId("timechart").waitFor();
    await matchesBaseline(
      await stableShot(panel, [
        '[data-testid="overview-address"]',
        '[data-testid="overview-uptime"]',
        ".card-hint:has-text('since')",
        // The activity chart's time axis says the clock time of the run.
        '[data-testid="timechart-xaxis"]',
      ]),
      "overview",
    );
    await panel.close();
  });

  test("Providers matches its baseline", async () => {
    const panel = await openPanel(context, gateway);
    await goTo(panel, "Providers");
    await waitFor(async () => (await panel.locator("tr[data-provider-id]").count()) === providers.length, "the provider rows");
    // Ids, connection times and remote ports differ per run; the order of rows is by name.
    await matchesBaseline(await stableShot(panel, [".id-short", "td .nowrap", "td .mono.small.muted", '[data-testid="pairing-code"]']), "providers");
    await panel.close();
  });
});

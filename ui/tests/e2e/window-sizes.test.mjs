// The panel at its window sizes: every page, with long names and many rows from the real
// gateway, fits 800×600, 1100×760 (the desktop window's default) and 1440×900 without a
// page-level horizontal scrollbar; long ids are shortened in the middle with a copy button.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { goTo, openPanel } from "../../../tests/js-support/browser.mjs";
import { waitFor } from "../../../tests/js-support/wait.mjs";
import { launchBrowser, nodeProvider, startGateway } from "./support.mjs";

const SIZES = [
  { width: 800, height: 600 },
  { width: 1100, height: 760 },
  { width: 1440, height: 900 },
];
const PAGES = ["Overview", "Pairing", "Approvals", "Sessions", "Providers", "Streams", "Traces", "Diagnostics", "Logs", "Settings", "Emitters", "Servers", "Clients"];
const LONG = "a-rather-long-session-label-from-a-deeply-nested-monorepo-checkout";
/** An emitter name as long as the gateway takes (64), and a long command with unbroken tokens. */
const LONG_EMITTER = "a-rather-long-emitter-name-for-the-nightly-integration-suite-001";
const LONG_COMMAND = `echo ${"with-a-long-unbroken-token-".repeat(8)} && echo done`;
/** A profile's and a client token's client name as long as the gateway takes (64). */
const LONG_PROFILE = "a-rather-long-profile-name-for-the-browser-agent-of-the-team-001";
const LONG_CLIENT = "a-rather-long-client-name-for-the-nightly-integration-suite-0001";
const SESSIONS = 4;
const PROVIDERS = 8;

describe("the panel at its window sizes", () => {
  let gateway, browser, context, panel;
  const sessions = [];
  const providers = [];

  before(async () => {
    gateway = await startGateway({ ownHome: true });
    for (let i = 0; i < SESSIONS; i++) sessions.push(await gateway.openSession(`${LONG}-${i}`));
    for (let i = 0; i < PROVIDERS; i++) {
      const p = await nodeProvider(gateway, {
        name: `com.example.an-unusually-long-provider-name-number-${i}`,
        session: sessions[i % SESSIONS].id,
        tools: [`run_the_full_integration_test_suite_${i}`, `collect_coverage_report_for_every_package_${i}`],
      });
      p.push("a-long-stream-name-for-build-and-deploy-output", `event ${i} ${"with-a-long-unbroken-token-".repeat(6)}`, "keep");
      providers.push(p);
    }
    // A delivered push is a trace: the Traces page shows it with the long names, opened.
    providers[0].push("a-long-stream-name-for-build-and-deploy-output", `delivered ${"with-a-long-unbroken-token-".repeat(6)}`, "surface", {
      note: "with-a-long-unbroken-metadata-value-".repeat(4),
    });
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: SIZES[0], colorScheme: "light" });
    await context.grantPermissions(["clipboard-read", "clipboard-write"]);
    panel = await openPanel(context, gateway);
    await goTo(panel, "Providers");
    await waitFor(async () => (await panel.locator("tr[data-provider-id]").count()) === PROVIDERS, `${PROVIDERS} provider rows`);
    // An emitter with a long name, stream and command, made in the Emitters page's form; its run is on the timeline.
    await panel.goto(`${gateway.httpBase}/#/emitters/${encodeURIComponent(sessions[0].id)}`);
    await panel.getByRole("heading", { level: 1, name: "Emitters" }).waitFor();
    await panel.getByRole("button", { name: "New emitter" }).click();
    const form = panel.getByRole("form", { name: "New emitter" });
    await form.getByRole("textbox", { name: "Name", exact: true }).fill(LONG_EMITTER);
    await form.getByRole("textbox", { name: /^Command/ }).fill(LONG_COMMAND);
    await form.getByRole("textbox", { name: "Every" }).fill("1h");
    await form.getByRole("textbox", { name: "Stream" }).fill("a-long-stream-name-for-build-and-deploy-output");
    await form.getByRole("button", { name: "Add rule" }).click();
    await form.getByRole("textbox", { name: "Rule 1 regex" }).fill("with-a-long-unbroken-token-".repeat(4));
    await form.getByRole("button", { name: "Start emitter" }).click();
    await panel.locator(`li.emitter[data-emitter="${LONG_EMITTER}"] .run-bar`).first().waitFor({ timeout: 15000 });
    // A profile with a long name, and a client token held to it for a long client name.
    for (const args of [
      ["profiles", "set", LONG_PROFILE, "--hide-tool", "collect_coverage_report_for_every_package_*"],
      ["tokens", "create", LONG_CLIENT, "--profile", LONG_PROFILE],
    ]) {
      const r = await gateway.tap(args);
      assert.equal(r.code, 0, `tap ${args.join(" ")}: ${r.stdout}${r.stderr}`);
    }
  });

  after(async () => {
    for (const p of providers) p.close();
    await browser?.close();
    await gateway?.stop();
  });

  for (const size of SIZES) {
    test(`every page fits ${size.width}x${size.height} without page-level horizontal scroll`, async () => {
      await panel.setViewportSize(size);
      const overflowing = [];
      for (const title of PAGES) {
        await goTo(panel, title);
        if (title === "Streams") {
          // In the list (the Stream picker's options name it too).
          await panel.getByRole("list", { name: /Stream events/ }).getByText("a-long-stream-name-for-build-and-deploy-output").first().waitFor();
        }
        if (title === "Emitters") {
          // The emitter, and the form open under the session picker.
          await panel.getByRole("combobox", { name: "Session" }).selectOption(sessions[0].id);
          await panel.locator(`li.emitter[data-emitter="${LONG_EMITTER}"] .run-bar`).first().waitFor();
          await panel.getByRole("button", { name: "New emitter" }).click();
          await panel.getByRole("form", { name: "New emitter" }).getByRole("button", { name: "Add rule" }).click();
        }
        if (title === "Traces") {
          // The list, the waterfall and a span's side panel, all at once: a push's trace (the
          // emitter's run is a trace too, and newer).
          await panel.getByRole("combobox", { name: "Kind" }).selectOption("push");
          await waitFor(async () => (await panel.locator('[data-testid="traces-list"] tbody tr').count()) === 1, "the push's trace");
          await panel.locator('[data-testid="traces-list"] tbody tr').first().getByRole("link").click();
          await panel.getByTestId("trace-view").locator("li.wf-row .wf-name").first().click();
          await panel.getByTestId("span-detail").getByText("a-long-stream-name-for-build-and-deploy-output").waitFor();
        }
        if (title === "Clients") {
          // The long profile's editor open, and the long client's token in the list.
          await panel.locator(`li.profile-card[data-profile="${LONG_PROFILE}"]`).getByRole("link").click();
          await panel.locator(`section.profile-editor[data-editing="${LONG_PROFILE}"]`).waitFor();
          await panel.locator(`tr[data-client="${LONG_CLIENT}"]`).waitFor();
        }
        const { scrollWidth, clientWidth } = await panel.evaluate(() => ({
          scrollWidth: document.documentElement.scrollWidth,
          clientWidth: document.documentElement.clientWidth,
        }));
        if (scrollWidth > clientWidth) overflowing.push(`${title} (${scrollWidth} > ${clientWidth})`);
      }
      assert.deepEqual(overflowing, [], `pages overflowing at ${size.width}x${size.height}`);
    });
  }

  test("at 1100x760 Providers shows Connected and Disconnect without scrolling the table", async () => {
    await panel.setViewportSize(SIZES[1]);
    await goTo(panel, "Providers");
    const wrap = panel.locator(".table-wrap").first();
    const { scrollWidth, clientWidth } = await wrap.evaluate((e) => ({ scrollWidth: e.scrollWidth, clientWidth: e.clientWidth }));
    assert.ok(scrollWidth <= clientWidth, `the providers table scrolls sideways (${scrollWidth} > ${clientWidth})`);
    const button = panel.getByRole("button", { name: /^Disconnect / }).first();
    const box = await button.boundingBox();
    assert.ok(box && box.x + box.width <= SIZES[1].width, `Disconnect is off-screen: ${JSON.stringify(box)}`);
  });

  test("at 1100x760 Overview keeps the Live badge above the fold", async () => {
    await panel.setViewportSize(SIZES[1]);
    await goTo(panel, "Overview");
    const box = await panel.getByRole("status").filter({ hasText: "Live" }).boundingBox();
    assert.ok(box && box.y + box.height <= SIZES[1].height, `Live badge below the fold: ${JSON.stringify(box)}`);
  });

  test("long ids are shortened in the middle, with the full id on hover and a copy button", async () => {
    await panel.setViewportSize(SIZES[1]);
    await goTo(panel, "Sessions");
    const id = sessions[0].id;
    const row = panel.locator(`tr[data-session-id="${id}"]`);
    const shown = row.locator(".id-short").first();
    const visible = shown.locator("[aria-hidden]");
    await shown.waitFor();
    assert.equal(await shown.getAttribute("title"), id);
    const text = await visible.innerText();
    assert.ok(text.includes("…") && text.length < id.length, `the id is shortened: ${text}`);
    assert.ok(id.startsWith(text.split("…")[0]) && id.endsWith(text.split("…")[1]), `shortened in the middle: ${text}`);
    await row.getByRole("button", { name: `Copy ${id}` }).click();
    // Headless Chromium has the Clipboard API on 127.0.0.1 once the context is granted it.
    assert.equal(await panel.evaluate(() => navigator.clipboard.readText()), id, "Copy put the full id on the clipboard");

    await goTo(panel, "Providers");
    const prow = panel.locator("tr[data-provider-id]").first();
    const pid = await prow.getAttribute("data-provider-id");
    assert.equal(await prow.locator(".id-short").first().getAttribute("title"), pid);
    await prow.getByRole("button", { name: `Copy ${pid}` }).waitFor();
  });
});

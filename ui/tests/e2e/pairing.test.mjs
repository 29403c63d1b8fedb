// Pairing end to end: the spec's browser provider example, served from another origin,
// asks to pair; the user reads the code from the panel and types it into the page's
// prompt(); the provider binds and `tap call` reaches its tool. Also: a wrong code, Deny,
// Deny all, revoke, and the panel's lists following it all live.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { goTo } from "../../../tests/js-support/browser.mjs";
import { waitFor } from "../../../tests/js-support/wait.mjs";
import { launchBrowser, panelInNewContext, providerPageHtml, screenshot, serveOtherOrigin, startGateway } from "./support.mjs";

const PAGE_TITLE = "Tap e2e provider page";
/** A fixed session id, so the session can be opened again after a gateway restart. */
const SESSION_ID = "e2e-session";

describe("pairing a browser provider through the panel", () => {
  let gateway, session, browser, context, panel, site;

  before(async () => {
    gateway = await startGateway();
    session = await gateway.openSession("e2e", ["--id", SESSION_ID]);
    site = await serveOtherOrigin(await providerPageHtml(gateway.hostPort));
    browser = await launchBrowser();
    ({ context, panel } = await panelInNewContext(browser, gateway));
    await panel.evaluate(() => (window.__notReloaded = true));
    await goTo(panel, "Pairing");
  });

  after(async () => {
    await browser?.close();
    await site?.close();
    await gateway?.stop();
  });

  /** The pending request from the provider site, as the panel shows it. */
  const requestInPanel = () => panel.locator("li.request").filter({ has: panel.getByTestId("pairing-origin").getByText(site.origin, { exact: true }) });

  /** Reads the code the panel shows in large digits for the provider site's request. */
  async function codeFromPanel() {
    const request = requestInPanel();
    await waitFor(async () => (await request.count()) === 1, "exactly one pending request from the provider page in the panel");
    const code = await request.getByTestId("pairing-code").getAttribute("data-code");
    assert.match(code, /^\d{6}$/);
    return code;
  }

  /**
   * Opens the provider page. `onPrompt(dialog)` answers the example's prompt() (the first
   * one only; a reconnect's later prompts are dismissed). Resolves with the page and a
   * promise of the prompt handler's outcome.
   */
  async function openProvider(onPrompt) {
    const page = await context.newPage();
    let answered = false;
    let settle;
    const handled = new Promise((resolve, reject) => (settle = { resolve, reject }));
    page.on("dialog", async (dialog) => {
      if (dialog.type() !== "prompt" || answered) return dialog.dismiss();
      answered = true;
      try {
        assert.match(dialog.message(), /pairing code/);
        settle.resolve(await onPrompt(dialog));
      } catch (e) {
        await dialog.dismiss().catch(() => {});
        settle.reject(e);
      }
    });
    await page.goto(site.url);
    return { page, handled };
  }

  const log = (page) => page.evaluate(() => window.__tapLog);
  const helloAcks = async (page) => (await log(page)).filter((e) => e.kind === "message" && e.data.type === "hello.ack").length;
  /** The provider socket (not the control one) saw `error AUTH_FAILED` and then closed. */
  async function refused(page) {
    return waitFor(async () => {
      const entries = (await log(page)).filter((e) => !e.url.endsWith("/control"));
      const error = entries.find((e) => e.kind === "message" && e.data.type === "error");
      const closed = entries.some((e) => e.kind === "close");
      return error && closed ? error.data : null;
    }, "the provider to be refused (error, then close)");
  }

  async function noPending() {
    await panel.getByText("No pending requests").waitFor();
    assert.deepEqual((await gateway.pairings()).filter((p) => p.state === "pending"), []);
  }

  test("the code read from the panel pairs the page; it binds and `tap call` runs its tool", async () => {
    const { page, handled } = await openProvider(async (dialog) => {
      const code = await codeFromPanel();
      // The request shows where it comes from; keep it to the e2e session, remembered.
      const request = requestInPanel();
      assert.match(await request.innerText(), /Remote\s+127\.0\.0\.1:\d+/);
      await screenshot(panel, "pairing-browser");
      await request.getByRole("combobox", { name: /Session for/ }).selectOption(session.id);
      await request.getByRole("checkbox", { name: /Remember/ }).check();
      await waitFor(async () => {
        const [p] = await gateway.pairings();
        return p.session === session.id && p.remember === true;
      }, "pairing.configure from the panel");
      await dialog.accept(code);
      return code;
    });
    await handled;

    // Paired: the panel moves it to the paired list and the provider binds (live, no reload).
    const paired = panel.locator("tr[data-pairing-id]").filter({ hasText: site.origin });
    await paired.getByText("connected", { exact: true }).waitFor();
    await noPending();
    await waitFor(async () => (await log(page)).some((e) => e.kind === "message" && e.data.type === "hello.ack"), "hello.ack");
    const [entry] = await gateway.pairings();
    assert.equal(entry.state, "paired");
    assert.equal(entry.origin, site.origin);
    assert.equal(entry.name, "browser");
    assert.equal(entry.connected, true);

    const call = await gateway.tap(["call", "--session", session.id, "page_title"]);
    assert.equal(call.code, 0, call.stdout + call.stderr);
    assert.equal(JSON.parse(call.stdout), PAGE_TITLE);

    await goTo(panel, "Providers");
    const row = panel.locator("tr[data-provider-id]").filter({ hasText: "browser" });
    const text = await row.innerText();
    for (const word of ["external", "bound", "e2e", "page_title", "screenshot"]) assert.ok(text.includes(word), `${word} in ${text}`);
    await goTo(panel, "Sessions");
    await panel.locator(`tr[data-session-id="${session.id}"]`).getByText("page_title").waitFor();

    // The page goes away: the provider leaves every list, the pairing stays (not connected).
    await page.close();
    await goTo(panel, "Providers");
    await row.waitFor({ state: "detached" });
    await goTo(panel, "Pairing");
    await paired.getByText("not connected").waitFor();

    // Revoke: the pairing is gone for good.
    await paired.getByRole("button", { name: "Revoke browser" }).click();
    await paired.getByRole("button", { name: "Yes, revoke" }).click();
    await paired.waitFor({ state: "detached" });
    assert.deepEqual(await gateway.pairings(), []);
    assert.equal(await panel.evaluate(() => window.__notReloaded), true, "the panel never reloaded");
  });

  test("a wrong code refuses the provider and ends the request", async () => {
    const { page, handled } = await openProvider(async (dialog) => {
      const code = await codeFromPanel();
      const wrong = code.replace(/\d/g, (d) => String((Number(d) + 1) % 10));
      await dialog.accept(wrong);
    });
    await handled;
    const error = await refused(page);
    assert.equal(error.code, "AUTH_FAILED");
    assert.ok(!(await log(page)).some((e) => e.kind === "message" && e.data.type === "sessions"), "never admitted");
    await page.close(); // before the example's 5 s reconnect asks again
    await noPending();
    assert.deepEqual(await gateway.pairings(), []);
  });

  test("Deny in the panel refuses the provider", async () => {
    const { page, handled } = await openProvider(async (dialog) => {
      await codeFromPanel();
      const request = requestInPanel();
      await request.getByRole("button", { name: /^Deny request/ }).click();
      await request.getByRole("button", { name: "Yes, deny" }).click();
      await request.waitFor({ state: "detached" });
      await dialog.dismiss(); // the user closes the prompt; the gateway has already said no
    });
    await handled;
    const error = await refused(page);
    assert.equal(error.code, "AUTH_FAILED");
    await page.close();
    await noPending();
  });

  test("Deny all refuses every pending provider", async () => {
    let done;
    const allDenied = new Promise((resolve) => (done = resolve));
    // Both pages wait in their prompt until Deny all was clicked.
    const first = await openProvider(async (dialog) => {
      await allDenied;
      await dialog.dismiss();
    });
    const second = await openProvider(async (dialog) => {
      await allDenied;
      await dialog.dismiss();
    });
    await waitFor(async () => (await requestInPanel().count()) === 2, "two pending requests in the panel");
    await panel.getByRole("button", { name: "Deny all" }).click();
    await panel.getByRole("group", { name: /Deny all 2 requests/ }).getByRole("button", { name: "Deny all" }).click();
    await noPending();
    done();
    await Promise.all([first.handled, second.handled]);
    for (const { page } of [first, second]) {
      assert.equal((await refused(page)).code, "AUTH_FAILED");
      await page.close();
    }
  });

  test("a remembered pairing survives a gateway restart; the panel asks for a new login", async () => {
    const { page, handled } = await openProvider(async (dialog) => {
      const code = await codeFromPanel();
      await requestInPanel().getByRole("checkbox", { name: /Remember/ }).check();
      await waitFor(async () => (await gateway.pairings())[0]?.remember === true, "remember, through the panel");
      await dialog.accept(code);
    });
    await handled;
    await waitFor(async () => (await helloAcks(page)) === 1, "the provider to bind");
    const [before] = await gateway.pairings();

    await gateway.restart();
    // The control token died with the old gateway: the panel says so instead of showing stale data.
    await panel.getByRole("alert").filter({ hasText: "no longer accepts this panel's token" }).waitFor();
    await gateway.openSession("e2e", ["--id", SESSION_ID]);
    // The example reconnects on its own (5 s) with the token it was issued: no second prompt.
    await waitFor(async () => (await helloAcks(page)) === 2, "the provider to bind again after the restart", 30000);

    await panel.goto(await gateway.loginUrl());
    await panel.getByRole("status").filter({ hasText: "Live" }).waitFor();
    await goTo(panel, "Pairing");
    const paired = panel.locator("tr[data-pairing-id]").filter({ hasText: site.origin });
    await paired.getByText("connected", { exact: true }).waitFor();
    assert.equal(await paired.getByRole("checkbox", { name: /Remember/ }).isChecked(), true);
    const after = await gateway.pairings();
    assert.equal(after.length, 1);
    assert.equal(after[0].id, before.id);
    assert.equal(after[0].connected, true);
    const call = await gateway.tap(["call", "--session", SESSION_ID, "page_title"]);
    assert.equal(JSON.parse(call.stdout), PAGE_TITLE);
    await page.close();
  });
});

describe("the pairing attempt limit", () => {
  let gateway, site, browser;

  before(async () => {
    gateway = await startGateway();
    await gateway.openSession("e2e-limit");
    site = await serveOtherOrigin(await providerPageHtml(gateway.hostPort));
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await site?.close();
    await gateway?.stop();
  });

  /** Opens the provider page and answers its prompt with `answer(code)` (the code from `tap pairing list`). */
  async function attempt(answer) {
    const page = await browser.newPage();
    let first = true;
    page.on("dialog", async (dialog) => {
      if (!first) return dialog.dismiss();
      first = false;
      const [pending] = await waitFor(async () => {
        const list = (await gateway.pairings()).filter((p) => p.state === "pending");
        return list.length === 1 ? list : null;
      }, "one pending request");
      await dialog.accept(answer(pending.code));
    });
    await page.goto(site.url);
    const error = await waitFor(async () => {
      const log = await page.evaluate(() => window.__tapLog);
      return log.find((e) => e.kind === "message" && e.data.type === "error")?.data;
    }, "an error for the attempt");
    const closed = await page.evaluate(() => window.__tapLog.some((e) => e.kind === "close"));
    return { page, error, closed };
  }

  test("after 5 codes in a minute even the right code is refused with RATE_LIMITED", async () => {
    const wrong = (code) => code.replace(/\d/g, (d) => String((Number(d) + 1) % 10));
    for (let i = 0; i < 5; i++) {
      const { page, error } = await attempt(wrong);
      assert.equal(error.code, "AUTH_FAILED", `attempt ${i + 1}`);
      await page.close();
      await waitFor(async () => (await gateway.pairings()).length === 0, "the failed request to be gone");
    }
    const { page, error, closed } = await attempt((code) => code);
    assert.equal(error.code, "RATE_LIMITED");
    assert.equal(closed, false, "a rate-limited attempt does not end the request");
    const [pending] = await gateway.pairings();
    assert.equal(pending.state, "pending");
    await page.close();
  });
});

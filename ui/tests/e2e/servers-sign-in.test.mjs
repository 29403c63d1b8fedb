// The panel's side of signing in to a remote MCP server, against the real gateway and the
// OAuth test fixture (tests/mcp/oauth: oidc-provider as the authorization server and a
// protected MCP server, on 127.0.0.1): the server answers 401, so the Servers page shows it
// waiting for a sign-in (with the gateway's reason) and the Overview lists it under Needs
// attention, both with a "Sign in" button; Sign in opens the authorization page in a new tab
// and the page says it waits for the browser, with the link to open it again; allowing on
// that page brings the browser back to the gateway, and the row turns "Signed in" with the
// issuer, the scope and when the token expires; "Sign out" asks first, then the server waits
// for a sign-in again and the fixture saw the tokens revoked. Everything follows
// `status.changed`: nothing is asked while nothing changes. The page stays usable at 800×600
// in the dark theme. Saves docs/screenshots/servers-sign-in.png.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { goTo, openPanel } from "../../../tests/js-support/browser.mjs";
import { remove, tempDir } from "../../../tests/js-support/process.mjs";
import { waitFor } from "../../../tests/js-support/wait.mjs";
import { startOAuthFixture } from "../../../tests/mcp/oauth/start.mjs";
import { launchBrowser, recordFrames, screenshot, startGateway, watchIdle } from "./support.mjs";

// The tokens go to $TAP_HOME's 0600 file, never to the machine's keyring.
process.env.TAP_KEYRING = "off";

describe("signing in to a remote MCP server from the panel", () => {
  let dir, fx, gateway, browser, context, panel, frames;

  before(async () => {
    fx = await startOAuthFixture();
    dir = tempDir("tap-e2e-sign-in-");
    mkdirSync(path.join(dir, "tap"));
    writeFileSync(path.join(dir, "tap", "mcp.json"), JSON.stringify({ mcpServers: { remote: { type: "http", url: fx.mcpUrl } } }, null, 2));
    gateway = await startGateway({ ownHome: true, dir });
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: "light" });
    frames = recordFrames(context);
    panel = await openPanel(context, gateway);
  });

  after(async () => {
    await browser?.close();
    await gateway?.stop();
    await fx?.stop();
    if (dir) remove(dir);
  });

  const row = () => panel.locator('tr[data-server="remote"]');
  const state = () => row().getByTestId("server-state");
  const signIn = () => panel.getByRole("region", { name: "Sign-in of remote" });
  const stateIs = async (want) => (await row().count()) === 1 && (await state().getAttribute("data-state")) === want;
  const list = async () => JSON.parse((await gateway.tap(["mcp", "list", "--json"])).stdout).find((s) => s.name === "remote");

  test("a server answering 401 waits for a sign-in: the Servers page says why, with Sign in", async () => {
    await goTo(panel, "Servers");
    await waitFor(() => stateIs("needsSignIn"), "remote waiting for a sign-in", 20000);
    assert.equal(await state().innerText(), "needs sign-in");
    assert.match(await state().getAttribute("class"), /\battention\b/);
    // The gateway's word: waiting, not failing; no token anywhere.
    const info = await list();
    assert.equal(info.state, "needsSignIn");
    assert.equal(info.failing, false);
    assert.equal(info.signIn.signedIn, false);
    assert.equal(await signIn().getAttribute("data-sign-in"), "needed");
    const text = await signIn().innerText();
    // The gateway's reason, after the server's name.
    assert.ok(info.signIn.reason, JSON.stringify(info.signIn));
    assert.ok(text.includes(`remote: ${info.signIn.reason}`), `the reason in ${text}`);
    assert.match(text, /Sign in opens its sign-in page in your browser/);
    assert.equal(await signIn().getByRole("button", { name: "Sign in", exact: true }).count(), 1);
    assert.equal(await signIn().getByRole("button", { name: "Sign out", exact: true }).count(), 0);
    assert.equal(await panel.getByRole("alert").count(), 0);
    await screenshot(panel, "servers-sign-in");
  });

  test("the Overview lists it under Needs attention, with Sign in", async () => {
    await goTo(panel, "Overview");
    const attention = panel.getByTestId("overview-attention");
    await attention.waitFor();
    const item = attention.locator('li[data-server="remote"]');
    assert.match(await item.innerText(), /MCP server remote\s+needs sign-in/);
    // The gateway's reason as a sentence of its own.
    const { reason } = (await list()).signIn;
    assert.ok((await item.innerText()).includes(reason.charAt(0).toUpperCase() + reason.slice(1)), await item.innerText());
    assert.equal(await item.getByRole("button", { name: "Sign in", exact: true }).count(), 1);
    await goTo(panel, "Servers");
    await signIn().waitFor();
  });

  test("nothing is asked while it waits (no polling)", async () => {
    const { sent } = await watchIdle(frames);
    assert.deepEqual(sent.filter((m) => m === "mcpServers.list"), []);
  });

  let authPage;
  test("Sign in opens the authorization page in a new tab; the page waits for the browser, with the link again", async () => {
    const opened = context.waitForEvent("page");
    await signIn().getByRole("button", { name: "Sign in", exact: true }).click();
    authPage = await opened;
    await authPage.waitForURL((u) => u.href.startsWith(fx.issuer), { timeout: 20000 });
    const waiting = signIn().getByTestId("sign-in-waiting");
    await waiting.waitFor({ timeout: 20000 });
    assert.match(await waiting.innerText(), /Waiting for the browser…/);
    const again = waiting.getByRole("link", { name: "Open the sign-in page again" });
    const href = await again.getAttribute("href");
    assert.ok(href.startsWith(fx.issuer), href);
    assert.match(href, /[?&]state=/);
    assert.equal(await again.getAttribute("target"), "_blank");
    assert.equal((await list()).signIn.pending, true);
    assert.equal(await panel.getByRole("alert").count(), 0);
  });

  test("allowing there signs in: the row shows Signed in with the issuer, the scope and the token's expiry", async () => {
    await authPage.locator("#allow").click();
    await waitFor(() => stateIs("ready"), "remote ready once signed in", 30000);
    await waitFor(async () => (await signIn().getAttribute("data-sign-in")) === "signed-in", "the sign-in shown");
    const text = await signIn().innerText();
    assert.match(text, /Signed in\s+to remote/);
    const info = await list();
    assert.equal(info.signIn.signedIn, true);
    if (info.signIn.issuer) assert.equal(await signIn().getByTestId("sign-in-issuer").innerText(), info.signIn.issuer);
    assert.ok(info.signIn.scopes.includes("mcp:tools"), JSON.stringify(info.signIn));
    assert.match(await signIn().getByTestId("sign-in-scopes").innerText(), /mcp:tools/);
    // The fixture's access tokens live an hour.
    assert.match(await signIn().getByTestId("sign-in-expiry").innerText(), /^Access token expires in (59m|1h 00m)/);
    assert.equal(await signIn().getByRole("button", { name: "Sign in", exact: true }).count(), 0);
    assert.equal(await signIn().getByTestId("sign-in-waiting").count(), 0);
    assert.notEqual(await row().getByTestId("server-tool-count").innerText(), "0");
    // Nothing needs attention any more.
    await goTo(panel, "Overview");
    await panel.getByTestId("overview-sessions").waitFor();
    await waitFor(async () => (await panel.getByTestId("overview-attention").count()) === 0, "no attention block");
    await goTo(panel, "Servers");
  });

  test("Sign out asks first; then the tokens are revoked and the server waits for a sign-in again", async () => {
    await signIn().getByRole("button", { name: "Sign out", exact: true }).click();
    const ask = signIn().getByRole("group", { name: /^Sign out of remote\?/ });
    // Cancel first: nothing happens.
    await ask.getByRole("button", { name: "Cancel" }).click();
    assert.equal(await signIn().getAttribute("data-sign-in"), "signed-in");
    await signIn().getByRole("button", { name: "Sign out", exact: true }).click();
    await ask.getByRole("button", { name: "Yes, sign out" }).click();
    await waitFor(() => stateIs("needsSignIn"), "remote waiting for a sign-in again", 20000);
    assert.equal(await signIn().getAttribute("data-sign-in"), "needed");
    assert.ok((await fx.counters()).revocations.total >= 1, "the fixture saw a revocation");
    assert.equal(await panel.getByRole("alert").count(), 0);
  });

  test("at 800×600 in the dark theme the sign-in and its button are in view", async () => {
    const dark = await browser.newContext({ viewport: { width: 800, height: 600 }, colorScheme: "dark" });
    try {
      const page = await openPanel(dark, gateway);
      await goTo(page, "Servers");
      const region = page.getByRole("region", { name: "Sign-in of remote" });
      await region.waitFor();
      const button = region.getByRole("button", { name: "Sign in", exact: true });
      const box = await button.boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= 800, `Sign in within the window: ${JSON.stringify(box)}`);
      const area = await region.boundingBox();
      assert.ok(area.x + area.width <= 800, `the sign-in within the window: ${JSON.stringify(area)}`);
      // No page-level horizontal scrollbar.
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth));
      assert.deepEqual(page.errors, []);
    } finally {
      await dark.close();
    }
  });
});

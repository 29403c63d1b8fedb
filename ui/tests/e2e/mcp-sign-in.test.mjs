// Signing in to a remote MCP server, end to end: a real `tap gateway` whose user mcp.json
// names the OAuth fixture's protected MCP server (tests/mcp/oauth: oidc-provider as the
// authorization server, the TypeScript SDK's Streamable HTTP server requiring its token, 3 s
// access tokens). The Servers page shows it "needs sign-in"; Sign in opens the authorization
// server's page in a new tab, Allow there brings the browser back to the gateway's
// /oauth/callback; the server becomes ready and its `whoami` answers through `tap mcp` with the
// fixture's user. Once the access token expired the next call still works: the gateway
// refreshed without the user (the fixture counted a refresh_token grant, no new sign-in). A
// forged callback and a replayed one get 400. The fixture revoking every grant makes the next
// call fail and the server needs sign-in again (tap mcp list, the page); signing in again and
// then out revokes (the fixture counted it). Nowhere but the 0600 secrets file (TAP_KEYRING=off)
// — not TAP_HOME's other files, the gateway's output, `tap mcp list --json`, the page's HTML —
// holds an access or refresh token the fixture issued.
//
// Needs tests/mcp's packages (`npm install --prefix tests/mcp`) besides the panel's own.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { goTo, openPanel } from "../../../tests/js-support/browser.mjs";
import { startGateway, tapBin } from "../../../tests/js-support/gateway.mjs";
import { remove, tempDir } from "../../../tests/js-support/process.mjs";
import { waitFor } from "../../../tests/js-support/wait.mjs";
import { mcpClientOverStdio, startOAuthFixture } from "../../../tests/mcp/oauth/start.mjs";
import { launchBrowser, UI_DIST } from "./support.mjs";

const ACCESS_TTL = 3; // seconds; a token lives between 2 and 3 s (whole seconds)
const SERVER = "remote";

describe("signing in to a remote MCP server (OAuth)", () => {
  let fx, dir, gateway, browser, context, panel, client, callbackUrl;

  before(async () => {
    fx = await startOAuthFixture({ accessTtl: ACCESS_TTL });
    dir = tempDir("tap-e2e-sign-in-");
    mkdirSync(path.join(dir, "tap"));
    writeFileSync(path.join(dir, "tap", "mcp.json"), JSON.stringify({ mcpServers: { [SERVER]: { type: "http", url: fx.mcpUrl } } }, null, 2));
    // As support.mjs's startGateway, with the tokens in the 0600 secrets file (no keyring here).
    gateway = await startGateway({
      prefix: "tap-e2e-",
      dir,
      ownHome: true,
      env: { TAP_UI_DIR: UI_DIST, TAP_LOG: process.env.TAP_LOG ?? "info", TAP_KEYRING: "off", DISPLAY: undefined, WAYLAND_DISPLAY: undefined },
    });
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: "light" });
    panel = await openPanel(context, gateway);
  });

  after(async () => {
    await client?.close().catch(() => {});
    await browser?.close();
    await gateway?.stop();
    await fx?.stop();
    if (dir) remove(dir);
  });

  const listed = async () => {
    const r = await gateway.tap(["mcp", "list", "--json"]);
    assert.equal(r.code, 0, r.stderr);
    return { raw: r.stdout, entry: JSON.parse(r.stdout).find((e) => e.name === SERVER) };
  };
  const stateIs = (want) => waitFor(async () => (await listed()).entry?.state === want, `${SERVER} ${want} in tap mcp list`, 20000);
  const row = () => panel.locator(`tr[data-server="${SERVER}"]`);
  const pillState = () => row().getByTestId("server-state").getAttribute("data-state");
  const signInSection = () => panel.getByRole("region", { name: `Sign-in of ${SERVER}` });

  /** Presses Sign in on the page, Allow on the authorization server's; resolves with the callback page. */
  async function signInFromThePanel() {
    const opened = context.waitForEvent("page");
    await signInSection().getByRole("button", { name: "Sign in" }).click();
    const page = await opened;
    await page.waitForURL((u) => u.href.startsWith(`${fx.issuer}/interaction/`));
    assert.equal(await page.locator("#user").innerText(), fx.subject);
    assert.equal(await page.locator("#resource").innerText(), fx.mcpUrl, "the gateway asked for a token for the server (RFC 8707)");
    await page.getByRole("button", { name: "Allow" }).click();
    await page.waitForURL((u) => u.href.startsWith(`${gateway.httpBase}/oauth/callback?`));
    await page.getByRole("heading", { name: "Signed in" }).waitFor();
    return page;
  }

  const callWhoami = async () => {
    const result = await client.callTool({ name: `${SERVER}__whoami`, arguments: {} }, undefined, { timeout: 20000 });
    assert.ok(!result.isError, JSON.stringify(result));
    return JSON.parse(result.content.find((c) => c.type === "text").text);
  };

  test("the server needs sign-in: tap mcp list and the Servers page say so", async () => {
    await stateIs("needsSignIn");
    await goTo(panel, "Servers");
    await waitFor(async () => (await row().count()) === 1 && (await pillState()) === "needsSignIn", "the row needing sign-in");
    assert.equal(await row().getByTestId("server-state").innerText(), "needs sign-in");
    await signInSection().getByRole("button", { name: "Sign in" }).waitFor();
    assert.deepEqual((await fx.counters()).token, { authorization_code: 0, refresh_token: 0 });
  });

  test("Sign in, Allow at the authorization server, back at /oauth/callback: the server becomes ready", async () => {
    const page = await signInFromThePanel();
    callbackUrl = page.url();
    await page.close();
    await stateIs("ready");
    await waitFor(async () => (await pillState()) === "ready", "the row ready");
    const c = await fx.counters();
    assert.equal(c.registrations, 1, "dynamic client registration");
    assert.equal(c.token.authorization_code, 1);
    const [registered] = await fx.clients();
    assert.equal(registered.token_endpoint_auth_method, "none");
    assert.ok(registered.grant_types.includes("refresh_token"));
    assert.ok(registered.redirect_uris.includes(`${gateway.httpBase}/oauth/callback`), JSON.stringify(registered.redirect_uris));
  });

  test("a tool called through tap mcp answers with the fixture's user", async () => {
    client = await mcpClientOverStdio(tapBin(), ["mcp", "--session", "sign-in"], gateway.env);
    const who = await callWhoami();
    assert.equal(who.sub, fx.subject);
    assert.equal(who.scope, fx.scope);
  });

  test("after the access token expired the next call still works: refreshed without the user", async () => {
    const before = await fx.counters();
    const issued = (await fx.tokens()).filter((t) => t.kind === "AccessToken").at(-1);
    // The token's own lifetime (the fixture's clock), not a readiness wait.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, issued.exp * 1000 - Date.now()) + 100));
    assert.equal((await callWhoami()).sub, fx.subject);
    const c = await fx.counters();
    assert.ok(c.token.refresh_token > before.token.refresh_token, JSON.stringify(c.token));
    assert.equal(c.token.authorization_code, before.token.authorization_code);
    assert.equal(c.authorizations.allowed, before.authorizations.allowed, "nobody pressed Allow again");
  });

  test("a forged callback and a replayed one are refused (400) and change nothing", async () => {
    for (const url of [`${gateway.httpBase}/oauth/callback?code=x&state=wrong`, callbackUrl]) {
      const res = await fetch(url);
      assert.equal(res.status, 400, url);
      assert.match(await res.text(), /Sign-in refused/);
    }
    assert.equal((await listed()).entry.state, "ready");
    assert.equal((await fx.counters()).tokenErrors.authorization_code ?? 0, 0, "the replayed code never reached the token endpoint");
  });

  test("the authorization server revoking the grant: the next call fails and the server needs sign-in again", async () => {
    assert.ok((await fx.revoke()).revokedGrants >= 1);
    const result = await client.callTool({ name: `${SERVER}__whoami`, arguments: {} }, undefined, { timeout: 20000 }).catch((e) => ({ isError: true, thrown: e }));
    assert.ok(result.isError, JSON.stringify(result));
    await stateIs("needsSignIn");
    await waitFor(async () => (await pillState()) === "needsSignIn", "the row needing sign-in again");
    assert.ok((await fx.counters()).tokenErrors.refresh_token >= 1, "the refresh was tried and refused");
  });

  test("signing in again, then Sign out: the token is revoked at the authorization server", async () => {
    const page = await signInFromThePanel();
    await page.close();
    await stateIs("ready");
    assert.equal((await callWhoami()).sub, fx.subject);
    const before = (await fx.counters()).revocations.total;
    await waitFor(async () => (await pillState()) === "ready", "the row ready");
    await signInSection().getByRole("button", { name: "Sign out" }).click();
    await panel.getByRole("button", { name: "Yes, sign out" }).click();
    await waitFor(async () => (await fx.counters()).revocations.total > before, "a revocation at the authorization server");
    await stateIs("needsSignIn");
  });

  test("no access or refresh token outside the secrets file: TAP_HOME, the gateway's output, tap mcp list, the page", async () => {
    const secrets = (await fx.tokens()).filter((t) => t.kind === "AccessToken" || t.kind === "RefreshToken").map((t) => t.value);
    assert.ok(secrets.length >= 4, `tokens issued: ${secrets.length}`);
    const places = [];
    const walk = (d) => {
      for (const name of readdirSync(d)) {
        const p = path.join(d, name);
        const st = statSync(p);
        if (st.isDirectory()) walk(p);
        else if (st.isFile() && name !== "secrets.json") places.push([p, readFileSync(p, "latin1")]);
      }
    };
    walk(gateway.tapHome);
    places.push(["the gateway's stdout", gateway.output.stdout], ["the gateway's stderr", gateway.output.stderr]);
    places.push(["tap mcp list --json", (await listed()).raw]);
    const info = await gateway.tap(["mcp", "get", SERVER, "--json"]);
    places.push(["tap mcp get --json", info.stdout + info.stderr]);
    await goTo(panel, "Servers");
    places.push(["the Servers page", await panel.content()]);
    for (const [where, text] of places) {
      for (const token of secrets) assert.ok(!text.includes(token), `${where} holds a token the fixture issued`);
    }
    const secretsFile = path.join(gateway.tapHome, "secrets.json");
    assert.equal(statSync(secretsFile).mode & 0o777, 0o600);
  });
});

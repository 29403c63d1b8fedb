// Proves the OAuth test fixture (fixture.mjs) is a real authorization server and a real
// protected MCP server, with a plain-Node OAuth client written here: discovery from the MCP
// server's 401 (RFC 9728, RFC 8414), dynamic client registration (RFC 7591) of a public client,
// the authorization code flow with PKCE S256 through the fixture's sign-in page (fetch and a
// cookie jar; the page's Allow button is a form POST) with a loopback redirect URI on another
// port than the registered one (RFC 8252), a token for the MCP server's URL (RFC 8707), the
// MCP tools called with it through the official SDK client, 401s without it, a refresh once
// it expired (accessTtl 2 s: the one wait here is the token's own lifetime), rotation and
// reuse detection, revocation (RFC 7009) that ends the refresh and the access token, the
// admin's revoke, Deny, a wrong PKCE verifier and an unknown resource.
//
// Run: npm install --prefix tests/mcp && node --test tests/mcp/oauth/smoke.test.mjs
// (OAUTH_TRACE=1 prints each hop of the sign-in; OAUTH_FIXTURE_DEBUG=1 the fixture's stderr.)

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startOAuthFixture } from "./start.mjs";

const REGISTERED_REDIRECT = "http://127.0.0.1:1/oauth/callback";
const USED_REDIRECT = "http://127.0.0.1:54321/oauth/callback"; // same loopback URI, another port

/** The cookies the authorization server sets, sent back on every request (one host here). */
class CookieJar {
  #cookies = new Map();
  take(res) {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attrs.some((a) => {
        const [k, v] = a.split("=").map((s) => s.trim());
        return (/^expires$/i.test(k) && Date.parse(v) <= Date.now()) || (/^max-age$/i.test(k) && Number(v) <= 0);
      });
      if (expired || value === "") this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
  }
  header() {
    return [...this.#cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }
}

const form = (params) => ({
  method: "POST",
  headers: { "Content-Type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams(params),
});

async function post(url, params) {
  const res = await fetch(url, form(params));
  return { status: res.status, body: await res.json() };
}

function pkce() {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

/**
 * Runs an authorization request in "the browser" (fetch, redirects followed by hand with a
 * cookie jar), presses `decision` on every sign-in page, and stops at the redirect to
 * `redirectUri`: { params (of that redirect), verifier, state, pages (sign-in pages seen) }.
 */
async function authorize(meta, clientId, { redirectUri = USED_REDIRECT, resource, scope = "mcp:tools", decision = "allow", challenge, jar = new CookieJar() } = {}) {
  const codes = pkce();
  const state = randomBytes(16).toString("base64url");
  const url = new URL(meta.authorization_endpoint);
  const query = { response_type: "code", client_id: clientId, redirect_uri: redirectUri, scope, state, code_challenge: challenge ?? codes.challenge, code_challenge_method: "S256" };
  if (resource) query.resource = resource;
  url.search = new URLSearchParams(query);
  let next = url.href;
  let init = { method: "GET" };
  let pages = 0;
  for (let hop = 0; hop < 12; hop++) {
    const res = await fetch(next, { ...init, redirect: "manual", headers: { ...init.headers, cookie: jar.header() } });
    jar.take(res);
    if (process.env.OAUTH_TRACE) console.error(init.method, next, res.status, res.headers.get("location"), res.headers.getSetCookie());
    if (res.status >= 300 && res.status < 400) {
      const location = new URL(res.headers.get("location"), next);
      if (`${location.origin}${location.pathname}` === redirectUri) {
        return { params: location.searchParams, verifier: codes.verifier, state, pages };
      }
      next = location.href;
      init = { method: "GET" };
      continue;
    }
    const html = await res.text();
    assert.equal(res.status, 200, `${next}: ${html}`);
    const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
    assert.ok(action, `a sign-in page with a form: ${html}`);
    assert.match(html, /<button[^>]*id="allow"[^>]*>Allow<\/button>/);
    pages += 1;
    next = new URL(action, next).href;
    init = form({ decision });
  }
  throw new Error("too many redirects");
}

/** Calls an MCP tool with the bearer token through the official SDK client. */
async function callTool(mcpUrl, token, name, args = {}) {
  const client = new Client({ name: "oauth-fixture-smoke", version: "0.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  try {
    return await client.callTool({ name, arguments: args });
  } finally {
    await client.close();
  }
}

/** An initialize POST to the MCP server, raw: { status, challenge (WWW-Authenticate), body }. */
async function rawInitialize(mcpUrl, token) {
  const res = await fetch(mcpUrl, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } } }),
  });
  return { status: res.status, challenge: res.headers.get("www-authenticate"), body: await res.text() };
}

/** Discovery the way an MCP client does it: the 401's resource_metadata, then the AS's RFC 8414 document. */
async function discover(mcpUrl) {
  const unauth = await rawInitialize(mcpUrl);
  const prmUrl = /resource_metadata="([^"]+)"/.exec(unauth.challenge)?.[1];
  const prm = await (await fetch(prmUrl)).json();
  const asMeta = await (await fetch(`${prm.authorization_servers[0]}/.well-known/oauth-authorization-server`)).json();
  return { unauth, prmUrl, prm, asMeta };
}

async function register(asMeta, extra = {}) {
  const res = await fetch(asMeta.registration_endpoint, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      client_name: "Tap gateway (smoke test)",
      redirect_uris: [REGISTERED_REDIRECT],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      ...extra,
    }),
  });
  const body = await res.json();
  assert.equal(res.status, 201, JSON.stringify(body));
  return body;
}

/** Sign-in through to tokens: { tokens (the token response), clientId }. */
async function signIn(fx, asMeta, clientId) {
  const { params, verifier, state } = await authorize(asMeta, clientId, { resource: fx.mcpUrl });
  assert.equal(params.get("state"), state);
  const code = params.get("code");
  assert.ok(code, `a code: ${params}`);
  const tokens = await post(asMeta.token_endpoint, {
    grant_type: "authorization_code",
    code,
    redirect_uri: USED_REDIRECT,
    client_id: clientId,
    code_verifier: verifier,
    resource: fx.mcpUrl,
  });
  assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
  return tokens.body;
}

const whoami = (result) => JSON.parse(result.content[0].text);

describe("the OAuth fixture, long-lived tokens", () => {
  let fx, disc, client;

  before(async () => {
    fx = await startOAuthFixture();
  });
  after(async () => {
    await fx?.stop();
    if (process.env.OAUTH_FIXTURE_DEBUG) console.error(fx?.output.stderr);
  });

  test("discovery: 401 with resource_metadata, RFC 9728 metadata naming the AS, RFC 8414 metadata", async () => {
    disc = await discover(fx.mcpUrl);
    assert.equal(disc.unauth.status, 401);
    assert.equal(disc.unauth.challenge, `Bearer resource_metadata="${fx.resourceMetadataUrl}", scope="mcp:tools"`);
    assert.deepEqual(disc.prm.authorization_servers, [fx.issuer]);
    assert.equal(disc.prm.resource, fx.mcpUrl);
    const root = await (await fetch(new URL("/.well-known/oauth-protected-resource", fx.mcpUrl))).json();
    assert.deepEqual(root, disc.prm);
    const m = disc.asMeta;
    assert.equal(m.issuer, fx.issuer);
    assert.deepEqual(m.code_challenge_methods_supported, ["S256"]);
    assert.deepEqual(m.response_types_supported, ["code"]);
    assert.ok(m.grant_types_supported.includes("refresh_token"));
    assert.ok(m.token_endpoint_auth_methods_supported.includes("none"));
    for (const k of ["authorization_endpoint", "token_endpoint", "registration_endpoint", "revocation_endpoint"]) assert.ok(m[k]?.startsWith(fx.issuer), k);
    const oidc = await (await fetch(`${fx.issuer}/.well-known/openid-configuration`)).json();
    assert.deepEqual(oidc, m, "the OpenID discovery document is the same");
  });

  test("dynamic client registration: a public client with a loopback redirect URI", async () => {
    client = await register(disc.asMeta);
    assert.equal(client.token_endpoint_auth_method, "none");
    assert.equal(client.client_secret, undefined);
    assert.deepEqual(client.redirect_uris, [REGISTERED_REDIRECT]);
    assert.equal((await fx.counters()).registrations, 1);
    assert.deepEqual((await fx.clients()).map((c) => c.client_id), [client.client_id]);
  });

  test("authorization code + PKCE on another loopback port gives a token for the MCP server; its tools answer with it", async () => {
    const { params, pages } = await authorize(disc.asMeta, client.client_id, { resource: fx.mcpUrl });
    assert.equal(pages, 1, "one sign-in page");
    assert.equal(params.get("iss"), fx.issuer, "RFC 9207 iss in the response");
    const tokens = await signIn(fx, disc.asMeta, client.client_id);
    assert.equal(tokens.token_type, "Bearer");
    assert.equal(tokens.expires_in, 3600);
    assert.equal(tokens.scope, "mcp:tools");
    assert.ok(tokens.refresh_token, "a refresh token without offline_access");

    const who = whoami(await callTool(fx.mcpUrl, tokens.access_token, "whoami"));
    assert.equal(who.sub, "test-user");
    assert.equal(who.client_id, client.client_id);
    assert.equal(who.scope, "mcp:tools");
    assert.deepEqual([who.aud].flat(), [fx.mcpUrl]);
    const echo = await callTool(fx.mcpUrl, tokens.access_token, "echo", { message: "hi" });
    assert.deepEqual(echo.content, [{ type: "text", text: "hi" }]);

    const forged = await rawInitialize(fx.mcpUrl, "not-a-token");
    assert.equal(forged.status, 401);
    assert.match(forged.challenge, /^Bearer error="invalid_token", error_description="[^"]+", resource_metadata="/);
    const refreshAsBearer = await rawInitialize(fx.mcpUrl, tokens.refresh_token);
    assert.equal(refreshAsBearer.status, 401, "a refresh token is no access token");

    const c = await fx.counters();
    assert.deepEqual(c.token, { authorization_code: 1, refresh_token: 0 });
    assert.equal(c.authorizations.allowed, 2);
    assert.equal(c.tokenErrors.authorization_code ?? 0, 0);
    assert.ok(c.mcp.authorized >= 2 && c.mcp.noToken === 1 && c.mcp.invalidToken === 2, JSON.stringify(c.mcp));
  });

  test("a second sign-in in the same browser shows the page again (no silent SSO)", async () => {
    const jar = new CookieJar();
    assert.equal((await authorize(disc.asMeta, client.client_id, { resource: fx.mcpUrl, jar })).pages, 1);
    assert.match(jar.header(), /_session=/, "signed in at the AS");
    const again = await authorize(disc.asMeta, client.client_id, { resource: fx.mcpUrl, jar });
    assert.equal(again.pages, 1);
    assert.ok(again.params.get("code"));
  });

  test("a token asked for without the resource is not for the MCP server: 401 invalid_token there", async () => {
    const { params, verifier } = await authorize(disc.asMeta, client.client_id, {});
    const tokens = await post(disc.asMeta.token_endpoint, { grant_type: "authorization_code", code: params.get("code"), redirect_uri: USED_REDIRECT, client_id: client.client_id, code_verifier: verifier });
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    const r = await rawInitialize(fx.mcpUrl, tokens.body.access_token);
    assert.equal(r.status, 401);
    assert.match(r.challenge, /error="invalid_token", error_description="the access token is not for /);
  });

  test("a registration as rmcp sends it (native, with scope) is accepted, and offline_access is no trouble", async () => {
    const native = await register(disc.asMeta, { application_type: "native", scope: "mcp:tools offline_access", redirect_uris: ["http://127.0.0.1:4000/oauth/callback"] });
    const { params, verifier } = await authorize(disc.asMeta, native.client_id, { resource: fx.mcpUrl, scope: "mcp:tools offline_access" });
    const tokens = await post(disc.asMeta.token_endpoint, { grant_type: "authorization_code", code: params.get("code"), redirect_uri: USED_REDIRECT, client_id: native.client_id, code_verifier: verifier, resource: fx.mcpUrl });
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    assert.ok(tokens.body.refresh_token);
    assert.equal(whoami(await callTool(fx.mcpUrl, tokens.body.access_token, "whoami")).client_id, native.client_id);
    await fx.revoke(native.client_id);
  });

  test("an unknown resource is refused (invalid_target)", async () => {
    const { params } = await authorize(disc.asMeta, client.client_id, { resource: "http://127.0.0.1:9/elsewhere" });
    assert.equal(params.get("error"), "invalid_target");
  });

  test("a wrong PKCE verifier is refused; a code is good once", async () => {
    const { params, verifier } = await authorize(disc.asMeta, client.client_id, { resource: fx.mcpUrl });
    const exchange = (codeVerifier) => post(disc.asMeta.token_endpoint, { grant_type: "authorization_code", code: params.get("code"), redirect_uri: USED_REDIRECT, client_id: client.client_id, code_verifier: codeVerifier });
    const wrong = await exchange(pkce().verifier);
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.error, "invalid_grant");
    const right = await exchange(verifier);
    assert.equal(right.status, 200, JSON.stringify(right.body));
    const replay = await exchange(verifier);
    assert.equal(replay.body.error, "invalid_grant", JSON.stringify(replay.body));
    assert.equal((await rawInitialize(fx.mcpUrl, right.body.access_token)).status, 401, "a replayed code revokes what it gave");
  });

  test("an authorization request without a code challenge is refused", async () => {
    const url = new URL(disc.asMeta.authorization_endpoint);
    url.search = new URLSearchParams({ response_type: "code", client_id: client.client_id, redirect_uri: USED_REDIRECT, scope: "mcp:tools", state: "s", resource: fx.mcpUrl });
    const res = await fetch(url, { redirect: "manual" });
    const location = new URL(res.headers.get("location"));
    assert.equal(location.searchParams.get("error"), "invalid_request");
    assert.match(location.searchParams.get("error_description"), /PKCE/);
  });

  test("a redirect URI on another host or path is refused", async () => {
    for (const redirectUri of ["http://127.0.0.2:54321/oauth/callback", "http://127.0.0.1:54321/other"]) {
      const url = new URL(disc.asMeta.authorization_endpoint);
      url.search = new URLSearchParams({ response_type: "code", client_id: client.client_id, redirect_uri: redirectUri, scope: "mcp:tools", state: "s", code_challenge: pkce().challenge, code_challenge_method: "S256", resource: fx.mcpUrl });
      const res = await fetch(url, { redirect: "manual" });
      assert.equal(res.status, 400, redirectUri);
      assert.match(await res.text(), /redirect_uri/);
    }
  });

  test("Deny sends the client back with access_denied", async () => {
    const { params } = await authorize(disc.asMeta, client.client_id, { resource: fx.mcpUrl, decision: "deny" });
    assert.equal(params.get("error"), "access_denied");
    assert.equal((await fx.counters()).authorizations.denied, 1);
  });

  test("sign-out: revoking the refresh token is counted and ends the refresh and the access token at once", async () => {
    const tokens = await signIn(fx, disc.asMeta, client.client_id);
    assert.equal(whoami(await callTool(fx.mcpUrl, tokens.access_token, "whoami")).sub, "test-user");
    const before = await fx.counters();
    const res = await fetch(disc.asMeta.revocation_endpoint, form({ token: tokens.refresh_token, token_type_hint: "refresh_token", client_id: client.client_id }));
    assert.equal(res.status, 200);
    const c = await fx.counters();
    assert.equal(c.revocations.total, before.revocations.total + 1);
    assert.equal(c.revocations.refresh_token, before.revocations.refresh_token + 1);
    const refresh = await post(disc.asMeta.token_endpoint, { grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: client.client_id });
    assert.equal(refresh.status, 400);
    assert.equal(refresh.body.error, "invalid_grant");
    assert.equal((await rawInitialize(fx.mcpUrl, tokens.access_token)).status, 401, "the grant went with it");
  });

  test("the admin's revoke ends a client's tokens at once and is not counted as a revocation", async () => {
    const tokens = await signIn(fx, disc.asMeta, client.client_id);
    assert.equal((await rawInitialize(fx.mcpUrl, tokens.access_token)).status, 200);
    const before = await fx.counters();
    assert.ok((await fx.revoke(client.client_id)).revokedGrants >= 1);
    assert.equal((await rawInitialize(fx.mcpUrl, tokens.access_token)).status, 401);
    const refresh = await post(disc.asMeta.token_endpoint, { grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: client.client_id });
    assert.equal(refresh.body.error, "invalid_grant");
    const c = await fx.counters();
    assert.deepEqual(c.revocations, before.revocations);
    assert.equal(c.tokenErrors.refresh_token, (before.tokenErrors.refresh_token ?? 0) + 1);
  });

  test("every issued token is in the admin's log", async () => {
    const tokens = await signIn(fx, disc.asMeta, client.client_id);
    const log = await fx.tokens();
    assert.ok(log.some((t) => t.kind === "AccessToken" && t.value === tokens.access_token && t.clientId === client.client_id));
    assert.ok(log.some((t) => t.kind === "RefreshToken" && t.value === tokens.refresh_token));
    await fx.revoke();
  });
});

describe("the OAuth fixture, 2 s access tokens", () => {
  let fx, disc, client;

  before(async () => {
    fx = await startOAuthFixture({ accessTtl: 2 });
    disc = await discover(fx.mcpUrl);
    client = await register(disc.asMeta);
  });
  after(async () => {
    await fx?.stop();
    if (process.env.OAUTH_FIXTURE_DEBUG) console.error(fx?.output.stderr);
  });

  test("an expired access token gets 401 invalid_token; the refresh token gets a new one (rotated) that works", async () => {
    const tokens = await signIn(fx, disc.asMeta, client.client_id);
    const received = Date.now();
    assert.equal(tokens.expires_in, 2);
    assert.equal(whoami(await callTool(fx.mcpUrl, tokens.access_token, "whoami")).sub, "test-user");
    // The token's own lifetime (whole seconds, from before it was received): the one wait here.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, received + tokens.expires_in * 1000 - Date.now())));
    const expired = await rawInitialize(fx.mcpUrl, tokens.access_token);
    assert.equal(expired.status, 401);
    assert.match(expired.challenge, /error="invalid_token"/);

    const refreshed = await post(disc.asMeta.token_endpoint, { grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: client.client_id });
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
    assert.notEqual(refreshed.body.access_token, tokens.access_token);
    assert.ok(refreshed.body.refresh_token && refreshed.body.refresh_token !== tokens.refresh_token, "rotated");
    const who = whoami(await callTool(fx.mcpUrl, refreshed.body.access_token, "whoami"));
    assert.equal(who.sub, "test-user");
    assert.deepEqual([who.aud].flat(), [fx.mcpUrl], "the granted resource, without naming it again");
    assert.deepEqual((await fx.counters()).token, { authorization_code: 1, refresh_token: 1 });

    // Presenting the spent refresh token again is reuse: refused, and the grant is revoked.
    const reuse = await post(disc.asMeta.token_endpoint, { grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: client.client_id });
    assert.equal(reuse.body.error, "invalid_grant");
    const after = await post(disc.asMeta.token_endpoint, { grant_type: "refresh_token", refresh_token: refreshed.body.refresh_token, client_id: client.client_id });
    assert.equal(after.body.error, "invalid_grant", "the rotated one went with the grant");
  });
});

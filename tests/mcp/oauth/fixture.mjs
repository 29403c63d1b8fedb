#!/usr/bin/env node
// TEST FIXTURE ONLY — never run this anywhere but a test machine.
//
// A real OAuth 2.1 authorization server and a real bearer-protected remote MCP server, both on
// 127.0.0.1 with ports chosen by the OS, for end-to-end tests of the gateway as an OAuth
// client of remote MCP servers. Three listeners:
//
//   issuer   http://127.0.0.1:A       the authorization server: npm oidc-provider (certified),
//                                      configured as below
//   mcpUrl   http://127.0.0.1:M/mcp   an MCP server (the official TypeScript SDK, Streamable
//                                      HTTP, stateful sessions) with the tools `whoami` and `echo`
//   adminUrl http://127.0.0.1:T       test-only admin endpoints (counters, issued tokens,
//                                      revoke everything)
//
// When all three listen it prints ONE line of JSON on stdout and nothing else ever goes to
// stdout (diagnostics go to stderr):
//
//   {"issuer":"http://127.0.0.1:A","mcpUrl":"http://127.0.0.1:M/mcp","adminUrl":"http://127.0.0.1:T",
//    "resourceMetadataUrl":"http://127.0.0.1:M/.well-known/oauth-protected-resource/mcp",
//    "authorizationServerMetadataUrl":"http://127.0.0.1:A/.well-known/oauth-authorization-server",
//    "subject":"test-user","scope":"mcp:tools","accessTtl":3600,"refreshTtl":86400,"rotateRefresh":true}
//
// Usage: node fixture.mjs [--access-ttl SECONDS] [--refresh-ttl SECONDS]
//                         [--rotate-refresh on|off] [--subject NAME] [--scope SCOPE]
//                         [--exit-on-stdin-close]
// OAUTH_FIXTURE_DEBUG=1 logs each sign-in page's prompt to stderr; refusals (invalid_grant,
// invalid_target, …) are always logged there with oidc-provider's detail.
// It stops on SIGTERM/SIGINT (and, with --exit-on-stdin-close, when its stdin closes, so a
// parent that dies without killing it does not leave it behind).
//
// The authorization server (oidc-provider 9, all state in memory):
// - authorization code flow only, PKCE required for every client (oidc-provider supports S256 only);
// - dynamic client registration (RFC 7591) at /reg, open (no initial access token). Register a
//   public client with token_endpoint_auth_method "none" and grant_types
//   ["authorization_code", "refresh_token"]: oidc-provider's (RFC 7591's) defaults are
//   client_secret_basic and authorization_code only, and a client not allowed refresh_token
//   gets no refresh token;
// - loopback redirect URIs match on any port (RFC 8252 §7.3): oidc-provider does it for
//   "application_type": "native"; this fixture extends it to "web" clients (the default) with
//   an http://127.0.0.1 / localhost / [::1] redirect URI, so a client registered with one port
//   may come back on another;
// - resource indicators (RFC 8707): the only resource is mcpUrl (anything else: invalid_target).
//   The authorization request must name it (`resource=mcpUrl`) for the token to be for the
//   MCP server (without it the token is the AS's own, and the MCP server answers 401); the
//   token request may repeat it or leave it out (the granted one is used);
// - access tokens are opaque and the MCP server checks them by token introspection (RFC 7662)
//   at the AS, as a confidential client of its own. Opaque rather than JWT so that a
//   revocation takes effect at the next MCP request: sign-out (revoking the refresh token
//   revokes the whole grant) and the admin's revoke make the access token inactive at once,
//   where a JWT would stay valid until it expires;
// - a refresh token is issued to every client allowed the refresh_token grant (no
//   offline_access scope needed). Refresh tokens ROTATE by default (each refresh returns a new
//   one and consumes the old; OAuth 2.1 for public clients); presenting a consumed one again
//   is refresh-token reuse, which oidc-provider answers with invalid_grant AND by revoking the
//   whole grant. --rotate-refresh off keeps the same refresh token;
// - revocation (RFC 7009) at /token/revocation, introspection at /token/introspection;
// - metadata: OpenID discovery at /.well-known/openid-configuration and the same document at
//   /.well-known/oauth-authorization-server (RFC 8414);
// - TTLs: --access-ttl (default 3600 s; e.g. 1 to see a refresh quickly), --refresh-ttl
//   (default 86400 s). An access token is expired once `--access-ttl` seconds have passed since
//   it was issued (oidc-provider counts whole seconds);
// - the sign-in page (/interaction/UID): no password; it always shows one page, "Sign in to the
//   Tap OAuth test server", naming the fixed user (--subject, default test-user), the client,
//   scope and resource, with two buttons, "Allow" (#allow) and "Deny" (#deny). Allow signs the
//   user in and grants what was asked for; Deny sends the client back error=access_denied. The
//   page is shown on EVERY authorization request, also when the browser still has a session
//   and a grant exists (no silent SSO), so a browser test always clicks exactly once.
//
// The MCP server (the resource server):
// - RFC 9728 metadata at /.well-known/oauth-protected-resource/mcp (and at
//   /.well-known/oauth-protected-resource): resource = mcpUrl, authorization_servers = [issuer],
//   scopes_supported = [--scope];
// - /mcp without a bearer token: 401, `WWW-Authenticate: Bearer resource_metadata="…", scope="…"`;
//   an unknown, expired or revoked token, a refresh token, or a token for another resource:
//   401 `Bearer error="invalid_token", error_description="…", resource_metadata="…"`; a token
//   without the scope: 403 error="insufficient_scope";
// - tools: `whoami` (the token's subject, client_id, scope, audience and expiry, as JSON text
//   and structuredContent) and `echo` ({message} back as text).
//
// Admin endpoints (TEST-ONLY, 127.0.0.1 only, no authentication; never in a product):
//   GET  /counters        {"token":{"authorization_code":N,"refresh_token":N},
//                          "tokenErrors":{"refresh_token":N,…}, "revocations":{"total":N,
//                          "refresh_token":N,"access_token":N,"unknown":N}, "registrations":N,
//                          "introspections":N, "authorizations":{"allowed":N,"denied":N},
//                          "adminRevokedGrants":N, "mcp":{"authorized":N,"noToken":N,
//                          "invalidToken":N,"insufficientScope":N}}
//   POST /counters/reset  sets them all to 0
//   GET  /tokens          every access token, refresh token and authorization code issued, in
//                          order: [{"kind":"AccessToken","value":"…","clientId":"…",
//                          "grantId":"…","iat":N,"exp":N}, …] (to grep logs and files for them)
//   GET  /clients         the registered clients' metadata
//   POST /revoke[?client_id=ID]  revokes every grant (of that client, or of all clients): their
//                          access tokens, refresh tokens and codes stop working at once.
//                          Answers {"revokedGrants":N}. Not counted as a revocation.

import { createServer } from "node:http";
import { generateKeyPairSync, randomBytes, randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import Provider, { errors } from "oidc-provider";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

const HOST = "127.0.0.1";
const RS_CLIENT_ID = "tap-test-mcp-resource-server"; // the MCP server's own client, for introspection only

// ---------------------------------------------------------------- options

const { values: opts } = parseArgs({
  options: {
    "access-ttl": { type: "string", default: "3600" },
    "refresh-ttl": { type: "string", default: "86400" },
    "rotate-refresh": { type: "string", default: "on" },
    subject: { type: "string", default: "test-user" },
    scope: { type: "string", default: "mcp:tools" },
    "exit-on-stdin-close": { type: "boolean", default: false },
  },
  strict: true,
});
const seconds = (name) => {
  const n = Number(opts[name]);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a whole number of seconds ≥ 1, not ${opts[name]}`);
  return n;
};
const accessTtl = seconds("access-ttl");
const refreshTtl = seconds("refresh-ttl");
if (!["on", "off"].includes(opts["rotate-refresh"])) throw new Error("--rotate-refresh is on or off");
const rotateRefresh = opts["rotate-refresh"] === "on";
const subject = opts.subject;
const resourceScope = opts.scope;
if (!/^[\x21\x23-\x5B\x5D-\x7E]+$/.test(resourceScope)) throw new Error("--scope is one scope token");

const log = (...args) => console.error("[oauth-fixture]", ...args);

// ---------------------------------------------------------------- test-only state

const counters = freshCounters();
function freshCounters() {
  return {
    token: { authorization_code: 0, refresh_token: 0 },
    tokenErrors: {},
    revocations: { total: 0, refresh_token: 0, access_token: 0, unknown: 0 },
    registrations: 0,
    introspections: 0,
    authorizations: { allowed: 0, denied: 0 },
    adminRevokedGrants: 0,
    mcp: { authorized: 0, noToken: 0, invalidToken: 0, insufficientScope: 0 },
  };
}
const bump = (obj, key) => (obj[key] = (obj[key] ?? 0) + 1);
/** Every access token, refresh token and authorization code issued, in order. */
const issued = [];

/**
 * oidc-provider's storage: one Map for all models, kept whole (no eviction; a test's run is
 * short), so the admin endpoints can list and revoke.
 */
const store = new Map();
class Adapter {
  constructor(model) {
    this.model = model;
  }
  key(id) {
    return `${this.model}:${id}`;
  }
  async upsert(id, payload, expiresIn) {
    store.set(this.key(id), { ...payload });
    if (["AccessToken", "RefreshToken", "AuthorizationCode"].includes(this.model)) {
      // Opaque tokens: the stored id is the token's value.
      issued.push({ kind: this.model, value: id, clientId: payload.clientId, grantId: payload.grantId, iat: payload.iat, exp: payload.exp });
    }
  }
  async find(id) {
    return store.get(this.key(id));
  }
  async findByUserCode(userCode) {
    for (const [k, v] of store) if (k.startsWith(`${this.model}:`) && v.userCode === userCode) return v;
    return undefined;
  }
  async findByUid(uid) {
    for (const [k, v] of store) if (k.startsWith(`${this.model}:`) && v.uid === uid) return v;
    return undefined;
  }
  async consume(id) {
    const v = store.get(this.key(id));
    if (v) v.consumed = Math.floor(Date.now() / 1000);
  }
  async destroy(id) {
    store.delete(this.key(id));
  }
  async revokeByGrantId(grantId) {
    for (const [k, v] of store) if (k.startsWith(`${this.model}:`) && v.grantId === grantId) store.delete(k);
  }
}

/** Removes grants (all, or one client's) and every token of theirs. */
function revokeGrants(clientId) {
  const grantIds = [];
  for (const [k, v] of store) {
    if (k.startsWith("Grant:") && (!clientId || v.clientId === clientId)) grantIds.push(k.slice("Grant:".length));
  }
  const doomed = new Set(grantIds);
  for (const [k, v] of store) {
    if (doomed.has(v.grantId) || (k.startsWith("Grant:") && doomed.has(k.slice("Grant:".length)))) store.delete(k);
  }
  counters.adminRevokedGrants += grantIds.length;
  return grantIds.length;
}

// ---------------------------------------------------------------- helpers

const listen = (server) => new Promise((resolve, reject) => {
  server.once("error", reject);
  server.listen(0, HOST, () => resolve(server.address().port));
});

async function readBody(req, limit = 1 << 20) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > limit) throw Object.assign(new Error("body too large"), { status: 413 });
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function sendJson(res, status, body, headers = {}) {
  res.writeHead(status, { "Content-Type": "application/json", "Cache-Control": "no-store", ...headers });
  res.end(JSON.stringify(body));
}

const escapeHtml = (s) => String(s ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);

/** RFC 8252 §7.3: two loopback redirect URIs that differ only in their port match. */
function withoutLoopbackPort(uri) {
  let u;
  try {
    u = new URL(uri);
  } catch {
    return undefined;
  }
  if (u.protocol !== "http:" || !["127.0.0.1", "localhost", "[::1]"].includes(u.hostname)) return undefined;
  u.port = "";
  return u.href;
}

// ---------------------------------------------------------------- listeners

const asServer = createServer();
const mcpServer = createServer();
const adminServer = createServer();
const [asPort, mcpPort, adminPort] = await Promise.all([listen(asServer), listen(mcpServer), listen(adminServer)]);
const issuer = `http://${HOST}:${asPort}`;
const mcpOrigin = `http://${HOST}:${mcpPort}`;
const mcpUrl = `${mcpOrigin}/mcp`;
const resourceMetadataUrl = `${mcpOrigin}/.well-known/oauth-protected-resource/mcp`;
const adminUrl = `http://${HOST}:${adminPort}`;
const rsClientSecret = randomBytes(32).toString("base64url");

// ---------------------------------------------------------------- the authorization server

const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const provider = new Provider(issuer, {
  adapter: Adapter,
  clients: [
    {
      client_id: RS_CLIENT_ID,
      client_secret: rsClientSecret,
      grant_types: [],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: "client_secret_basic",
    },
  ],
  jwks: { keys: [{ ...privateKey.export({ format: "jwk" }), kid: "fixture", use: "sig", alg: "RS256" }] },
  cookies: { keys: [randomBytes(32).toString("base64url")] },
  findAccount: async (_ctx, accountId) => ({ accountId, claims: async () => ({ sub: accountId }) }),
  // --scope is the MCP server's (getResourceServerInfo), and an OP scope as well: clients send
  // it in their registration's `scope`, which must hold OP scopes only.
  scopes: ["openid", "offline_access", resourceScope],
  claims: { openid: ["sub"] },
  responseTypes: ["code"],
  pkce: { required: () => true },
  ttl: {
    AccessToken: accessTtl,
    RefreshToken: refreshTtl,
    AuthorizationCode: 60,
    Grant: refreshTtl,
    IdToken: 3600,
    Interaction: 600,
    Session: 3600,
  },
  issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed("refresh_token"),
  rotateRefreshToken: () => rotateRefresh,
  // Only the grant the sign-in page just made counts, never one left from an earlier sign-in:
  // every authorization request shows the page once (see the header).
  loadExistingGrant: async (ctx) => {
    const grantId = ctx.oidc.result?.consent?.grantId;
    return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
  },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  routes: {
    authorization: "/auth",
    token: "/token",
    registration: "/reg",
    revocation: "/token/revocation",
    introspection: "/token/introspection",
    jwks: "/jwks",
  },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    revocation: { enabled: true },
    introspection: {
      enabled: true,
      // The resource server may introspect any token; a client only its own.
      allowedPolicy: async (_ctx, client, token) => client.clientId === RS_CLIENT_ID || client.clientId === token.clientId,
    },
    resourceIndicators: {
      enabled: true,
      defaultResource: async (_ctx, _client, oneOf) => oneOf,
      useGrantedResource: async () => true,
      getResourceServerInfo: async (_ctx, resource) => {
        if (resource !== mcpUrl) throw new errors.InvalidTarget(`the only resource here is ${mcpUrl}`);
        return { scope: resourceScope, audience: mcpUrl, accessTokenFormat: "opaque", accessTokenTTL: accessTtl };
      },
    },
  },
});

// Any-port loopback redirect URIs for "web" clients too (oidc-provider does it for "native").
const redirectUriAllowed = provider.Client.prototype.redirectUriAllowed;
provider.Client.prototype.redirectUriAllowed = function (value) {
  if (redirectUriAllowed.call(this, value)) return true;
  const bare = withoutLoopbackPort(value);
  return bare !== undefined && this.redirectUris.some((allowed) => withoutLoopbackPort(allowed) === bare);
};

provider.on("server_error", (_ctx, err) => log("server_error", err));
// Why a request was refused (oidc-provider tells the client less), for whoever reads stderr.
for (const event of ["grant.error", "authorization.error", "revocation.error", "introspection.error", "registration_create.error"]) {
  provider.on(event, (ctx, err) => log(event, err.error, err.error_description, err.error_detail ?? "", err.cause?.message ?? ""));
}

// RFC 8414 metadata (the OpenID discovery document) and the counters.
provider.use(async (ctx, next) => {
  if (ctx.path === "/.well-known/oauth-authorization-server") ctx.path = "/.well-known/openid-configuration";
  await next();
  const route = ctx.oidc?.route;
  const ok = ctx.status >= 200 && ctx.status < 300;
  if (route === "token") {
    const grantType = ctx.oidc.params?.grant_type ?? "unknown";
    bump(ok ? counters.token : counters.tokenErrors, grantType);
  } else if (route === "revocation" && ok) {
    counters.revocations.total += 1;
    const { RefreshToken, AccessToken } = ctx.oidc.entities;
    bump(counters.revocations, RefreshToken ? "refresh_token" : AccessToken ? "access_token" : "unknown");
  } else if (route === "registration" && ok) {
    counters.registrations += 1;
  } else if (route === "introspection" && ok) {
    counters.introspections += 1;
  }
});

const providerCallback = provider.callback();

function interactionPage({ uid, client, params }) {
  const resource = [params.resource ?? []].flat().join(" ") || "(none)";
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Sign in — Tap OAuth test server</title>
<style>body{font-family:sans-serif;max-width:32em;margin:3em auto}button{font-size:1.1em;margin-right:1em}</style></head>
<body>
<h1>Sign in to the Tap OAuth test server</h1>
<p>Test fixture — signed in as <strong id="user">${escapeHtml(subject)}</strong> (no password).</p>
<p><strong id="client">${escapeHtml(client?.clientName ?? params.client_id)}</strong> asks for
scope <code id="scope">${escapeHtml(params.scope ?? "(none)")}</code> on <code id="resource">${escapeHtml(resource)}</code>.</p>
<form method="post" action="/interaction/${escapeHtml(uid)}">
<button type="submit" name="decision" value="allow" id="allow">Allow</button>
<button type="submit" name="decision" value="deny" id="deny">Deny</button>
</form>
</body>
</html>`;
}

async function interaction(req, res) {
  const details = await provider.interactionDetails(req, res); // throws without the interaction's cookie
  const { uid, params } = details;
  if (process.env.OAUTH_FIXTURE_DEBUG) log("interaction", req.method, JSON.stringify(details.prompt), JSON.stringify(params));
  if (req.method === "GET") {
    const client = await provider.Client.find(params.client_id);
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" });
    res.end(interactionPage({ uid, client, params }));
    return;
  }
  if (req.method !== "POST") {
    res.writeHead(405).end();
    return;
  }
  const form = new URLSearchParams(await readBody(req));
  if (form.get("decision") !== "allow") {
    counters.authorizations.denied += 1;
    await provider.interactionFinished(req, res, { error: "access_denied", error_description: "the test user pressed Deny" }, { mergeWithLastSubmission: false });
    return;
  }
  const requested = String(params.scope ?? "").split(" ").filter(Boolean);
  const grant = new provider.Grant({ accountId: subject, clientId: params.client_id });
  // Consent to every known scope asked for: as OP scopes (what the consent check compares) and
  // as the resource's (what its access token carries).
  const oidc = requested.filter((s) => ["openid", "offline_access", resourceScope].includes(s));
  if (oidc.length) grant.addOIDCScope(oidc.join(" "));
  const forResource = requested.filter((s) => s === resourceScope);
  for (const resource of [params.resource ?? []].flat()) {
    if (forResource.length) grant.addResourceScope(resource, forResource.join(" "));
  }
  const grantId = await grant.save();
  counters.authorizations.allowed += 1;
  await provider.interactionFinished(req, res, { login: { accountId: subject }, consent: { grantId } }, { mergeWithLastSubmission: false });
}

asServer.on("request", async (req, res) => {
  if (req.url.startsWith("/interaction/")) {
    try {
      await interaction(req, res);
    } catch (err) {
      log("interaction:", err.message);
      if (!res.headersSent) {
        res.writeHead(400, { "Content-Type": "text/html; charset=utf-8" });
        res.end(`<!doctype html><title>Error</title><h1>Sign-in error</h1><p>${escapeHtml(err.message)}</p>`);
      }
    }
    return;
  }
  providerCallback(req, res);
});

// ---------------------------------------------------------------- the MCP server

const resourceMetadata = {
  resource: mcpUrl,
  authorization_servers: [issuer],
  scopes_supported: [resourceScope],
  bearer_methods_supported: ["header"],
  resource_name: "Tap OAuth test MCP server",
};

/** The token's introspection, checked: { authInfo } or { status, error, description }. */
async function authenticate(req) {
  const header = req.headers.authorization ?? "";
  const m = /^Bearer +([\x21-\x7E]+) *$/i.exec(header);
  if (!m) return { status: 401 };
  const token = m[1];
  const r = await fetch(`${issuer}/token/introspection`, {
    method: "POST",
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      Authorization: `Basic ${Buffer.from(`${encodeURIComponent(RS_CLIENT_ID)}:${encodeURIComponent(rsClientSecret)}`).toString("base64")}`,
    },
    body: new URLSearchParams({ token, token_type_hint: "access_token" }),
  });
  if (!r.ok) throw new Error(`introspection answered ${r.status}: ${await r.text()}`);
  const info = await r.json();
  const invalid = (description) => ({ status: 401, error: "invalid_token", description });
  if (!info.active) return invalid("the access token is not active (unknown, expired or revoked)");
  if (info.token_type === undefined) return invalid("that is not an access token");
  const aud = [info.aud ?? []].flat();
  if (!aud.includes(mcpUrl)) return invalid(`the access token is not for ${mcpUrl} (its audience: ${aud.join(" ") || "none"})`);
  if (info.exp !== undefined && info.exp <= Math.floor(Date.now() / 1000)) return invalid("the access token expired");
  const scopes = String(info.scope ?? "").split(" ").filter(Boolean);
  if (!scopes.includes(resourceScope)) {
    return { status: 403, error: "insufficient_scope", description: `the access token lacks the scope ${resourceScope}` };
  }
  return { authInfo: { token, clientId: info.client_id, scopes, expiresAt: info.exp, resource: new URL(mcpUrl), extra: { sub: info.sub, aud } } };
}

function challenge({ error, description }) {
  const parts = [];
  if (error) parts.push(`error="${error}"`, `error_description="${description.replace(/["\\]/g, "")}"`);
  parts.push(`resource_metadata="${resourceMetadataUrl}"`, `scope="${resourceScope}"`);
  return `Bearer ${parts.join(", ")}`;
}

function buildMcpServer() {
  const server = new McpServer({ name: "tap-oauth-test-mcp", version: "1.0.0" });
  server.registerTool(
    "whoami",
    { description: "Who the bearer token says the caller is: subject, client, scope, audience, expiry", inputSchema: {} },
    async (_args, extra) => {
      const a = extra.authInfo;
      const who = { sub: a?.extra?.sub, client_id: a?.clientId, scope: a?.scopes?.join(" "), aud: a?.extra?.aud, exp: a?.expiresAt };
      return { content: [{ type: "text", text: JSON.stringify(who) }], structuredContent: who };
    },
  );
  server.registerTool(
    "echo",
    { description: "Echoes the message back", inputSchema: { message: z.string() } },
    async ({ message }) => ({ content: [{ type: "text", text: message }] }),
  );
  return server;
}

/** Live Streamable HTTP sessions by Mcp-Session-Id. */
const sessions = new Map();

async function mcpRequest(req, res) {
  const url = new URL(req.url, mcpOrigin);
  if (req.method === "GET" && ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"].includes(url.pathname)) {
    sendJson(res, 200, resourceMetadata);
    return;
  }
  if (url.pathname !== "/mcp") {
    sendJson(res, 404, { error: "not found" });
    return;
  }
  const auth = await authenticate(req);
  if (!auth.authInfo) {
    if (auth.status === 403) counters.mcp.insufficientScope += 1;
    else if (auth.error) counters.mcp.invalidToken += 1;
    else counters.mcp.noToken += 1;
    sendJson(res, auth.status, auth.error ? { error: auth.error, error_description: auth.description } : { error: "unauthorized", error_description: "a bearer token is required" }, {
      "WWW-Authenticate": challenge(auth),
    });
    return;
  }
  counters.mcp.authorized += 1;
  req.auth = auth.authInfo;

  const sessionId = req.headers["mcp-session-id"];
  if (req.method === "POST") {
    let body;
    try {
      body = JSON.parse(await readBody(req));
    } catch {
      sendJson(res, 400, { jsonrpc: "2.0", error: { code: -32700, message: "Parse error" }, id: null });
      return;
    }
    let transport = sessionId ? sessions.get(sessionId) : undefined;
    if (!transport) {
      if (sessionId) {
        sendJson(res, 404, { jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null });
        return;
      }
      if (!isInitializeRequest(body)) {
        sendJson(res, 400, { jsonrpc: "2.0", error: { code: -32000, message: "Bad Request: no session; initialize first" }, id: null });
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => sessions.set(id, transport),
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      await buildMcpServer().connect(transport);
    }
    await transport.handleRequest(req, res, body);
    return;
  }
  const transport = sessionId ? sessions.get(sessionId) : undefined;
  if (!transport) {
    sendJson(res, sessionId ? 404 : 400, { jsonrpc: "2.0", error: { code: -32000, message: "Bad Request: unknown or missing Mcp-Session-Id" }, id: null });
    return;
  }
  await transport.handleRequest(req, res);
}

mcpServer.on("request", (req, res) => {
  mcpRequest(req, res).catch((err) => {
    log("mcp:", err);
    if (!res.headersSent) sendJson(res, 500, { error: "server_error", error_description: err.message });
    else res.end();
  });
});

// ---------------------------------------------------------------- test-only admin endpoints

adminServer.on("request", (req, res) => {
  const url = new URL(req.url, adminUrl);
  const route = `${req.method} ${url.pathname}`;
  switch (route) {
    case "GET /counters":
      return sendJson(res, 200, counters);
    case "POST /counters/reset":
      Object.assign(counters, freshCounters());
      return sendJson(res, 200, counters);
    case "GET /tokens":
      return sendJson(res, 200, issued);
    case "GET /clients": {
      const clients = [...store].filter(([k]) => k.startsWith("Client:")).map(([, v]) => v);
      return sendJson(res, 200, clients);
    }
    case "POST /revoke":
      return sendJson(res, 200, { revokedGrants: revokeGrants(url.searchParams.get("client_id") ?? undefined) });
    default:
      return sendJson(res, 404, { error: `no ${route}; see fixture.mjs's header` });
  }
});

// ---------------------------------------------------------------- ready

function stop() {
  for (const s of [asServer, mcpServer, adminServer]) s.closeAllConnections?.();
  process.exit(0);
}
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
if (opts["exit-on-stdin-close"]) {
  process.stdin.on("end", stop).on("close", stop).resume();
}

process.stdout.write(
  `${JSON.stringify({
    issuer,
    mcpUrl,
    adminUrl,
    resourceMetadataUrl,
    authorizationServerMetadataUrl: `${issuer}/.well-known/oauth-authorization-server`,
    subject,
    scope: resourceScope,
    accessTtl,
    refreshTtl,
    rotateRefresh,
  })}\n`,
);

#!/usr/bin/env python3
"""oauth_server.py: a remote MCP server behind OAuth 2.1, with its own authorization server,
both from the PyPI `mcp` SDK (its `MCPServer` with `AuthSettings` and an
`OAuthAuthorizationServerProvider`: the SDK serves the metadata documents, dynamic client
registration, `/authorize`, `/token` with PKCE checks, `/revoke`, and answers unauthenticated
MCP requests with `401` and `WWW-Authenticate: Bearer resource_metadata=…`). This file holds
only the provider's storage, in memory.

On 127.0.0.1 with a port the OS picks; prints `PORT <n>` on stdout once it listens. The MCP
endpoint is `/mcp`; tokens are bound to it (RFC 8707 `resource`, checked).

`/authorize` approves at once (a test has no person to click): it redirects to the client's
`redirect_uri` with a code, as the official conformance suite's authorization server does.

Options:
- `--access-ttl SECONDS` (default 3600): access tokens expire after this long, so a test sees
  the gateway refresh them.

Test-only endpoints (no auth, loopback only):
- `POST /admin/revoke-refresh`: every token stops working (the user revoked the app).
- `POST /admin/expire-access`: every access token stops working (as if expired): the next
  request gets `401`, and a client that refreshes carries on.
- `GET /admin/stats`: `{"grants": {"authorization_code": n, "refresh_token": n},
  "revoked": n, "registered": n, "issued": [every access and refresh token issued]}`; the
  tokens are listed so a test can check that none leaks into a file, log or page.

Tools: `whoami` (the token's client id and scopes, as text) and `echo {message}`.
"""

import secrets
import socket
import sys
import time

import anyio
import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from starlette.responses import JSONResponse

SCOPE = "mcp"


class Provider:
    """The authorization server's state: clients, codes and tokens, in memory."""

    def __init__(self, access_ttl: int):
        self.access_ttl = access_ttl
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.stats = {"grants": {"authorization_code": 0, "refresh_token": 0}, "revoked": 0, "registered": 0, "issued": []}

    async def get_client(self, client_id):
        return self.clients.get(client_id)

    async def register_client(self, client_info):
        self.clients[client_info.client_id] = client_info
        self.stats["registered"] += 1

    async def authorize(self, client, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [SCOPE],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject="test-user",
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, authorization_code):
        code = self.codes.get(authorization_code)
        return code if code and code.client_id == client.client_id else None

    async def exchange_authorization_code(self, client, authorization_code: AuthorizationCode) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        self.stats["grants"]["authorization_code"] += 1
        return self._issue(client.client_id, authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(self, client, refresh_token):
        token = self.refresh.get(refresh_token)
        return token if token and token.client_id == client.client_id else None

    async def exchange_refresh_token(self, client, refresh_token: RefreshToken, scopes) -> OAuthToken:
        # Rotation: the used refresh token is gone, as OAuth 2.1 asks of public clients.
        self.refresh.pop(refresh_token.token, None)
        self.stats["grants"]["refresh_token"] += 1
        return self._issue(client.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token):
        access = self.access.get(token)
        if access is None or (access.expires_at is not None and access.expires_at < time.time()):
            return None
        return access

    async def revoke_token(self, token):
        self.stats["revoked"] += 1
        if isinstance(token, RefreshToken):
            self.refresh.pop(token.token, None)
            # Revoking the refresh token ends the grant: its access tokens go too.
            for key in [k for k, v in self.access.items() if v.client_id == token.client_id]:
                self.access.pop(key, None)
        else:
            self.access.pop(token.token, None)

    def _issue(self, client_id, scopes, resource) -> OAuthToken:
        access, refresh = f"at-{secrets.token_urlsafe(24)}", f"rt-{secrets.token_urlsafe(24)}"
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes,
            expires_at=int(time.time()) + self.access_ttl, resource=resource, subject="test-user",
        )
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource, subject="test-user")
        self.stats["issued"] += [access, refresh]
        return OAuthToken(access_token=access, expires_in=self.access_ttl, scope=" ".join(scopes), refresh_token=refresh)


def build(port: int, access_ttl: int):
    base = f"http://127.0.0.1:{port}"
    provider = Provider(access_ttl)
    server = MCPServer(
        "oauth-fixture",
        auth_server_provider=provider,
        auth=AuthSettings(
            issuer_url=base,
            resource_server_url=f"{base}/mcp",
            validate_token_resource=True,
            required_scopes=[SCOPE],
            client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=[SCOPE], default_scopes=[SCOPE]),
            revocation_options=RevocationOptions(enabled=True),
        ),
    )

    @server.tool()
    def whoami() -> str:
        """Who the bearer token belongs to."""
        token = get_access_token()
        return f"client {token.client_id} scopes {' '.join(token.scopes)}" if token else "anonymous"

    @server.tool()
    def echo(message: str) -> str:
        """Echoes the message."""
        return message

    @server.custom_route("/admin/revoke-refresh", methods=["POST"])
    async def revoke_refresh(_request):
        provider.refresh.clear()
        provider.access.clear()
        return JSONResponse({"ok": True})

    @server.custom_route("/admin/expire-access", methods=["POST"])
    async def expire_access(_request):
        provider.access.clear()
        return JSONResponse({"ok": True})

    @server.custom_route("/admin/stats", methods=["GET"])
    async def stats(_request):
        return JSONResponse(provider.stats)

    return PublicRevocation(server.streamable_http_app(host="127.0.0.1"))


class PublicRevocation:
    """The SDK's `/revoke` validates its form with `client_secret` as a required field (typed
    `str | None` without a default), so a public client's RFC 7009 request (`client_id`, no
    secret) gets 400. This adds an empty `client_secret` to such a request, and changes
    nothing else."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"] != "/revoke" or scope["method"] != "POST":
            return await self.app(scope, receive, send)
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if b"client_secret=" not in body:
            body += b"&client_secret="
        headers = [(k, v) for k, v in scope["headers"] if k != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        sent = False

        async def replay():
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        return await self.app(dict(scope, headers=headers), replay, send)


async def main(args):
    access_ttl = 3600
    if "--access-ttl" in args:
        access_ttl = int(args[args.index("--access-ttl") + 1])
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = build(port, access_ttl)
    print(f"PORT {port}", flush=True)
    config = uvicorn.Config(app, log_level="warning")
    await uvicorn.Server(config).serve(sockets=[sock])


if __name__ == "__main__":
    anyio.run(main, sys.argv[1:])

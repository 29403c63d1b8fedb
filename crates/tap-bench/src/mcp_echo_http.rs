//! `tap-bench mcp-echo-server --http [--bearer TOKEN]`: the echo server of `mcp_echo.rs`
//! over Streamable HTTP, the remote MCP server S10 calls (`s10.rs`).
//!
//! As small and fast as the stdio one: one thread (a current-thread tokio runtime), hyper's
//! HTTP/1.1 server, the same answers (`mcp_echo::answer`). It binds 127.0.0.1 on a port of
//! the kernel's choosing and prints `PORT n` on stdout; it exits when its stdin ends (the
//! bench holds it open), so it never outlives the bench.
//!
//! `POST /mcp`: one JSON-RPC message; a request is answered `200` with the response as
//! plain `application/json` (no SSE), `initialize` with an `Mcp-Session-Id`; anything else
//! (notifications, responses) `202`. `GET /mcp` is `405` (no server-initiated stream) and
//! `DELETE /mcp` `204`.
//!
//! `--bearer TOKEN`: every request to `/mcp` must carry `Authorization: Bearer TOKEN`, else
//! `401` with `WWW-Authenticate: Bearer resource_metadata=…`, and the server publishes what
//! an OAuth client's discovery reads before it uses a stored token (rmcp's
//! `initialize_from_store`): the protected resource metadata (RFC 9728) at
//! `/.well-known/oauth-protected-resource[/mcp]`, naming this server as its authorization
//! server, and that server's metadata (RFC 8414) at
//! `/.well-known/oauth-authorization-server`. Nothing issues tokens: the bench writes the
//! one the gateway would have stored after a sign-in (`s10_remote.rs`).
//!
//! `GET /bench/counts`: `{"posts", "calls", "refused", "connections"}` since start:
//! requests to `/mcp` answered (authorized, with `--bearer`), `tools/call`s among them,
//! `401`s, and TCP connections accepted. S10 checks with them that the signed-in path
//! really sends its token on every call, and shows how many connections a call costs.

use crate::mcp_echo;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use std::convert::Infallible;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::net::TcpListener;

/// The option that selects this mode.
pub const HTTP_OPTION: &str = "--http";
/// The option that requires a bearer token.
pub const BEARER_OPTION: &str = "--bearer";
/// The MCP endpoint's path.
pub const MCP_PATH: &str = "/mcp";
/// Where the counts are read.
pub const COUNTS_PATH: &str = "/bench/counts";
/// The session id every `initialize` gets (one client's state is all there is: none).
const SESSION: &str = "tap-bench-echo";

/// What the server counts (`GET /bench/counts`).
#[derive(Default)]
struct Counts {
    posts: AtomicU64,
    calls: AtomicU64,
    refused: AtomicU64,
    connections: AtomicU64,
}

struct Server {
    /// `Bearer TOKEN`, when one is required.
    bearer: Option<String>,
    /// `http://127.0.0.1:port`.
    origin: String,
    counts: Counts,
}

/// Serves until stdin ends. `args`: what follows `--http`.
pub fn main(args: &[String]) -> ExitCode {
    let bearer = match args {
        [] => None,
        [opt, token] if opt == BEARER_OPTION && !token.is_empty() => Some(token.clone()),
        _ => {
            eprintln!("usage: tap-bench mcp-echo-server {HTTP_OPTION} [{BEARER_OPTION} TOKEN]");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("mcp-echo-server: runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    // The bench holds stdin open: when it ends, so does the server.
    std::thread::spawn(|| {
        let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
        std::process::exit(0);
    });
    runtime.block_on(async {
        let listener = match TcpListener::bind("127.0.0.1:0").await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("mcp-echo-server: bind: {e}");
                return ExitCode::FAILURE;
            }
        };
        match listener.local_addr() {
            Ok(a) => println!("PORT {}", a.port()),
            Err(e) => {
                eprintln!("mcp-echo-server: {e}");
                return ExitCode::FAILURE;
            }
        }
        serve(listener, bearer).await;
        ExitCode::SUCCESS
    })
}

/// Accepts and serves connections on `listener` for good.
pub async fn serve(listener: TcpListener, bearer: Option<String>) {
    let port = listener.local_addr().map(|a| a.port()).unwrap_or_default();
    let server = Arc::new(Server {
        bearer: bearer.map(|t| format!("Bearer {t}")),
        origin: format!("http://127.0.0.1:{port}"),
        counts: Counts::default(),
    });
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            continue;
        };
        let _ = tcp.set_nodelay(true);
        server.counts.connections.fetch_add(1, Ordering::Relaxed);
        let server = server.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let server = server.clone();
                async move { Ok::<_, Infallible>(server.handle(req).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(tcp), service)
                .await;
        });
    }
}

fn reply(status: StatusCode, body: Bytes) -> Response<Full<Bytes>> {
    let mut res = Response::new(Full::new(body));
    *res.status_mut() = status;
    res
}

fn json_reply(value: &Value) -> Response<Full<Bytes>> {
    let mut res = reply(StatusCode::OK, Bytes::from(value.to_string()));
    res.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    res
}

impl Server {
    async fn handle(&self, req: Request<Incoming>) -> Response<Full<Bytes>> {
        let path = req.uri().path();
        if path == MCP_PATH {
            return self.mcp(req).await;
        }
        let c = &self.counts;
        match (req.method(), path, &self.bearer) {
            (&Method::GET, COUNTS_PATH, _) => json_reply(&json!({
                "posts": c.posts.load(Ordering::Relaxed),
                "calls": c.calls.load(Ordering::Relaxed),
                "refused": c.refused.load(Ordering::Relaxed),
                "connections": c.connections.load(Ordering::Relaxed),
            })),
            (&Method::GET, p, Some(_))
                if p.starts_with("/.well-known/oauth-protected-resource") =>
            {
                json_reply(&json!({
                    "resource": format!("{}{MCP_PATH}", self.origin),
                    "authorization_servers": [self.origin],
                    "bearer_methods_supported": ["header"],
                }))
            }
            (&Method::GET, "/.well-known/oauth-authorization-server", Some(_)) => {
                let o = &self.origin;
                json_reply(&json!({
                    "issuer": o,
                    "authorization_endpoint": format!("{o}/authorize"),
                    "token_endpoint": format!("{o}/token"),
                    "response_types_supported": ["code"],
                    "grant_types_supported": ["authorization_code", "refresh_token"],
                    "code_challenge_methods_supported": ["S256"],
                }))
            }
            _ => reply(StatusCode::NOT_FOUND, Bytes::new()),
        }
    }

    async fn mcp(&self, req: Request<Incoming>) -> Response<Full<Bytes>> {
        let c = &self.counts;
        if let Some(want) = &self.bearer {
            let given = req.headers().get(AUTHORIZATION).map(HeaderValue::as_bytes);
            if given != Some(want.as_bytes()) {
                c.refused.fetch_add(1, Ordering::Relaxed);
                let challenge = format!(
                    "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource{MCP_PATH}\"",
                    self.origin
                );
                let mut res = reply(StatusCode::UNAUTHORIZED, Bytes::new());
                if let Ok(v) = HeaderValue::from_str(&challenge) {
                    res.headers_mut().insert(WWW_AUTHENTICATE, v);
                }
                return res;
            }
        }
        match *req.method() {
            Method::POST => {}
            Method::DELETE => return reply(StatusCode::NO_CONTENT, Bytes::new()),
            _ => return reply(StatusCode::METHOD_NOT_ALLOWED, Bytes::new()),
        }
        c.posts.fetch_add(1, Ordering::Relaxed);
        let Ok(body) = req.into_body().collect().await else {
            return reply(StatusCode::BAD_REQUEST, Bytes::new());
        };
        let body = body.to_bytes();
        if mcp_echo::is_call(&body) {
            c.calls.fetch_add(1, Ordering::Relaxed);
        }
        let Some(answer) = mcp_echo::answer(&body) else {
            return reply(StatusCode::ACCEPTED, Bytes::new());
        };
        let initialize = answer["result"]["serverInfo"].is_object();
        let mut res = json_reply(&answer);
        if initialize {
            res.headers_mut()
                .insert("mcp-session-id", HeaderValue::from_static(SESSION));
        }
        res
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::McpHttp;
    use crate::s10_remote::get_json;

    async fn start(bearer: Option<&str>) -> std::net::SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(serve(listener, bearer.map(str::to_string)));
        addr
    }

    #[tokio::test]
    async fn answers_an_mcp_client_over_http_and_counts() {
        let addr = start(None).await;
        let mut c = McpHttp::connect_at(addr, "", MCP_PATH, false, false)
            .await
            .unwrap();
        let args = json!({"name": "echo", "arguments": {"text": "hi"}});
        let r = c.request("tools/call", args).await.unwrap();
        assert_eq!(r["content"][0]["text"], "hi");
        let counts = get_json(addr, COUNTS_PATH).await.unwrap();
        // initialize, notifications/initialized, tools/call.
        assert_eq!(counts["posts"], 3);
        assert_eq!(counts["calls"], 1);
        assert_eq!(counts["refused"], 0);
        // The client's connection and this GET's.
        assert_eq!(counts["connections"], 2);
    }

    #[tokio::test]
    async fn with_a_bearer_refuses_others_and_publishes_its_metadata() {
        let addr = start(Some("T")).await;
        let refused = McpHttp::connect_at(addr, "wrong", MCP_PATH, false, false).await;
        assert!(refused.err().unwrap().contains("HTTP 401"));
        let mut c = McpHttp::connect_at(addr, "T", MCP_PATH, false, false)
            .await
            .unwrap();
        let args = json!({"name": "echo", "arguments": {"text": "hi"}});
        c.request("tools/call", args).await.unwrap();
        let counts = get_json(addr, COUNTS_PATH).await.unwrap();
        assert_eq!(counts["posts"], 3);
        assert_eq!(counts["calls"], 1);
        assert_eq!(counts["refused"], 1);
        let origin = format!("http://{addr}");
        let prm = get_json(addr, "/.well-known/oauth-protected-resource/mcp")
            .await
            .unwrap();
        assert_eq!(prm["resource"], format!("{origin}/mcp"));
        assert_eq!(prm["authorization_servers"][0], origin);
        let asm = get_json(addr, "/.well-known/oauth-authorization-server")
            .await
            .unwrap();
        assert_eq!(asm["issuer"], origin);
        assert_eq!(asm["code_challenge_methods_supported"][0], "S256");
    }
}

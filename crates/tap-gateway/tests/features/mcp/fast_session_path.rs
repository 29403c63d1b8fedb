//! The endpoint's own answer to a plain `tools/call` of an `initialize`-generation session
//! (`mcp/fast_session.rs`) is rmcp's answer for that session, as one JSON body instead of an
//! SSE stream; a `notifications/cancelled` reaches it; a session rmcp closed is not served.
//! Raw HTTP, so each request says exactly which headers it has.

use super::{assert_served_by, session_id, traced};
use serde_json::{json, Value};
use tap_testkit::{tool, Provider, TestGateway, PATIENCE};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A raw client of one MCP session of the `initialize` generation on `/mcp/work`.
struct Session {
    id: String,
}

/// Which way a request should go: as a client sends it (the endpoint's, when plain), or
/// with an `Accept` parameter, which only rmcp judges.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Path {
    Endpoint,
    Rmcp,
}

/// Writes `body` on a connection of its own, which it returns for [`answer`].
async fn post(gw: &TestGateway, session: Option<&str>, path: Path, body: Value) -> TcpStream {
    let body = body.to_string();
    let accept = match path {
        Path::Endpoint => "application/json, text/event-stream",
        Path::Rmcp => "application/json;q=1, text/event-stream",
    };
    let session = session
        .map(|s| format!("Mcp-Session-Id: {s}\r\nMcp-Protocol-Version: 2025-11-25\r\n"))
        .unwrap_or_default();
    let addr = gw.handle.gateway().address();
    let head = format!(
        "POST /mcp/work HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Authorization: Bearer {}\r\nContent-Type: application/json\r\nAccept: {accept}\r\n\
         {session}Content-Length: {}\r\n\r\n",
        gw.handle.gateway().host_token(),
        body.len()
    );
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(body.as_bytes()).await.unwrap();
    s
}

/// `(status, content type, JSON-RPC message or null, head)` of the answer on `s`; an SSE
/// body gives the message of its `data:` line.
async fn answer(mut s: TcpStream) -> (u16, String, Value, String) {
    let mut raw = Vec::new();
    tokio::time::timeout(PATIENCE, s.read_to_end(&mut raw))
        .await
        .expect("an HTTP answer in time")
        .unwrap();
    let text = String::from_utf8_lossy(&raw).to_string();
    let (head, body) = text.split_once("\r\n\r\n").expect("a head and a body");
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let lower = head.to_ascii_lowercase();
    let kind = match () {
        _ if lower.contains("content-type: application/json") => "json",
        _ if lower.contains("content-type: text/event-stream") => "sse",
        _ => "other",
    };
    let message = body
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .chain(std::iter::once(body))
        .find_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .unwrap_or(Value::Null);
    (status, kind.to_string(), message, head.to_string())
}

impl Session {
    async fn open(gw: &TestGateway) -> Session {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}});
        let (status, _, _, head) = answer(post(gw, None, Path::Endpoint, init).await).await;
        assert_eq!(status, 200, "{head}");
        let id = head
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("mcp-session-id")
                    .then(|| v.trim().to_string())
            })
            .expect("an Mcp-Session-Id");
        let s = Session { id };
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let (status, ..) = answer(s.post(gw, Path::Endpoint, note).await).await;
        assert_eq!(status, 202);
        s
    }

    async fn post(&self, gw: &TestGateway, path: Path, body: Value) -> TcpStream {
        post(gw, Some(&self.id), path, body).await
    }

    /// Sends `tools/call` with `meta` in its `_meta`.
    async fn call(
        &self,
        gw: &TestGateway,
        path: Path,
        id: u64,
        tool: &str,
        args: Value,
        meta: Value,
    ) -> TcpStream {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                          "params": {"name": tool, "arguments": args, "_meta": meta}});
        self.post(gw, path, body).await
    }
}

/// Session "work" with provider "prov": `typed` (an integer `n`), `echo`, and `shell` behind
/// a deny rule for `push`.
async fn setup(gw: &TestGateway) -> (Session, Provider) {
    let s = Session::open(gw).await;
    // The session is registered on the handler's first use of it.
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    answer(s.post(gw, Path::Endpoint, list).await).await;
    let session = session_id(gw, "work").await;
    let typed = json!({"name": "typed", "description": "d", "parameters": {
        "type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}});
    let (p, _) = gw
        .bind(
            "prov",
            &session,
            json!({"tools": [typed, tool("echo"), tool("shell")],
                   "hooks": {"onPreToolUse": [
                       {"match": {"tool": "shell", "args": "push"}, "action": "deny",
                        "reason": "CI is red."}]}}),
        )
        .await;
    (s, p)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_plain_call_is_answered_as_rmcp_answers_it_in_one_json_body() {
    let gw = TestGateway::start().await;
    let (s, mut p) = setup(&gw).await;
    let mut id = 10;
    for (what, tool, args) in [
        ("unknown tool", "no_such_tool", json!({})),
        ("invalid arguments", "typed", json!({"n": "three"})),
        ("hook deny", "shell", json!({"command": "git push"})),
        ("built-in tool", "tap_stream_history", json!({})),
    ] {
        id += 1;
        let mut both = vec![];
        for path in [Path::Endpoint, Path::Rmcp] {
            let (status, kind, message, _) =
                answer(s.call(&gw, path, id, tool, args.clone(), json!({})).await).await;
            both.push((status, message));
            let want = if path == Path::Endpoint {
                "json"
            } else {
                "sse"
            };
            assert_eq!(kind, want, "{what} via {path:?}");
        }
        assert_eq!(both[0], both[1], "{what}");
    }
    // Older versions take only object structured content (rmcp moves the rest to text).
    for (what, reply) in [
        ("object", json!({"data": {"ok": true}})),
        ("string", json!({"data": "plain words"})),
        ("list", json!({"data": [1, 2]})),
        (
            "tool error",
            json!({"error": "disk full", "errorCode": "INTERNAL"}),
        ),
    ] {
        id += 1;
        let mut both = vec![];
        for path in [Path::Endpoint, Path::Rmcp] {
            let c = s.call(&gw, path, id, "echo", json!({}), json!({})).await;
            let call = p.expect_next("tool.call").await;
            let mut reply = reply.clone();
            reply["type"] = json!("tool.result");
            reply["id"] = call["id"].clone();
            p.send(reply).await;
            let (status, _, message, _) = answer(c).await;
            both.push((status, message));
        }
        assert_eq!(both[0], both[1], "{what}");
        assert_eq!(both[0].0, 200, "{what}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_span_says_which_path_served_a_sessions_call() {
    let gw = TestGateway::start().await;
    let (s, mut p) = setup(&gw).await;
    let cases = [
        (
            Path::Endpoint,
            json!({}),
            "endpoint",
            "3af7651916cd43dd8448eb211c80319c",
        ),
        (
            Path::Rmcp,
            json!({}),
            "rmcp",
            "4af7651916cd43dd8448eb211c80319c",
        ),
        // Progress needs rmcp's stream.
        (
            Path::Endpoint,
            json!({"progressToken": 7}),
            "rmcp",
            "5af7651916cd43dd8448eb211c80319c",
        ),
    ];
    for (i, (path, meta, _, trace)) in cases.iter().enumerate() {
        let meta = traced(meta, trace);
        let c = s
            .call(&gw, *path, 30 + i as u64, "echo", json!({}), meta)
            .await;
        let call = p.expect_next("tool.call").await;
        p.send(json!({"type": "tool.result", "id": call["id"], "data": "ok"}))
            .await;
        let (status, _, message, _) = answer(c).await;
        assert_eq!(
            (status, &message["result"]["content"][0]["text"]),
            (200, &json!("ok"))
        );
    }
    let served: Vec<_> = cases.iter().map(|c| (c.3, c.2)).collect();
    assert_served_by(&gw, &served).await;
}

/// The client stays connected and cancels with a notification, as MCP says it should: the
/// provider gets `tool.cancel`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notifications_cancelled_reaches_a_call_the_endpoint_serves() {
    let gw = TestGateway::start().await;
    let (s, mut p) = setup(&gw).await;
    let c = s
        .call(&gw, Path::Endpoint, 40, "echo", json!({}), json!({}))
        .await;
    let call = p.expect_next("tool.call").await;
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 40, "reason": "user stop"}});
    let (status, ..) = answer(s.post(&gw, Path::Endpoint, cancel).await).await;
    assert_eq!(status, 202);
    let cancelled = p.expect_next("tool.cancel").await;
    assert_eq!(cancelled["id"], call["id"]);
    let (status, _, message, _) = answer(c).await;
    assert_eq!(status, 200);
    let text = message["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("CANCELLED"), "{message}");
}

/// A session ended by `DELETE` is rmcp's to refuse (404), even for a call that would be
/// plain; a session id nobody issued likewise.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_or_unknown_session_is_refused_not_served() {
    let gw = TestGateway::start().await;
    let (s, _p) = setup(&gw).await;
    let addr = gw.handle.gateway().address();
    let delete = format!(
        "DELETE /mcp/work HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Authorization: Bearer {}\r\nMcp-Session-Id: {}\r\n\r\n",
        gw.handle.gateway().host_token(),
        s.id
    );
    let mut d = TcpStream::connect(addr).await.unwrap();
    d.write_all(delete.as_bytes()).await.unwrap();
    let (status, ..) = answer(d).await;
    assert!((200..300).contains(&status), "DELETE answered {status}");
    let (status, ..) = answer(
        s.call(&gw, Path::Endpoint, 50, "echo", json!({}), json!({}))
            .await,
    )
    .await;
    assert_eq!(status, 404);
    let stranger = Session {
        id: "not-a-session".into(),
    };
    let (status, ..) = answer(
        stranger
            .call(&gw, Path::Endpoint, 51, "echo", json!({}), json!({}))
            .await,
    )
    .await;
    assert_eq!(status, 404);
}

/// A JSON answer cannot be resumed: a client that goes away mid-call cancels it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_vanishes_mid_call_on_a_sessions_endpoint_path_cancels_it() {
    let gw = TestGateway::start().await;
    let (s, mut p) = setup(&gw).await;
    let c = s
        .call(&gw, Path::Endpoint, 60, "echo", json!({}), json!({}))
        .await;
    let call = p.expect_next("tool.call").await;
    drop(c);
    let cancel = p.expect_next("tool.cancel").await;
    assert_eq!(cancel["id"], call["id"]);
}

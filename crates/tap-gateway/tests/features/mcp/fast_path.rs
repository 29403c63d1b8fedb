//! The endpoint's own answer to a plain stateless `tools/call` (`mcp/fast.rs`) is rmcp's
//! answer: the same calls sent both ways get the same status and the same JSON-RPC message.
//! An `Accept` entry with a parameter is rmcp's to judge, so `;q=1` sends a call to rmcp
//! with nothing else changed; each call's span says which path served it (`mcp.path`).

use super::{assert_served_by, session_id, traced};
use serde_json::{json, Value};
use tap_testkit::{eventually, tool, Provider, TestGateway, PATIENCE};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[derive(Clone, Copy, Debug)]
enum Path {
    Endpoint,
    Rmcp,
}

/// Writes one stateless request (`params` gets the generation's `_meta`, plus `meta`) on a
/// connection of its own, which it returns for [`answer`].
async fn send(gw: &TestGateway, path: Path, id: u64, method: &str, params: Value) -> TcpStream {
    send_with(gw, path, id, method, params, json!({})).await
}

async fn send_with(
    gw: &TestGateway,
    path: Path,
    id: u64,
    method: &str,
    mut params: Value,
    meta: Value,
) -> TcpStream {
    let mut m = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                       "io.modelcontextprotocol/clientCapabilities": {}});
    for (k, v) in meta.as_object().unwrap() {
        m[k] = v.clone();
    }
    params["_meta"] = m;
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
    let accept = match path {
        Path::Endpoint => "application/json, text/event-stream",
        Path::Rmcp => "application/json;q=1, text/event-stream",
    };
    let name = params["name"]
        .as_str()
        .map(|n| format!("Mcp-Name: {n}\r\n"))
        .unwrap_or_default();
    let addr = gw.handle.gateway().address();
    let head = format!(
        "POST /mcp/work HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Authorization: Bearer {}\r\nContent-Type: application/json\r\nAccept: {accept}\r\n\
         Mcp-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n{name}\
         Content-Length: {}\r\n\r\n",
        gw.handle.gateway().host_token(),
        body.len()
    );
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(body.as_bytes()).await.unwrap();
    s
}

/// `(status, body)` of the answer on `s`.
async fn answer(mut s: TcpStream) -> (u16, Value) {
    let mut raw = Vec::new();
    tokio::time::timeout(PATIENCE, s.read_to_end(&mut raw))
        .await
        .expect("an HTTP answer in time")
        .unwrap();
    let text = String::from_utf8_lossy(&raw).to_string();
    let (head, body) = text.split_once("\r\n\r\n").expect("a head and a body");
    assert!(
        !head.to_ascii_lowercase().contains("chunked"),
        "a whole JSON body: {text}"
    );
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let body = serde_json::from_str(body).unwrap_or_else(|_| json!(body));
    (status, body)
}

async fn call(gw: &TestGateway, path: Path, id: u64, tool: &str, args: Value) -> (u16, Value) {
    answer(
        send(
            gw,
            path,
            id,
            "tools/call",
            json!({"name": tool, "arguments": args}),
        )
        .await,
    )
    .await
}

/// A call the provider answers with `reply` (its `id` filled in).
async fn answered(
    gw: &TestGateway,
    p: &mut Provider,
    path: Path,
    id: u64,
    tool: &str,
    reply: Value,
) -> (u16, Value) {
    let s = send(
        gw,
        path,
        id,
        "tools/call",
        json!({"name": tool, "arguments": {}}),
    )
    .await;
    let call = p.expect_next("tool.call").await;
    let mut reply = reply;
    reply["type"] = json!("tool.result");
    reply["id"] = call["id"].clone();
    p.send(reply).await;
    answer(s).await
}

/// The gateway's copy of a file result has a new name each call: masked for comparing.
fn mask_copies(v: &mut Value) {
    match v {
        Value::String(s) if s.starts_with("file://") => *s = "file://<copy>".into(),
        Value::Object(o) => {
            if o.get("type") == Some(&json!("resource_link")) {
                o.insert("name".into(), json!("<copy>"));
            }
            o.values_mut().for_each(mask_copies);
        }
        Value::Array(a) => a.iter_mut().for_each(mask_copies),
        _ => {}
    }
}

/// Session "work" (registered by a first request) with provider "prov": `typed` (an
/// integer `n`), `echo`, `shot`, and `shell` behind a deny rule for `push`.
async fn setup(gw: &TestGateway) -> (Provider, std::path::PathBuf) {
    call(gw, Path::Endpoint, 0, "tap_stream_history", json!({})).await;
    let session = session_id(gw, "work").await;
    let typed = json!({"name": "typed", "description": "d", "parameters": {
        "type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}});
    let (p, ack) = gw
        .bind(
            "prov",
            &session,
            json!({"tools": [typed, tool("echo"), tool("shot"), tool("shell")],
                   "hooks": {"onPreToolUse": [
                       {"match": {"tool": "shell", "args": "push"}, "action": "deny",
                        "reason": "CI is red."}]}}),
        )
        .await;
    eventually("the tools listed", || async {
        let s = send(gw, Path::Rmcp, 1, "tools/list", json!({})).await;
        let (_, list) = answer(s).await;
        let names = list["result"]["tools"].as_array()?.len();
        (names > 4).then_some(())
    })
    .await;
    let dir = std::path::PathBuf::from(ack["persistDir"].as_str().unwrap());
    (p, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_endpoints_answer_is_rmcps_answer() {
    let gw = TestGateway::start().await;
    let (mut p, dir) = setup(&gw).await;
    let mut id = 10;
    for (what, args, tool) in [
        ("unknown tool", json!({}), "no_such_tool"),
        ("invalid arguments", json!({"n": "three"}), "typed"),
        ("hook deny", json!({"command": "git push"}), "shell"),
        ("built-in tool", json!({}), "tap_stream_history"),
        (
            "built-in, bad arguments",
            json!({"last": 0}),
            "tap_stream_history",
        ),
    ] {
        id += 1;
        let fast = call(&gw, Path::Endpoint, id, tool, args.clone()).await;
        let rmcp = call(&gw, Path::Rmcp, id, tool, args).await;
        assert_eq!(fast, rmcp, "{what}");
    }
    let file = dir.join("notes.txt");
    for (what, reply) in [
        ("object", json!({"data": {"ok": true}})),
        ("string", json!({"data": "plain words"})),
        (
            "tool error",
            json!({"error": "disk full", "errorCode": "INTERNAL"}),
        ),
        (
            "file",
            json!({"file": {"path": file, "mimeType": "text/plain", "size": 9, "ttl": 60}}),
        ),
    ] {
        id += 1;
        let mut both = vec![];
        for path in [Path::Endpoint, Path::Rmcp] {
            std::fs::write(&file, "line one\n").unwrap();
            let mut a = answered(&gw, &mut p, path, id, "echo", reply.clone()).await;
            mask_copies(&mut a.1);
            both.push(a);
        }
        assert_eq!(both[0], both[1], "{what}");
        assert_eq!(both[0].0, 200, "{what}: {:?}", both[0]);
    }
    // The samples above are what they claim to be.
    let (_, unknown) = call(&gw, Path::Endpoint, 99, "no_such_tool", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    let (_, denied) = call(&gw, Path::Endpoint, 98, "shell", json!({"command": "push"})).await;
    assert_eq!(denied["result"]["isError"], true, "{denied}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_path_serves_the_calls_it_should_and_says_so_on_the_span() {
    let gw = TestGateway::start().await;
    let (mut p, _) = setup(&gw).await;
    let cases = [
        (
            Path::Endpoint,
            json!({}),
            "endpoint",
            "0af7651916cd43dd8448eb211c80319c",
        ),
        (
            Path::Rmcp,
            json!({}),
            "rmcp",
            "1af7651916cd43dd8448eb211c80319c",
        ),
        // Progress needs rmcp's stream.
        (
            Path::Endpoint,
            json!({"progressToken": 7}),
            "rmcp",
            "2af7651916cd43dd8448eb211c80319c",
        ),
    ];
    for (i, (path, meta, _, trace)) in cases.iter().enumerate() {
        let meta = traced(meta, trace);
        let params = json!({"name": "echo", "arguments": {}});
        let s = send_with(&gw, *path, i as u64, "tools/call", params, meta).await;
        let call = p.expect_next("tool.call").await;
        p.send(json!({"type": "tool.result", "id": call["id"], "data": "ok"}))
            .await;
        let (status, body) = answer(s).await;
        assert_eq!(
            (status, &body["result"]["content"][0]["text"]),
            (200, &json!("ok"))
        );
    }
    let served: Vec<_> = cases.iter().map(|c| (c.3, c.2)).collect();
    assert_served_by(&gw, &served).await;
}

/// The endpoint runs the call in the connection's task: a client that goes away drops it,
/// and the provider still gets `tool.cancel`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_vanishes_mid_call_on_the_endpoint_path_cancels_it() {
    let gw = TestGateway::start().await;
    let (mut p, _) = setup(&gw).await;
    let s = send(
        &gw,
        Path::Endpoint,
        5,
        "tools/call",
        json!({"name": "echo"}),
    )
    .await;
    let call = p.expect_next("tool.call").await;
    drop(s);
    let cancel = p.expect_next("tool.cancel").await;
    assert_eq!(cancel["id"], call["id"]);
    // The gateway serves on.
    let (status, _) = call_ok(&gw, &mut p).await;
    assert_eq!(status, 200);
}

async fn call_ok(gw: &TestGateway, p: &mut Provider) -> (u16, Value) {
    answered(gw, p, Path::Endpoint, 6, "echo", json!({"data": 1})).await
}

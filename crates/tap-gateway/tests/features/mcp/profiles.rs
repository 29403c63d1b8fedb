//! Profiles (`$TAP_HOME/profiles.json`): a client asking for a profile (`tap-profile`) gets a
//! session whose tools are that profile's. A hidden tool is not listed, and a hostile
//! client calling it anyway is refused with a reason naming the profile while the
//! provider gets nothing; other clients' sessions still see everything. A client asking
//! for another profile than its session's is refused, and so is an unknown profile.

use super::{session_id, text_of, url, wait_listed, MODES};
use serde_json::json;
use tap_testkit::{fence, tool, until_fence, McpClient, TestGateway};

fn write_profiles(gw: &TestGateway) {
    std::fs::write(
        gw.dir.path().join("home/profiles.json"),
        r#"{"profiles": {
             "review": {"providers": ["ci"], "hideTools": ["ci_rerun", "tap_*emitter*"]},
             "other": {}
           }}"#,
    )
    .unwrap();
}

/// A plain stateless `tools/call` (2026-07-28) on `/mcp/<session>` asking for `profile`:
/// the body of the answer.
async fn raw_call(gw: &TestGateway, session: &str, profile: &str, tool: &str) -> String {
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}});
    reqwest::Client::new()
        .post(url(gw, session))
        .bearer_auth(gw.handle.gateway().host_token())
        .header("tap-profile", profile)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool)
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": tool, "arguments": {}, "_meta": meta}}))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

async fn profiled(gw: &TestGateway, session: &str, mode: &str, profile: &str) -> McpClient {
    let token = gw.handle.gateway().host_token().to_string();
    let (c, _ready) =
        McpClient::python_http_profile(&url(gw, session), &token, mode, profile, gw.dir.path())
            .await;
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_profile_decides_what_a_session_sees_and_calls() {
    for mode in MODES {
        let gw = TestGateway::start().await;
        write_profiles(&gw);
        let mut c = profiled(&gw, "reviewer", mode, "review").await;
        c.tool_names().await;
        let session = session_id(&gw, "reviewer").await;
        let mut ci = gw
            .bound("ci", &session, json!([tool("ci_status"), tool("ci_rerun")]))
            .await;
        let mut browser = gw
            .bound("browser", &session, json!([tool("page_text")]))
            .await;
        let names = wait_listed(&mut c, "ci_status").await;
        assert!(
            !names.contains(&"ci_rerun".to_string()),
            "{mode}: {names:?}"
        );
        assert!(
            !names.contains(&"page_text".to_string()),
            "{mode}: {names:?}"
        );
        assert!(
            !names.contains(&"tap_start_emitter".to_string()),
            "{names:?}"
        );
        assert!(
            names.contains(&"tap_stream_history".to_string()),
            "{names:?}"
        );

        // Calling what the profile hides: refused (MCP's unknown-tool error), naming the
        // profile; nothing reaches the providers.
        for (id, hidden) in [("1", "ci_rerun"), ("2", "page_text")] {
            let r = c.call(id, hidden, json!({})).await;
            assert_eq!(r["op"], "error", "{mode}: {r}");
            assert!(
                r["message"]
                    .as_str()
                    .unwrap()
                    .contains("opened with profile 'review'"),
                "{mode}: {r}"
            );
        }
        fence(&mut ci).await;
        fence(&mut browser).await;

        // What it lets through works as usual.
        c.start_call("3", "ci_status", json!({}), false).await;
        let call = ci.expect_next("tool.call").await;
        assert_eq!(call["tool"], "ci_status");
        ci.send(json!({"type": "tool.result", "id": call["id"], "data": "green"}))
            .await;
        assert_eq!(text_of(&c.outcome("3").await), "green");

        // The same session with another profile is refused; without one, it is joined
        // (its tools stay the profile's).
        let refused = raw_call(&gw, "reviewer", "other", "ci_rerun").await;
        assert!(
            refused.contains("was opened with profile 'review'"),
            "{mode}: {refused}"
        );
        let seen = until_fence(&mut ci).await;
        assert!(seen.iter().all(|m| m["type"] != "tool.call"), "{seen:?}");

        // An unknown profile is refused with the ones there are.
        let unknown = raw_call(&gw, "elsewhere", "nope", "x").await;
        assert!(unknown.contains("no profile 'nope'"), "{mode}: {unknown}");
        assert!(unknown.contains("other, review"), "{mode}: {unknown}");
    }
}

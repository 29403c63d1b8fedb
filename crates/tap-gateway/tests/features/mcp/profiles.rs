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

/// A plain stateless `tools/call` (2026-07-28) on `/mcp/<session>` asking for `profile`,
/// with the host token: the body of the answer.
async fn raw_call(gw: &TestGateway, session: &str, profile: &str, tool: &str) -> String {
    let token = gw.handle.gateway().host_token().to_string();
    raw_call_with(gw, session, Some(profile), &token, tool)
        .await
        .1
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn profiles_list_what_each_lets_through_and_what_it_costs() {
    let gw = TestGateway::start().await;
    write_profiles(&gw);
    let gateway = gw.handle.gateway();
    let (host, session) = gw.host_with_session().await;
    let _ci = gw
        .bound(
            "ci",
            &session.id,
            json!([tool("ci_status"), tool("ci_rerun")]),
        )
        .await;
    let _browser = gw
        .bound("browser", &session.id, json!([tool("page_text")]))
        .await;

    let list = gateway.profiles_list();
    assert_eq!(list.tokenizer, "o200k_base");
    let names: Vec<&str> = list.tools.iter().map(|t| t.name.as_str()).collect();
    for want in ["ci_status", "ci_rerun", "page_text", "tap_stream_history"] {
        assert!(names.contains(&want), "{names:?}");
    }
    let rerun = list.tools.iter().find(|t| t.name == "ci_rerun").unwrap();
    assert_eq!(rerun.provider, "ci");
    assert!(rerun.tokens > 0 && rerun.bytes > rerun.tokens, "{rerun:?}");
    assert_eq!(
        list.tokens,
        list.tools.iter().map(|t| t.tokens).sum::<u32>()
    );

    let review = list.profiles.iter().find(|p| p.name == "review").unwrap();
    assert!(
        review.visible.contains(&"ci_status".to_string()),
        "{review:?}"
    );
    assert!(
        !review.visible.contains(&"ci_rerun".to_string()),
        "{review:?}"
    );
    assert!(
        !review.visible.contains(&"page_text".to_string()),
        "{review:?}"
    );
    let sum: u32 = list
        .tools
        .iter()
        .filter(|t| review.visible.contains(&t.name))
        .map(|t| t.tokens)
        .sum();
    assert_eq!(review.tokens, sum);
    assert!(review.tokens < list.tokens);
    let other = list.profiles.iter().find(|p| p.name == "other").unwrap();
    assert_eq!(
        other.tokens, list.tokens,
        "an empty profile sees everything"
    );

    // Editing: a new profile, checked; a bad one refused naming the key; removal.
    let def = tap_protocol::profiles::ProfileDef {
        tools: vec!["page_*".into()],
        ..Default::default()
    };
    let after = gateway
        .profiles_set(&tap_protocol::profiles::ProfileSet {
            name: "pages".into(),
            def,
        })
        .unwrap();
    let pages = after.profiles.iter().find(|p| p.name == "pages").unwrap();
    assert!(
        pages.visible.contains(&"page_text".to_string()),
        "{pages:?}"
    );
    assert!(
        !pages.visible.contains(&"ci_status".to_string()),
        "{pages:?}"
    );
    let bad = gateway
        .profiles_set(&tap_protocol::profiles::ProfileSet {
            name: "bad name".into(),
            def: Default::default(),
        })
        .unwrap_err();
    assert!(bad.message.contains("profile's name"), "{}", bad.message);
    gateway.profiles_remove("pages").unwrap();
    assert!(gateway.profiles_remove("pages").is_err());
    drop(host);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_token_holds_its_client_to_its_profile_until_revoked() {
    let gw = TestGateway::start().await;
    write_profiles(&gw);
    let gateway = gw.handle.gateway();
    let made = gateway
        .client_tokens_create(&tap_protocol::profiles::ClientTokenCreate {
            client: "cursor".into(),
            profile: Some("review".into()),
        })
        .unwrap();
    assert!(made.token.starts_with("mtk-"));
    let listed = gateway.client_tokens_list();
    assert_eq!(listed.tokens, vec![made.info.clone()]);
    let stored = std::fs::read_to_string(gw.dir.path().join("home/client-tokens.json")).unwrap();
    assert!(!stored.contains(&made.token), "only the hash is kept");

    // The client names no profile: its token's applies.
    let (mut c, _) =
        McpClient::python_http(&url(&gw, "cursor"), &made.token, "legacy", gw.dir.path()).await;
    c.tool_names().await;
    let session = session_id(&gw, "cursor").await;
    let _ci = gw
        .bound("ci", &session, json!([tool("ci_status"), tool("ci_rerun")]))
        .await;
    let names = wait_listed(&mut c, "ci_status").await;
    assert!(!names.contains(&"ci_rerun".to_string()), "{names:?}");

    // Asking for another profile with it is refused; so is a token that is not one.
    let other = raw_call_with(&gw, "cursor2", Some("other"), &made.token, "x").await;
    assert_eq!(other.0, 403, "{}", other.1);
    assert!(
        other.1.contains("holds it to profile 'review'"),
        "{}",
        other.1
    );
    let forged = raw_call_with(&gw, "cursor", None, "mtk-forged", "x").await;
    assert_eq!(forged.0, 401, "{}", forged.1);

    // Revoked: refused at the next request; a new gateway keeps what is left.
    gateway.client_tokens_revoke(&made.info.id).unwrap();
    let revoked = raw_call_with(&gw, "cursor", None, &made.token, "ci_status").await;
    assert_eq!(revoked.0, 401, "{}", revoked.1);
    assert!(gateway.client_tokens_revoke(&made.info.id).is_err());
    let bad = gateway
        .client_tokens_create(&tap_protocol::profiles::ClientTokenCreate {
            client: "x".into(),
            profile: Some("nope".into()),
        })
        .unwrap_err();
    assert!(bad.message.contains("no profile 'nope'"), "{}", bad.message);
}

/// As [`raw_call`] with `token` and an optional profile: the status and the body.
async fn raw_call_with(
    gw: &TestGateway,
    session: &str,
    profile: Option<&str>,
    token: &str,
    tool: &str,
) -> (u16, String) {
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}});
    let mut req = reqwest::Client::new()
        .post(url(gw, session))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool);
    if let Some(p) = profile {
        req = req.header("tap-profile", p);
    }
    let r = req
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": tool, "arguments": {}, "_meta": meta}}))
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_host_registers_a_session_with_a_profile() {
    let gw = TestGateway::start().await;
    write_profiles(&gw);
    let host = gw.host().await;
    let info = host
        .register_session(tap_protocol::host::SessionRegister {
            label: Some("copilot".into()),
            profile: Some("review".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut ci = gw
        .bound("ci", &info.id, json!([tool("ci_status"), tool("ci_rerun")]))
        .await;
    // The hidden tool is refused on the session-host path too; nothing reaches the provider.
    let refused = host.invoke(&info.id, "ci_rerun", json!({})).await.unwrap();
    let error = refused.error.unwrap();
    assert!(error.contains("profile 'review'"), "{error}");
    assert_eq!(refused.error_code, Some(tap_protocol::ErrorCode::NotFound));
    let seen = until_fence(&mut ci).await;
    assert!(seen.iter().all(|m| m["type"] != "tool.call"), "{seen:?}");

    let unknown = host
        .register_session(tap_protocol::host::SessionRegister {
            label: Some("x".into()),
            profile: Some("nope".into()),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert!(
        unknown.to_string().contains("no profile 'nope'"),
        "{unknown}"
    );
}

//! A profile with `"surface": "search"`: its clients list the gateway's own tools and
//! `tap_find_tools` + `tap_call_tool` instead of the profile's tools; the search finds only
//! what the profile lets through, and `tap_call_tool` calls through the same path as a
//! direct call (hook rules, the tool's schema, the profile's refusal). Driven by a real MCP
//! client (both generations) and a real session host, against hostile input: a query past
//! its limit, an unknown tool, a tool outside the profile, bad arguments, a call of itself.

use super::{session_id, text_of, url, MODES};
use serde_json::{json, Value};
use tap_testkit::{until_fence, McpClient, Provider, TestGateway};

fn write_profiles(gw: &TestGateway) {
    std::fs::write(
        gw.dir.path().join("home/profiles.json"),
        r#"{"profiles": {
             "lean": {"surface": "search", "providers": ["ci"], "hideTools": ["ci_rerun"]},
             "full": {"providers": ["ci"], "hideTools": ["ci_rerun"]}
           }}"#,
    )
    .unwrap();
}

fn ci_tools() -> Value {
    json!([
        {"name": "ci_status", "description": "Status of the CI pipeline of a branch.",
         "parameters": {"type": "object", "properties": {"branch": {"type": "string"}},
                        "required": ["branch"]}},
        {"name": "ci_rerun", "description": "Reruns the CI pipeline of a branch.",
         "parameters": {"type": "object", "properties": {}}},
        {"name": "ci_deploy", "description": "Deploys a branch.",
         "parameters": {"type": "object", "properties": {}}}
    ])
}

/// `ci` (with a rule denying `ci_deploy`) and `browser`, bound to `session`.
async fn providers(gw: &TestGateway, session: &str) -> (Provider, Provider) {
    let rules =
        json!([{"match": {"tool": "ci_deploy"}, "action": "deny", "reason": "No deploys."}]);
    let (ci, _) = gw
        .bind(
            "ci",
            session,
            json!({"tools": ci_tools(), "hooks": {"onPreToolUse": rules}}),
        )
        .await;
    let browser = gw
        .bound(
            "browser",
            session,
            json!([{"name": "page_text", "description": "Text of the CI status page.",
                    "parameters": {"type": "object", "properties": {}}}]),
        )
        .await;
    (ci, browser)
}

/// The JSON a successful `tap_find_tools` answered.
fn found(result: &Value) -> Value {
    assert_eq!(result["op"], "result", "{result}");
    assert_eq!(result["isError"], false, "{result}");
    serde_json::from_str(&text_of(result)).unwrap_or_else(|e| panic!("{e}: {result}"))
}

fn names(found: &Value) -> Vec<&str> {
    found["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

/// A failed call's text (`CODE: message`), as the model reads it.
fn failed(result: &Value) -> String {
    assert_eq!(result["op"], "result", "{result}");
    assert_eq!(result["isError"], true, "{result}");
    text_of(result)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_client_of_a_search_profile_finds_and_calls_only_its_tools() {
    for mode in MODES {
        let gw = TestGateway::start().await;
        write_profiles(&gw);
        let token = gw.handle.gateway().host_token().to_string();
        let (mut c, _) =
            McpClient::python_http_profile(&url(&gw, "lean"), &token, mode, "lean", gw.dir.path())
                .await;
        c.tool_names().await;
        let session = session_id(&gw, "lean").await;
        let (mut ci, mut browser) = providers(&gw, &session).await;

        // Listed: the gateway's own tools and the two search tools, none of the profile's.
        let listed = c.tool_names().await;
        for want in ["tap_find_tools", "tap_call_tool", "tap_stream_history"] {
            assert!(listed.contains(&want.to_string()), "{mode}: {listed:?}");
        }
        for not in ["ci_status", "ci_deploy", "ci_rerun", "page_text"] {
            assert!(!listed.contains(&not.to_string()), "{mode}: {listed:?}");
        }

        // Found: the profile's tool, with its schema; never what it hides or leaves out.
        let f = found(
            &c.call(
                "1",
                "tap_find_tools",
                json!({"query": "CI status of a branch"}),
            )
            .await,
        );
        assert_eq!(names(&f)[0], "ci_status", "{mode}: {f}");
        assert_eq!(
            f["tools"][0]["inputSchema"]["required"],
            json!(["branch"]),
            "{f}"
        );
        assert!(!names(&f).contains(&"ci_rerun"), "{mode}: {f}");
        assert!(!names(&f).contains(&"page_text"), "{mode}: {f}");
        let f = found(
            &c.call(
                "2",
                "tap_find_tools",
                json!({"query": "page text", "limit": 20}),
            )
            .await,
        );
        assert_eq!(f["matched"], 0, "{mode}: {f}");
        assert!(
            f["note"].as_str().unwrap().contains("No tool matched"),
            "{f}"
        );

        // Called through tap_call_tool: the provider gets the tool's own call.
        c.start_call(
            "3",
            "tap_call_tool",
            json!({"name": "ci_status", "arguments": {"branch": "main"}}),
            false,
        )
        .await;
        let call = ci.expect_next("tool.call").await;
        assert_eq!(
            (&call["tool"], &call["args"]),
            (&json!("ci_status"), &json!({"branch": "main"}))
        );
        ci.send(json!({"type": "tool.result", "id": call["id"], "data": "green"}))
            .await;
        assert_eq!(text_of(&c.outcome("3").await), "green", "{mode}");

        // Refused, each as a direct call would be, and nothing reaches a provider: a tool the
        // profile hides or leaves out, an unknown one, arguments its schema refuses, one a
        // hook rule denies, tap_call_tool's own bad arguments and a call of itself.
        let refusals = [
            (
                json!({"name": "ci_rerun"}),
                "NOT_FOUND",
                "opened with profile 'lean'",
            ),
            (
                json!({"name": "page_text"}),
                "NOT_FOUND",
                "opened with profile 'lean'",
            ),
            (json!({"name": "nope"}), "NOT_FOUND", "No tool 'nope'"),
            (
                json!({"name": "ci_status", "arguments": {"branch": 5}}),
                "INVALID_JSON",
                "branch",
            ),
            (json!({"name": "ci_deploy"}), "DENIED", "No deploys."),
            (
                json!({"name": "ci_status", "arguments": "main"}),
                "INVALID_JSON",
                "arguments",
            ),
            (
                json!({"tool": "ci_status"}),
                "INVALID_JSON",
                "'tool' was unexpected",
            ),
            (
                json!({"name": "tap_call_tool"}),
                "INVALID_JSON",
                "not itself",
            ),
        ];
        for (i, (args, code, says)) in refusals.into_iter().enumerate() {
            let text = failed(
                &c.call(&format!("r{i}"), "tap_call_tool", args.clone())
                    .await,
            );
            assert!(text.starts_with(code), "{mode} {args}: {text}");
            assert!(text.contains(says), "{mode} {args}: {text}");
        }
        // A query past its limit, and a limit past its own.
        let long = "ci ".repeat(200);
        let text = failed(&c.call("q1", "tap_find_tools", json!({"query": long})).await);
        assert!(text.starts_with("INVALID_JSON"), "{mode}: {text}");
        let text = failed(
            &c.call(
                "q2",
                "tap_find_tools",
                json!({"query": "ci", "limit": 1000}),
            )
            .await,
        );
        assert!(text.starts_with("INVALID_JSON"), "{mode}: {text}");
        for p in [&mut ci, &mut browser] {
            let seen = until_fence(p).await;
            assert!(
                seen.iter().all(|m| m["type"] != "tool.call"),
                "{mode}: {seen:?}"
            );
        }
        // A client that knows a tool's name may still call it directly: the surface
        // changes what is listed, not what the profile allows.
        c.start_call("4", "ci_status", json!({"branch": "dev"}), false)
            .await;
        let call = ci.expect_next("tool.call").await;
        ci.send(json!({"type": "tool.result", "id": call["id"], "data": "red"}))
            .await;
        assert_eq!(text_of(&c.outcome("4").await), "red", "{mode}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_host_session_of_a_search_profile_lists_and_calls_through_search() {
    let gw = TestGateway::start().await;
    write_profiles(&gw);
    let mut host = gw.host().await;
    let info = host
        .register_session(tap_protocol::host::SessionRegister {
            label: Some("copilot".into()),
            profile: Some("lean".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let (mut ci, mut browser) = providers(&gw, &info.id).await;

    // The published set: the gateway's own tools and the search tools only.
    let tools = loop {
        let e = tokio::time::timeout(tap_testkit::PATIENCE, host.next_event())
            .await
            .expect("no session.tools")
            .expect("host connection closed");
        if let tap_protocol::host::HostEvent::SessionTools(t) = e {
            if t.session_id == info.id && t.revision >= 1 {
                break t.tools;
            }
        }
    };
    let listed: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert!(
        listed.contains(&"tap_find_tools") && listed.contains(&"tap_call_tool"),
        "{listed:?}"
    );
    assert!(tools.iter().all(|t| t.provider == "tap"), "{listed:?}");

    let f = host
        .invoke(&info.id, "tap_find_tools", json!({"query": "deploy"}))
        .await
        .unwrap();
    let f = f.data.expect("found");
    assert_eq!(names(&f), ["ci_deploy"], "{f}");

    // The session host asks the precheck about tap_call_tool: the rule about the tool it
    // names answers.
    let d = host
        .precheck(&info.id, "tap_call_tool", json!({"name": "ci_deploy"}))
        .await
        .unwrap();
    assert_eq!(
        d.decision,
        tap_protocol::host::PrecheckDecision::Deny,
        "{d:?}"
    );
    assert_eq!(d.reason.as_deref(), Some("No deploys."));

    let (_, answer) = host
        .start_invoke(
            &info.id,
            "tap_call_tool",
            json!({"name": "ci_status", "arguments": {"branch": "main"}}),
        )
        .unwrap();
    let call = ci.expect_next("tool.call").await;
    assert_eq!(call["tool"], "ci_status");
    ci.send(json!({"type": "tool.result", "id": call["id"], "data": "green"}))
        .await;
    match answer.await.unwrap() {
        tap_protocol::host::HostEvent::ToolResult(r) => assert_eq!(r.data, Some(json!("green"))),
        other => panic!("{other:?}"),
    }

    for (args, code) in [
        (
            json!({"name": "ci_rerun"}),
            tap_protocol::ErrorCode::NotFound,
        ),
        (
            json!({"name": "page_text"}),
            tap_protocol::ErrorCode::NotFound,
        ),
        (
            json!({"name": "ci_status", "arguments": {}}),
            tap_protocol::ErrorCode::InvalidJson,
        ),
    ] {
        let r = host
            .invoke(&info.id, "tap_call_tool", args.clone())
            .await
            .unwrap();
        assert_eq!(r.error_code, Some(code.clone()), "{args}: {r:?}");
        if code == tap_protocol::ErrorCode::NotFound {
            assert!(r.error.unwrap().contains("profile 'lean'"), "{args}");
        }
    }
    let r = host
        .invoke(
            &info.id,
            "tap_find_tools",
            json!({"query": "x".repeat(501)}),
        )
        .await
        .unwrap();
    assert_eq!(
        r.error_code,
        Some(tap_protocol::ErrorCode::InvalidJson),
        "{r:?}"
    );
    for p in [&mut ci, &mut browser] {
        let seen = until_fence(p).await;
        assert!(seen.iter().all(|m| m["type"] != "tool.call"), "{seen:?}");
    }

    // profiles.list: a search profile costs what its clients list, and says what the
    // full list would cost; the per-tool figures stay.
    let list = gw.handle.gateway().profiles_list();
    let lean = list.profiles.iter().find(|p| p.name == "lean").unwrap();
    let full = list.profiles.iter().find(|p| p.name == "full").unwrap();
    assert_eq!(lean.visible, full.visible);
    assert_eq!(lean.full_tokens, Some(full.tokens));
    let own: u32 = list
        .tools
        .iter()
        .filter(|t| t.provider == "tap" && lean.visible.contains(&t.name))
        .map(|t| t.tokens)
        .sum();
    let search: u32 = list.search_tools.iter().map(|t| t.tokens).sum();
    assert_eq!(lean.tokens, own + search, "{lean:?}");
    assert_eq!(list.search_tools.len(), 2);
    assert!(full.full_tokens.is_none());
}

/// `MAX_FIND_RESULT_BYTES`: matches whose entries would pass it together are named in
/// `omitted`, not shown, so one huge schema cannot flood the model's context.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_find_answer_stays_within_its_byte_limit() {
    let gw = TestGateway::start().await;
    std::fs::write(
        gw.dir.path().join("home/profiles.json"),
        r#"{"profiles": {"wide": {"surface": "search"}}}"#,
    )
    .unwrap();
    let host = gw.host().await;
    let info = host
        .register_session(tap_protocol::host::SessionRegister {
            label: Some("wide".into()),
            profile: Some("wide".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    // Three tools matching "manual", each entry about 20 KiB: only one fits in 32 KiB.
    let huge = |name: &str| {
        json!({"name": name, "description": format!("The manual. {}", "x".repeat(20 * 1024)),
               "parameters": {"type": "object", "properties": {}}})
    };
    let _docs = gw
        .bound(
            "docs",
            &info.id,
            json!([huge("manual_a"), huge("manual_b"), huge("manual_c")]),
        )
        .await;
    let r = host
        .invoke(
            &info.id,
            "tap_find_tools",
            json!({"query": "manual", "limit": 3}),
        )
        .await
        .unwrap();
    let f = r.data.expect("found");
    assert_eq!(f["matched"], 3, "{}", f["omitted"]);
    assert_eq!(names(&f), ["manual_a"]);
    assert_eq!(f["omitted"], json!(["manual_b", "manual_c"]));
    assert!(f.to_string().len() < 32 * 1024 + 1024);
}

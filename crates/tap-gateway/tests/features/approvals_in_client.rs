//! Approvals answered in the MCP client (issue 39, `docs/approvals.md` "Answering in the
//! client"): a session whose profile says `approvalsInClient` gets the approval prompt as
//! an `elicitation/create` form in the real MCP client (PyPI `mcp`) that made the call,
//! while the tray/panel/CLI can answer it too. The provider is a real connection and sees
//! only the calls let through.

use super::mcp::{session_id, text_of, traced, url, wait_listed};
use serde_json::{json, Value};
use tap_testkit::{until_fence, Control, McpClient, Provider, TestGateway};

fn destructive(name: &str) -> Value {
    json!({"name": name, "description": "d", "annotations": {"destructiveHint": true},
           "parameters": {"type": "object"}})
}

fn write_profiles(gw: &TestGateway) {
    std::fs::write(
        gw.dir.path().join("home/profiles.json"),
        r#"{"profiles": {"asks": {"approvalsInClient": true}, "plain": {}}}"#,
    )
    .unwrap();
}

/// A client (eliciting or not) of session `session` with `profile`, and a provider `files`
/// bound there with the destructive tool `rm`, listed by the client.
async fn setup(
    gw: &TestGateway,
    session: &str,
    profile: &str,
    eliciting: bool,
) -> (McpClient, Provider) {
    let token = gw.handle.gateway().host_token().to_string();
    let (mut c, _) = match eliciting {
        true => {
            McpClient::python_http_eliciting(
                &url(gw, session),
                &token,
                Some(profile),
                gw.dir.path(),
            )
            .await
        }
        false => {
            McpClient::python_http_profile(
                &url(gw, session),
                &token,
                "legacy",
                profile,
                gw.dir.path(),
            )
            .await
        }
    };
    c.tool_names().await;
    let id = session_id(gw, session).await;
    // An instance per session: names are unique per instance.
    let tools = json!({"tools": [destructive("rm")], "instance": session});
    let (p, _) = gw.bind("files", &id, tools).await;
    wait_listed(&mut c, "rm").await;
    (c, p)
}

/// Starts call `id` of `rm` with `args` under trace `trace`, asking for progress.
async fn start(c: &mut McpClient, id: &str, trace: &str, args: Value) {
    let meta = traced(&json!({}), trace);
    c.send(
        json!({"op": "call", "id": id, "tool": "rm", "args": args, "progress": true,
                  "traceparent": meta["traceparent"]}),
    )
    .await;
}

async fn reply(c: &mut McpClient, action: &str, answer: Option<&str>) {
    let content = answer.map(|a| json!({"answer": a}));
    c.send(json!({"op": "elicit_answer", "action": action, "content": content}))
        .await;
}

/// The root span's attributes of trace `trace`.
async fn root_of(gw: &TestGateway, trace: &str) -> Value {
    gw.handle.gateway().flush_history().await;
    let (mut control, _) = Control::authed(gw).await;
    let spans = control.ok("traces.get", json!({"traceId": trace})).await;
    spans["spans"][0]["attributes"].clone()
}

/// The provider gets the call; answers "ran".
async fn runs(p: &mut Provider) {
    let call = p.expect_next("tool.call").await;
    assert_eq!(call["tool"], "rm");
    p.send(json!({"type": "tool.result", "id": call["id"], "data": "ran"}))
        .await;
}

const T1: &str = "0af7651916cd43dd8448eb211c80319c";
const T2: &str = "1af7651916cd43dd8448eb211c80319c";
const T3: &str = "2af7651916cd43dd8448eb211c80319c";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_approves_for_the_session_and_the_next_call_is_not_asked() {
    let gw = TestGateway::start().await;
    write_profiles(&gw);
    let (mut c, mut p) = setup(&gw, "work", "asks", true).await;
    let token = "ghp_abcdefghijklmnopqrstuvwxyz0123";
    start(
        &mut c,
        "1",
        T1,
        json!({"path": "/tmp/keep", "token": token}),
    )
    .await;
    let asked = c.expect("elicitation").await;
    // The form: the tool, its provider, the arguments masked, the approval's id and the
    // five answers.
    let message = asked["message"].as_str().unwrap();
    let waiting = gw.handle.gateway().approvals_list().waiting;
    assert_eq!(waiting.len(), 1, "{waiting:?}");
    for part in [
        "'rm'",
        "files",
        "/tmp/keep",
        "masked",
        waiting[0].id.as_str(),
    ] {
        assert!(message.contains(part), "{part} not in {message}");
    }
    assert!(!message.contains(token), "{message}");
    let choices: Vec<&str> = asked["schema"]["properties"]["answer"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["const"].as_str().unwrap())
        .collect();
    assert_eq!(choices, ["once", "session", "hour", "always", "deny"]);
    reply(&mut c, "accept", Some("session")).await;
    runs(&mut p).await;
    assert_eq!(text_of(&c.outcome("1").await), "ran");
    // Granted exactly as from the panel: a session grant, and the span says the client.
    let grants = gw.handle.gateway().approvals_grants().grants;
    assert_eq!(grants.len(), 1, "{grants:?}");
    assert_eq!(grants[0].tool, "rm");
    assert!(grants[0].session.is_some(), "{grants:?}");
    let root = root_of(&gw, T1).await;
    assert_eq!(root["approval.by"], "client", "{root}");
    assert_eq!(root["approval.decision"], "allow", "{root}");
    // The next call of the session goes through without asking anyone.
    start(&mut c, "2", T2, json!({})).await;
    runs(&mut p).await;
    assert_eq!(text_of(&c.outcome("2").await), "ran");
    assert_eq!(root_of(&gw, T2).await["approval.by"], "grant");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decline_denies_and_a_dismissal_leaves_the_call_to_the_tray() {
    let gw = TestGateway::start().await;
    write_profiles(&gw);
    let (mut c, mut p) = setup(&gw, "work", "asks", true).await;

    // Declined: DENIED, and the provider never hears of it.
    start(&mut c, "1", T1, json!({})).await;
    c.expect("elicitation").await;
    reply(&mut c, "decline", None).await;
    let denied = c.outcome("1").await;
    assert_eq!(denied["isError"], true, "{denied}");
    assert!(text_of(&denied).contains("denied"), "{denied}");
    let seen = until_fence(&mut p).await;
    assert!(seen.iter().all(|m| m["type"] != "tool.call"), "{seen:?}");
    assert_eq!(root_of(&gw, T1).await["approval.by"], "client");
    assert!(gw.handle.gateway().approvals_grants().grants.is_empty());

    // Dismissed: the call still waits, its progress says so, and the control plane's
    // approvals.approve (what `tap approvals approve` sends) finishes it.
    start(&mut c, "2", T2, json!({})).await;
    c.expect("elicitation").await;
    reply(&mut c, "cancel", None).await;
    let note = loop {
        let progress = c.expect("progress").await;
        let m = progress["message"].as_str().unwrap_or_default().to_string();
        if m.contains("dismissed") {
            break m;
        }
    };
    assert!(note.contains("still waits"), "{note}");
    let waiting = gw.handle.gateway().approvals_list().waiting;
    assert_eq!(waiting.len(), 1, "{waiting:?}");
    let seen = until_fence(&mut p).await;
    assert!(seen.iter().all(|m| m["type"] != "tool.call"), "{seen:?}");
    let (mut control, _) = Control::authed(&gw).await;
    control
        .ok(
            "approvals.approve",
            json!({"id": waiting[0].id, "for": "call"}),
        )
        .await;
    runs(&mut p).await;
    assert_eq!(text_of(&c.outcome("2").await), "ran");
    assert_eq!(root_of(&gw, T2).await["approval.by"], "user");

    // A client that never answers: the call is denied when the approval timeout ends (set
    // to 2 s here), never reaching the provider.
    std::fs::write(
        gw.dir.path().join("home/policy.json"),
        r#"{"rules": [], "approvalTimeoutSecs": 2}"#,
    )
    .unwrap();
    assert_eq!(gw.handle.gateway().policy_list().approval_timeout_secs, 2);
    start(&mut c, "3", T3, json!({})).await;
    c.expect("elicitation").await;
    let timed_out = c.outcome("3").await;
    assert_eq!(timed_out["isError"], true, "{timed_out}");
    assert!(
        text_of(&timed_out).contains("did not approve"),
        "{timed_out}"
    );
    let seen = until_fence(&mut p).await;
    assert!(seen.iter().all(|m| m["type"] != "tool.call"), "{seen:?}");
    let root = root_of(&gw, T3).await;
    assert_eq!(root["approval.by"], "timeout", "{root}");
    // Its late answer finds nothing to answer, and nothing reaches the provider.
    reply(&mut c, "accept", Some("always")).await;
    let seen = until_fence(&mut p).await;
    assert!(seen.iter().all(|m| m["type"] != "tool.call"), "{seen:?}");
    assert!(gw.handle.gateway().approvals_grants().grants.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_setting_or_the_capability_the_client_is_never_asked() {
    let gw = TestGateway::start().await;
    write_profiles(&gw);
    // An eliciting client whose profile does not say approvalsInClient, and a client of a
    // profile that does which declared no elicitation.
    let (mut plain, mut p1) = setup(&gw, "plain", "plain", true).await;
    let (mut mute, mut p2) = setup(&gw, "mute", "asks", false).await;
    let mut events = gw.handle.gateway().subscribe();
    for (c, p, trace) in [(&mut plain, &mut p1, T1), (&mut mute, &mut p2, T2)] {
        start(c, "1", trace, json!({})).await;
        let w = loop {
            if let tap_gateway::GatewayEvent::ApprovalWaiting(w) = events.recv().await.unwrap() {
                break w;
            }
        };
        // The first progress says how to answer: by then an ask would have been sent.
        let progress = c.expect("progress").await;
        assert!(
            progress["message"]
                .as_str()
                .unwrap()
                .contains("tap approvals approve"),
            "{progress}"
        );
        gw.handle
            .gateway()
            .approvals_approve(&tap_protocol::approvals::ApprovalApprove {
                id: w.id.clone(),
                scope: tap_protocol::approvals::AnswerScope::Call,
                minutes: None,
                args_pattern: vec![],
            })
            .unwrap();
        runs(p).await;
        assert_eq!(text_of(&c.outcome("1").await), "ran");
        let root = root_of(&gw, trace).await;
        assert_eq!(root["approval.by"], "user", "{root}");
    }
    // Neither was asked (the eliciting one shows every request it gets).
    let spans = {
        gw.handle.gateway().flush_history().await;
        let (mut control, _) = Control::authed(&gw).await;
        control.ok("traces.get", json!({"traceId": T1})).await
    };
    assert!(
        !spans.to_string().contains("approval.client_asked"),
        "{spans}"
    );
    // The client prints a request when it gets it, before the call's result (same stream).
    assert_eq!(plain.held("elicitation"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tray_answers_first_and_the_clients_form_is_withdrawn() {
    let gw = TestGateway::start().await;
    write_profiles(&gw);
    let (mut c, mut p) = setup(&gw, "work", "asks", true).await;
    start(&mut c, "1", T1, json!({})).await;
    c.expect("elicitation").await;
    let waiting = gw.handle.gateway().approvals_list().waiting;
    assert_eq!(waiting.len(), 1, "{waiting:?}");
    gw.handle
        .gateway()
        .approvals_approve(&tap_protocol::approvals::ApprovalApprove {
            id: waiting[0].id.clone(),
            scope: tap_protocol::approvals::AnswerScope::Call,
            minutes: None,
            args_pattern: vec![],
        })
        .unwrap();
    // The client's pending elicitation/create is cancelled (notifications/cancelled), so
    // its dialog closes; the call goes through as the tray said.
    c.expect("elicitation_withdrawn").await;
    runs(&mut p).await;
    assert_eq!(text_of(&c.outcome("1").await), "ran");
    assert_eq!(root_of(&gw, T1).await["approval.by"], "user");
}

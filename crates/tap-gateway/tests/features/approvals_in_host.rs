//! Approvals answered in the session host (issue 39, `docs/approvals.md` "Answering in the
//! host"): a session whose profile says `approvalsInClient`, registered by a host that
//! declared a dialog (`capabilities.ui`), gets `approval.ask` for its waiting calls over a
//! real `/session` socket, while the tray/panel/CLI (here the façade the control plane
//! calls) can answer too. The provider is a real connection and sees only the calls let
//! through.

use serde_json::{json, Value};
use tap_client::HostClient;
use tap_gateway::GatewayEvent;
use tap_protocol::approvals::{AnswerScope, ApprovalApprove, WaitingCall};
use tap_protocol::host::{
    ApprovalAsk, HostApprovalAnswer, HostCapabilities, HostEvent, SessionRegister, UiCapabilities,
    WithdrawnOutcome,
};
use tap_testkit::*;

fn write_profiles(gw: &TestGateway) {
    std::fs::write(
        gw.dir.path().join("home/profiles.json"),
        r#"{"profiles": {"asks": {"approvalsInClient": true}, "plain": {}}}"#,
    )
    .unwrap();
}

fn dialog(confirm: bool, elicitation: bool) -> HostCapabilities {
    HostCapabilities {
        ui: UiCapabilities {
            confirm,
            elicitation,
        },
        ..Default::default()
    }
}

/// A session of `profile` on `host` with `capabilities`, and a provider bound there with
/// the destructive tool `rm`: `files` for the session labelled `work`, else `files-<label>`
/// (one provider name is one provider across sessions).
async fn session(
    gw: &TestGateway,
    host: &mut HostClient,
    label: &str,
    profile: &str,
    capabilities: Option<HostCapabilities>,
) -> (String, Provider) {
    let info = host
        .register_session(SessionRegister {
            label: Some(label.into()),
            profile: Some(profile.into()),
            capabilities,
            ..Default::default()
        })
        .await
        .unwrap();
    let rm = json!({"name": "rm", "description": "d", "annotations": {"destructiveHint": true},
                    "parameters": {"type": "object"}});
    let name = match label {
        "work" => "files".to_string(),
        other => format!("files-{other}"),
    };
    let p = gw.bound(&name, &info.id, json!([rm])).await;
    tools_published(host, &info.id, &["rm"]).await;
    (info.id, p)
}

fn traceparent(trace: &str) -> String {
    format!("00-{trace}-00f067aa0ba902b7-01")
}

/// Starts a call of `rm` under trace `trace`.
fn start(
    host: &HostClient,
    session: &str,
    trace: &str,
    args: Value,
) -> tokio::sync::oneshot::Receiver<HostEvent> {
    host.start_invoke_traced(session, "rm", args, Some(&traceparent(trace)))
        .unwrap()
        .1
}

async fn asked(host: &mut HostClient) -> ApprovalAsk {
    match next_host_event(host, |e| matches!(e, HostEvent::ApprovalAsk(_))).await {
        HostEvent::ApprovalAsk(a) => a,
        _ => unreachable!(),
    }
}

/// The root span's attributes of trace `trace`.
async fn root_of(gw: &TestGateway, trace: &str) -> Value {
    gw.handle.gateway().flush_history().await;
    let (mut control, _) = Control::authed(gw).await;
    let spans = control.ok("traces.get", json!({"traceId": trace})).await;
    spans["spans"][0]["attributes"].clone()
}

/// The provider gets the call; answers "ran".
async fn runs(p: &mut Provider, rx: tokio::sync::oneshot::Receiver<HostEvent>) {
    let call = p.expect_next("tool.call").await;
    assert_eq!(call["tool"], "rm");
    answer(p, &call, json!("ran")).await;
    assert_eq!(result_of(rx).await.data, Some(json!("ran")));
}

fn approve_once(id: &str) -> ApprovalApprove {
    ApprovalApprove {
        id: id.into(),
        scope: AnswerScope::Call,
        minutes: None,
        args_pattern: vec![],
    }
}

async fn next_waiting(events: &mut tokio::sync::broadcast::Receiver<GatewayEvent>) -> WaitingCall {
    tokio::time::timeout(PATIENCE, async {
        loop {
            if let GatewayEvent::ApprovalWaiting(c) = events.recv().await.unwrap() {
                return *c;
            }
        }
    })
    .await
    .expect("no call started waiting")
}

const T1: &str = "0af7651916cd43dd8448eb211c80319d";
const T2: &str = "1af7651916cd43dd8448eb211c80319d";
const T3: &str = "2af7651916cd43dd8448eb211c80319d";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_approves_for_the_session_and_the_next_call_is_not_asked() {
    let gw = TestGateway::start().await;
    write_profiles(&gw);
    let mut host = gw.host().await;
    let (s, mut p) = session(&gw, &mut host, "work", "asks", Some(dialog(false, true))).await;
    let token = "ghp_abcdefghijklmnopqrstuvwxyz0123";
    let rx = start(&host, &s, T1, json!({"path": "/tmp/keep", "token": token}));
    let ask = asked(&mut host).await;
    // What the MCP client's form shows, from the same function: tool, provider, the
    // arguments masked, the approval's id, and the five choices.
    let waiting = gw.handle.gateway().approvals_list().waiting;
    assert_eq!(waiting.len(), 1, "{waiting:?}");
    assert_eq!(ask.approval_id, waiting[0].id);
    assert_eq!(
        (
            ask.session_id.as_str(),
            ask.tool.as_str(),
            ask.provider.as_str()
        ),
        (s.as_str(), "rm", "files")
    );
    for part in [
        "'rm'",
        "files",
        "/tmp/keep",
        "masked",
        ask.approval_id.as_str(),
    ] {
        assert!(ask.message.contains(part), "{part} not in {}", ask.message);
    }
    assert!(
        !ask.message.contains(token) && !ask.args.contains(token),
        "{ask:?}"
    );
    assert!(
        ask.args.contains("/tmp/keep") && ask.args.contains("masked"),
        "{}",
        ask.args
    );
    let choices: Vec<&str> = ask.choices.iter().map(|c| c.value.as_str()).collect();
    assert_eq!(choices, ["once", "session", "hour", "always", "deny"]);
    host.answer_approval(&ask.approval_id, HostApprovalAnswer::Session)
        .unwrap();
    runs(&mut p, rx).await;
    // Granted as from the panel: a session grant; the span says the host answered.
    let grants = gw.handle.gateway().approvals_grants().grants;
    assert_eq!(grants.len(), 1, "{grants:?}");
    assert_eq!(grants[0].session.as_deref(), Some(s.as_str()));
    let root = root_of(&gw, T1).await;
    assert_eq!(root["approval.by"], "host", "{root}");
    assert_eq!(root["approval.decision"], "allow", "{root}");
    // The next call goes through unasked, and the host was never told to withdraw (its
    // own answer decided).
    let rx = start(&host, &s, T2, json!({}));
    runs(&mut p, rx).await;
    let seen = host_events_so_far(&mut host).await;
    assert!(
        !seen.iter().any(|e| matches!(
            e,
            HostEvent::ApprovalAsk(_) | HostEvent::ApprovalWithdrawn(_)
        )),
        "{seen:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_denies_and_the_provider_is_untouched() {
    let gw = TestGateway::start().await;
    write_profiles(&gw);
    let mut host = gw.host().await;
    // `confirm` alone is a dialog too.
    let (s, mut p) = session(&gw, &mut host, "work", "asks", Some(dialog(true, false))).await;
    let rx = start(&host, &s, T1, json!({}));
    let ask = asked(&mut host).await;
    host.answer_approval(&ask.approval_id, HostApprovalAnswer::Deny)
        .unwrap();
    let r = result_of(rx).await;
    assert_eq!(code(&r), Some("DENIED"), "{r:?}");
    assert!(r.error.unwrap().contains("denied"));
    let seen = until_fence(&mut p).await;
    assert!(seen.iter().all(|m| m["type"] != "tool.call"), "{seen:?}");
    assert!(gw.handle.gateway().approvals_grants().grants.is_empty());
    let root = root_of(&gw, T1).await;
    assert_eq!(root["approval.by"], "host", "{root}");
    assert_eq!(root["approval.decision"], "deny", "{root}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dismissed_keeps_waiting_and_the_tray_wins_and_the_host_is_told() {
    let gw = TestGateway::start().await;
    write_profiles(&gw);
    let mut host = gw.host().await;
    let (s, mut p) = session(&gw, &mut host, "work", "asks", Some(dialog(true, true))).await;
    let rx = start(&host, &s, T1, json!({}));
    let ask = asked(&mut host).await;
    host.answer_approval(&ask.approval_id, HostApprovalAnswer::Dismissed)
        .unwrap();
    // Still waiting after the dismissal was handled (the status round trip orders it).
    let seen = host_events_so_far(&mut host).await;
    assert!(
        !seen.iter().any(|e| matches!(e, HostEvent::Error(_))),
        "{seen:?}"
    );
    let waiting = gw.handle.gateway().approvals_list().waiting;
    assert_eq!(waiting.len(), 1, "{waiting:?}");
    gw.handle
        .gateway()
        .approvals_approve(&approve_once(&ask.approval_id))
        .unwrap();
    match next_host_event(&mut host, |e| matches!(e, HostEvent::ApprovalWithdrawn(_))).await {
        HostEvent::ApprovalWithdrawn(w) => {
            assert_eq!(w.approval_id, ask.approval_id);
            assert_eq!(w.outcome, WithdrawnOutcome::Approved);
        }
        _ => unreachable!(),
    }
    runs(&mut p, rx).await;
    assert_eq!(root_of(&gw, T1).await["approval.by"], "user");
    // A late answer is ignored: no error, no grant, nothing reaches the provider.
    host.answer_approval(&ask.approval_id, HostApprovalAnswer::Always)
        .unwrap();
    let seen = host_events_so_far(&mut host).await;
    assert!(
        !seen.iter().any(|e| matches!(e, HostEvent::Error(_))),
        "{seen:?}"
    );
    assert!(gw.handle.gateway().approvals_grants().grants.is_empty());
    let seen = until_fence(&mut p).await;
    assert!(seen.iter().all(|m| m["type"] != "tool.call"), "{seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_setting_or_the_capability_the_host_is_never_asked() {
    let gw = TestGateway::start().await;
    write_profiles(&gw);
    let mut events = gw.handle.gateway().subscribe();
    let mut host = gw.host().await;
    let (mute, mut p1) = session(&gw, &mut host, "mute", "asks", Some(dialog(false, false))).await;
    let (bare, mut p2) = session(&gw, &mut host, "bare", "asks", None).await;
    let (plain, mut p3) = session(&gw, &mut host, "plain", "plain", Some(dialog(true, true))).await;
    for (s, p, trace) in [
        (&mute, &mut p1, T1),
        (&bare, &mut p2, T2),
        (&plain, &mut p3, T3),
    ] {
        let rx = start(&host, s, trace, json!({}));
        let w = next_waiting(&mut events).await;
        assert_eq!(&w.session_id, s);
        // Not asked: an answer from the host (which owns the session) is not taken either.
        host.answer_approval(&w.id, HostApprovalAnswer::Once)
            .unwrap();
        let seen = host_events_so_far(&mut host).await;
        assert!(
            !seen
                .iter()
                .any(|e| matches!(e, HostEvent::ApprovalAsk(_) | HostEvent::Error(_))),
            "{seen:?}"
        );
        assert_eq!(gw.handle.gateway().approvals_list().waiting.len(), 1);
        gw.handle
            .gateway()
            .approvals_approve(&approve_once(&w.id))
            .unwrap();
        runs(p, rx).await;
        let root = root_of(&gw, trace).await;
        assert_eq!(root["approval.by"], "user", "{root}");
        assert!(root.get("approval.host_asked").is_none(), "{root}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_hosts_answer_is_refused_and_an_unknown_approval_ignored() {
    let gw = TestGateway::start().await;
    write_profiles(&gw);
    let mut host = gw.host().await;
    let mut other = gw.host().await;
    let (s, mut p) = session(&gw, &mut host, "work", "asks", Some(dialog(false, true))).await;
    let rx = start(&host, &s, T1, json!({}));
    let ask = asked(&mut host).await;
    other
        .answer_approval(&ask.approval_id, HostApprovalAnswer::Always)
        .unwrap();
    match next_host_event(&mut other, |e| matches!(e, HostEvent::Error(_))).await {
        HostEvent::Error(e) => {
            assert_eq!(e.code.as_str(), "UNAUTHORIZED", "{e:?}");
            assert_eq!(e.reply_to.as_deref(), Some("approval.answer"));
            assert!(e.message.contains(&ask.approval_id), "{e:?}");
        }
        _ => unreachable!(),
    }
    assert_eq!(gw.handle.gateway().approvals_list().waiting.len(), 1);
    assert!(gw.handle.gateway().approvals_grants().grants.is_empty());
    // An approval nobody knows: no error frame.
    host.answer_approval("a-00000000", HostApprovalAnswer::Deny)
        .unwrap();
    let seen = host_events_so_far(&mut host).await;
    assert!(
        !seen.iter().any(|e| matches!(e, HostEvent::Error(_))),
        "{seen:?}"
    );
    host.answer_approval(&ask.approval_id, HostApprovalAnswer::Once)
        .unwrap();
    runs(&mut p, rx).await;
}

#[tokio::test(start_paused = true)]
async fn a_host_that_never_answers_is_told_the_wait_timed_out() {
    let gw = TestGateway::start().await;
    write_profiles(&gw);
    let mut host = gw.host().await;
    let (s, mut p) = session(&gw, &mut host, "work", "asks", Some(dialog(false, true))).await;
    let rx = start(&host, &s, T1, json!({}));
    let ask = asked(&mut host).await;
    // Not `result_of`: its patience is shorter than the approval timeout on this clock.
    let r = match rx.await.unwrap() {
        HostEvent::ToolResult(r) => r,
        other => panic!("{other:?}"),
    };
    assert_eq!(code(&r), Some("DENIED"));
    assert!(r.error.unwrap().contains("did not approve"));
    match next_host_event(&mut host, |e| matches!(e, HostEvent::ApprovalWithdrawn(_))).await {
        HostEvent::ApprovalWithdrawn(w) => {
            assert_eq!(w.approval_id, ask.approval_id);
            assert_eq!(w.outcome, WithdrawnOutcome::TimedOut);
        }
        _ => unreachable!(),
    }
    p.fence().await;
}

//! Tool-call approvals (issue 39) on the real call path: a real session host calls, a real
//! provider connection offers the tools, and the user's answers come through the façade the
//! control plane's `approvals.*` methods call. The provider sees only the calls let through.

use rand::seq::SliceRandom;
use serde_json::{json, Value};
use tap_client::HostClient;
use tap_gateway::{Gateway, GatewayEvent};
use tap_protocol::approvals::{
    AnswerScope, ApprovalApprove, ApprovalDeny, ApprovalOutcome, ArgPattern, PolicyAction,
    PolicyRule, RuleMatch, WaitingCall,
};
use tap_protocol::host::HostToolResult;
use tap_testkit::*;
use tokio::sync::broadcast;

/// A tool annotated `destructiveHint: true`: asked by default.
fn destructive(name: &str) -> Value {
    let mut t = tool(name);
    t["annotations"] = json!({"destructiveHint": true});
    t
}

/// A tool with one string parameter `path`.
fn with_path(name: &str) -> Value {
    json!({"name": name, "description": "d",
           "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}})
}

struct Setup {
    host: HostClient,
    session: String,
    p: Provider,
    events: broadcast::Receiver<GatewayEvent>,
}

async fn setup(gw: &TestGateway) -> Setup {
    let events = gw.handle.gateway().subscribe();
    let (host, info) = gw.host_with_session().await;
    let p = gw
        .bound(
            "files",
            &info.id,
            json!([tool("read"), destructive("rm"), with_path("cat")]),
        )
        .await;
    Setup {
        host,
        session: info.id,
        p,
        events,
    }
}

/// The next call that starts waiting.
async fn next_waiting(events: &mut broadcast::Receiver<GatewayEvent>) -> WaitingCall {
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

/// The next call that stops waiting, and how.
async fn next_resolved(
    events: &mut broadcast::Receiver<GatewayEvent>,
) -> (String, ApprovalOutcome) {
    tokio::time::timeout(PATIENCE, async {
        loop {
            if let GatewayEvent::ApprovalResolved { id, outcome } = events.recv().await.unwrap() {
                return (id, outcome);
            }
        }
    })
    .await
    .expect("no call stopped waiting")
}

fn approve(id: &str, scope: AnswerScope, minutes: Option<u64>) -> ApprovalApprove {
    ApprovalApprove {
        id: id.into(),
        scope,
        minutes,
        args_pattern: vec![],
    }
}

/// Invokes `tool` and answers the provider's `tool.call` (which must come) with "ran".
async fn runs(s: &mut Setup, tool: &str, args: Value) -> HostToolResult {
    let rx = invoke(&s.host, &s.session, tool, args);
    let call = s.p.expect("tool.call").await;
    assert_eq!(call["tool"], tool, "{call}");
    answer(&mut s.p, &call, json!("ran")).await;
    let r = result_of(rx).await;
    assert_eq!(r.data, Some(json!("ran")), "{r:?}");
    r
}

/// Invokes `tool`, which must wait for approval; returns the waiting call and the result's
/// receiver.
async fn asked(
    s: &mut Setup,
    tool: &str,
    args: Value,
) -> (
    WaitingCall,
    tokio::sync::oneshot::Receiver<tap_protocol::host::HostEvent>,
) {
    let rx = invoke(&s.host, &s.session, tool, args);
    let w = next_waiting(&mut s.events).await;
    assert_eq!(w.tool, tool);
    (w, rx)
}

/// After approval the call reaches the provider; answers it.
async fn goes_through(
    s: &mut Setup,
    rx: tokio::sync::oneshot::Receiver<tap_protocol::host::HostEvent>,
) {
    let call = s.p.expect("tool.call").await;
    answer(&mut s.p, &call, json!("ran")).await;
    assert_eq!(result_of(rx).await.data, Some(json!("ran")));
}

fn rule(id: &str, m: RuleMatch, action: PolicyAction) -> PolicyRule {
    PolicyRule {
        id: id.into(),
        matcher: m,
        action,
        reason: None,
    }
}

fn gw_of(gw: &TestGateway) -> &Gateway {
    gw.handle.gateway()
}

#[tokio::test]
async fn plain_tools_are_allowed_and_destructive_ones_asked_then_approved_once() {
    let gw = TestGateway::start().await;
    let mut s = setup(&gw).await;
    runs(&mut s, "read", json!({})).await;
    let (w, rx) = asked(&mut s, "rm", json!({})).await;
    // Everything a prompt shows.
    assert_eq!(w.provider, "files");
    assert_eq!(w.session_id, s.session);
    assert_eq!(w.client.as_deref(), Some("test-host"));
    assert_eq!(w.annotations.as_ref().unwrap()["destructiveHint"], true);
    assert_eq!(w.why, "default: destructiveHint");
    assert_eq!(gw_of(&gw).approvals_list().waiting, vec![w.clone()]);
    let answered = gw_of(&gw)
        .approvals_approve(&approve(&w.id, AnswerScope::Call, None))
        .unwrap();
    assert!(
        answered.grant.is_none(),
        "a call's approval is not remembered"
    );
    assert_eq!(
        next_resolved(&mut s.events).await,
        (w.id.clone(), ApprovalOutcome::Approved)
    );
    goes_through(&mut s, rx).await;
    // Answering again finds nothing.
    let e = gw_of(&gw)
        .approvals_approve(&approve(&w.id, AnswerScope::Call, None))
        .unwrap_err();
    assert_eq!(e.code.as_str(), "NOT_FOUND");
    assert!(e.message.contains("answered, timed out"), "{e}");
    // Once only: the next call is asked again.
    let (w2, _rx) = asked(&mut s, "rm", json!({})).await;
    assert_ne!(w2.id, w.id);
}

#[tokio::test]
async fn a_session_grant_lets_that_session_through_and_asks_in_another() {
    let gw = TestGateway::start().await;
    let mut s = setup(&gw).await;
    let (w, rx) = asked(&mut s, "rm", json!({})).await;
    let g = gw_of(&gw)
        .approvals_approve(&approve(&w.id, AnswerScope::Session, None))
        .unwrap()
        .grant
        .expect("a session grant");
    assert_eq!(g.session.as_deref(), Some(s.session.as_str()));
    goes_through(&mut s, rx).await;
    runs(&mut s, "rm", json!({})).await;
    // Another session of the same host, a provider of the same name there (another
    // instance, as names are unique per instance): asked.
    let other = second_session(&s.host, "other").await;
    let _p2 = gw
        .bind(
            "files",
            &other.id,
            json!({"tools": [destructive("rm")], "instance": "b"}),
        )
        .await;
    let _rx = invoke(&s.host, &other.id, "rm", json!({}));
    let w = next_waiting(&mut s.events).await;
    assert_eq!(w.session_id, other.id);
}

#[tokio::test(start_paused = true)]
async fn a_minutes_grant_ends_on_time() {
    let gw = TestGateway::start().await;
    let mut s = setup(&gw).await;
    let (w, rx) = asked(&mut s, "rm", json!({})).await;
    let g = gw_of(&gw)
        .approvals_approve(&approve(&w.id, AnswerScope::Minutes, Some(5)))
        .unwrap()
        .grant
        .unwrap();
    assert!(g.expires_at.is_some());
    goes_through(&mut s, rx).await;
    tokio::time::advance(std::time::Duration::from_secs(4 * 60)).await;
    runs(&mut s, "rm", json!({})).await;
    tokio::time::advance(std::time::Duration::from_secs(61)).await;
    let (_w, _rx) = asked(&mut s, "rm", json!({})).await;
    assert!(
        gw_of(&gw).approvals_grants().grants.is_empty(),
        "expired grants are gone"
    );
}

#[tokio::test]
async fn an_always_grant_survives_a_restart_and_a_revoked_one_asks_again() {
    let gw = TestGateway::start().await;
    let mut s = setup(&gw).await;
    let (w, rx) = asked(&mut s, "rm", json!({})).await;
    let g = gw_of(&gw)
        .approvals_approve(&approve(&w.id, AnswerScope::Always, None))
        .unwrap()
        .grant
        .unwrap();
    goes_through(&mut s, rx).await;
    let file = gw.dir.path().join("home/grants.json");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    drop(s);
    let TestGateway { handle, dir } = gw;
    handle.stop().await.unwrap();
    // A new gateway on the same TAP_HOME.
    let home = dir.path().join("home");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let handle = tap_gateway::GatewayHandle::start(listener, tap_gateway::GatewayConfig::new(home))
        .await
        .unwrap();
    let gw = TestGateway { handle, dir };
    assert_eq!(gw_of(&gw).approvals_grants().grants, vec![g.clone()]);
    let mut s = setup(&gw).await;
    runs(&mut s, "rm", json!({})).await;
    // Revoked: asked again.
    let left = gw_of(&gw).approvals_revoke(&g.id).unwrap();
    assert!(left.grants.is_empty());
    let (_w, _rx) = asked(&mut s, "rm", json!({})).await;
    let e = gw_of(&gw).approvals_revoke(&g.id).unwrap_err();
    assert_eq!(e.code.as_str(), "NOT_FOUND");
}

#[tokio::test]
async fn a_denied_call_never_reaches_the_provider_and_a_remembered_deny_is_not_asked() {
    let gw = TestGateway::start().await;
    let mut s = setup(&gw).await;
    let (w, rx) = asked(&mut s, "rm", json!({})).await;
    gw_of(&gw)
        .approvals_deny(&ApprovalDeny {
            id: w.id.clone(),
            remember: None,
            minutes: None,
        })
        .unwrap();
    let r = result_of(rx).await;
    assert_eq!(code(&r), Some("DENIED"));
    assert!(
        r.error.as_deref().unwrap().contains("The user denied"),
        "{r:?}"
    );
    // Remembered for the session: denied at once, never asked.
    let (w, rx) = asked(&mut s, "rm", json!({})).await;
    let g = gw_of(&gw)
        .approvals_deny(&ApprovalDeny {
            id: w.id,
            remember: Some(AnswerScope::Always),
            minutes: None,
        })
        .unwrap()
        .grant
        .unwrap();
    assert_eq!(code(&result_of(rx).await), Some("DENIED"));
    let r = result_of(invoke(&s.host, &s.session, "rm", json!({}))).await;
    assert_eq!(code(&r), Some("DENIED"));
    assert!(r.error.as_deref().unwrap().contains(&g.id), "{r:?}");
    // None of the three reached the provider.
    fence(&mut s.p).await;
}

#[tokio::test(start_paused = true)]
async fn an_unanswered_call_is_denied_when_the_wait_ends_and_its_tool_timeout_starts_after_approval(
) {
    let gw = TestGateway::start().await;
    let mut s = setup(&gw).await;
    let asked_at = tokio::time::Instant::now();
    let (w, rx) = asked(&mut s, "rm", json!({})).await;
    // Not `result_of`: its patience is shorter than the approval timeout on this clock.
    let r = match rx.await.unwrap() {
        tap_protocol::host::HostEvent::ToolResult(r) => r,
        other => panic!("{other:?}"),
    };
    assert!(
        asked_at.elapsed() >= std::time::Duration::from_secs(120),
        "{:?}",
        asked_at.elapsed()
    );
    assert_eq!(code(&r), Some("DENIED"));
    let msg = r.error.unwrap();
    assert!(msg.contains("did not approve"), "{msg}");
    assert!(msg.contains("tap approvals approve"), "{msg}");
    assert_eq!(
        next_resolved(&mut s.events).await,
        (w.id.clone(), ApprovalOutcome::TimedOut)
    );
    // Answered after the timeout: nothing to answer.
    let e = gw_of(&gw)
        .approvals_approve(&approve(&w.id, AnswerScope::Call, None))
        .unwrap_err();
    assert_eq!(e.code.as_str(), "NOT_FOUND");
    fence(&mut s.p).await;
    // A wait of 110 s then an approval: the tool's own timeout (120 s) starts at the
    // answer, so a result 60 s later (170 s after the call) is still taken.
    let (w, rx) = asked(&mut s, "rm", json!({})).await;
    tokio::time::advance(std::time::Duration::from_secs(110)).await;
    gw_of(&gw)
        .approvals_approve(&approve(&w.id, AnswerScope::Call, None))
        .unwrap();
    let call = s.p.expect("tool.call").await;
    tokio::time::advance(std::time::Duration::from_secs(60)).await;
    answer(&mut s.p, &call, json!("ran")).await;
    assert_eq!(result_of(rx).await.data, Some(json!("ran")));
}

#[tokio::test]
async fn rules_match_arguments_by_pointer_and_regex_and_grants_can_too() {
    let gw = TestGateway::start().await;
    let mut s = setup(&gw).await;
    let m = RuleMatch {
        tool: Some("c?t".into()),
        provider: Some("files".into()),
        args: vec![ArgPattern {
            pointer: "/path".into(),
            regex: "^/etc/".into(),
        }],
        ..RuleMatch::default()
    };
    gw_of(&gw)
        .policy_set(rule("etc", m, PolicyAction::Ask))
        .unwrap();
    runs(&mut s, "cat", json!({"path": "/tmp/x"})).await;
    let (w, rx) = asked(&mut s, "cat", json!({"path": "/etc/passwd"})).await;
    assert_eq!(w.why, "rule etc");
    assert_eq!(w.args, json!({"path": "/etc/passwd"}));
    // Always, but only for /etc/hosts.
    let mut a = approve(&w.id, AnswerScope::Always, None);
    a.args_pattern = vec![ArgPattern {
        pointer: "/path".into(),
        regex: "^/etc/hosts$".into(),
    }];
    gw_of(&gw).approvals_approve(&a).unwrap();
    goes_through(&mut s, rx).await;
    runs(&mut s, "cat", json!({"path": "/etc/hosts"})).await;
    let (_w, _rx) = asked(&mut s, "cat", json!({"path": "/etc/shadow"})).await;
    // A deny rule: refused at once, with its reason.
    let mut r = rule(
        "no-read",
        RuleMatch {
            tool: Some("read".into()),
            ..RuleMatch::default()
        },
        PolicyAction::Deny,
    );
    r.reason = Some("reading is off today".into());
    gw_of(&gw).policy_set(r).unwrap();
    let res = result_of(invoke(&s.host, &s.session, "read", json!({}))).await;
    assert_eq!(code(&res), Some("DENIED"));
    assert!(res
        .error
        .unwrap()
        .contains("rule 'no-read' of policy.json: reading is off today"));
    // And removed: allowed again.
    gw_of(&gw).policy_remove("no-read").unwrap();
    runs(&mut s, "read", json!({})).await;
    let list = gw_of(&gw).policy_list();
    assert_eq!(list.rules.len(), 1);
    assert_eq!(list.approval_timeout_secs, 120);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_waiting_calls_answered_in_any_order_each_get_one_outcome() {
    let gw = TestGateway::start().await;
    let mut s = setup(&gw).await;
    let mut results = Vec::new();
    for i in 0..50 {
        results.push(invoke(&s.host, &s.session, "rm", json!({"n": i})));
    }
    let mut waiting = Vec::new();
    for _ in 0..50 {
        waiting.push(next_waiting(&mut s.events).await);
    }
    assert_eq!(gw_of(&gw).approvals_list().waiting.len(), 50);
    waiting.shuffle(&mut rand::rng());
    let mut approved = std::collections::BTreeSet::new();
    for (k, w) in waiting.iter().enumerate() {
        let n = w.args["n"].as_i64().unwrap();
        if k % 2 == 0 {
            gw_of(&gw)
                .approvals_approve(&approve(&w.id, AnswerScope::Call, None))
                .unwrap();
            approved.insert(n);
        } else {
            gw_of(&gw)
                .approvals_deny(&ApprovalDeny {
                    id: w.id.clone(),
                    remember: None,
                    minutes: None,
                })
                .unwrap();
        }
        // A second answer, either way, finds nothing.
        assert!(gw_of(&gw)
            .approvals_deny(&ApprovalDeny {
                id: w.id.clone(),
                remember: None,
                minutes: None
            })
            .is_err());
    }
    // The provider sees exactly the approved ones.
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..approved.len() {
        let call = s.p.expect("tool.call").await;
        seen.insert(call["args"]["n"].as_i64().unwrap());
        answer(&mut s.p, &call, call["args"]["n"].clone()).await;
    }
    assert_eq!(seen, approved);
    for (i, rx) in results.into_iter().enumerate() {
        let r = result_of(rx).await;
        if approved.contains(&(i as i64)) {
            assert_eq!(r.data, Some(json!(i)), "{r:?}");
        } else {
            assert_eq!(code(&r), Some("DENIED"), "{r:?}");
        }
    }
    fence(&mut s.p).await;
    assert!(gw_of(&gw).approvals_list().waiting.is_empty());
}

#[tokio::test]
async fn a_bad_policy_file_is_named_and_asks_every_call_until_fixed() {
    let gw = TestGateway::start().await;
    let mut s = setup(&gw).await;
    let path = gw.dir.path().join("home/policy.json");
    std::fs::write(
        &path,
        r#"{"rules": [{"id": "ok", "action": "allow"}, {"id": "bad", "action": "ask", "match": {"tools": "x"}}]}"#,
    )
    .unwrap();
    let list = gw_of(&gw).policy_list();
    let err = list.error.expect("the file is refused");
    assert!(
        err.contains("rule 1 ('bad')") && err.contains("unknown field `tools`"),
        "{err}"
    );
    // Fail closed: a plain tool is asked now, saying why.
    let (w, _rx) = asked(&mut s, "read", json!({})).await;
    assert_eq!(w.why, "policy.json cannot be used");
    assert!(w.reason.unwrap().contains("rule 1 ('bad')"));
    // policy.set refuses to write over it.
    let e = gw_of(&gw)
        .policy_set(rule("x", RuleMatch::default(), PolicyAction::Allow))
        .unwrap_err();
    assert!(e.message.contains("must be fixed by hand"), "{e}");
    // A huge regex is refused, naming the rule; the file is left as it was.
    std::fs::remove_file(&path).unwrap();
    let huge = RuleMatch {
        args: vec![ArgPattern {
            pointer: "/a".into(),
            regex: "x".repeat(100_000),
        }],
        ..RuleMatch::default()
    };
    let e = gw_of(&gw)
        .policy_set(rule("huge", huge, PolicyAction::Ask))
        .unwrap_err();
    assert!(e.message.contains("rule 0 ('huge')"), "{e}");
    assert!(!path.exists());
    // Unknown ids.
    let e = gw_of(&gw)
        .approvals_approve(&approve("a-nope", AnswerScope::Call, None))
        .unwrap_err();
    assert_eq!(e.code.as_str(), "NOT_FOUND");
    assert_eq!(
        gw_of(&gw).policy_remove("nope").unwrap_err().code.as_str(),
        "NOT_FOUND"
    );
    // Nonsense scopes.
    let (w, _rx) = asked(&mut s, "rm", json!({})).await;
    let e = gw_of(&gw)
        .approvals_approve(&approve(&w.id, AnswerScope::Minutes, Some(0)))
        .unwrap_err();
    assert!(e.message.contains("'minutes'"), "{e}");
    // The failed answer left the call waiting.
    assert_eq!(gw_of(&gw).approvals_list().waiting.len(), 2);
}

#[tokio::test]
async fn a_call_whose_session_ends_while_waiting_is_denied() {
    let gw = TestGateway::start().await;
    let mut s = setup(&gw).await;
    let (w, rx) = asked(&mut s, "rm", json!({})).await;
    // The call is denied as soon as the session starts ending (its provider has until the
    // shutdown deadline to leave; the waiting call does not wait for that).
    let r = tokio::select! {
        r = result_of(rx) => r,
        _ = s.host.end_session(&s.session) => panic!("the session ended before the call"),
    };
    assert!(r.error.is_some(), "{r:?}");
    assert_eq!(next_resolved(&mut s.events).await.0, w.id);
    assert!(gw_of(&gw).approvals_list().waiting.is_empty());
}

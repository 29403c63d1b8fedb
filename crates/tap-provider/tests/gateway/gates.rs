//! Hook rules, gates (`gate.check` answered by a handler) and callback transforms
//! (`transform.request` answered by a handler), asked by the real gateway on a session
//! host's `tool.precheck` and `prompt.apply`.

use crate::common::*;
use tap_protocol::host::PrecheckDecision;
use tap_provider::{deny_rule, gate_rule, json, RuleExt, Transform, Verdict};
use tap_testkit::{apply, precheck, TestGateway};

#[tokio::test]
async fn a_static_rule_denies_matching_calls() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let _p = builder(&gw, "guarded")
        .rule(deny_rule("greet", "Not her.").args("Mallory"))
        .connect()
        .await
        .unwrap();
    let d = precheck(&host, &session.id, "greet", json!({"name": "Mallory"})).await;
    assert_eq!(
        (d.decision, d.reason.as_deref()),
        (PrecheckDecision::Deny, Some("Not her."))
    );
    let d = precheck(&host, &session.id, "greet", json!({"name": "Ada"})).await;
    assert_eq!(d.decision, PrecheckDecision::Allow);
}

#[tokio::test]
async fn gate_handlers_decide_and_a_missing_or_panicking_one_denies() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let (seen, mut checks) = tokio::sync::mpsc::unbounded_channel();
    let _p = builder(&gw, "ci")
        .rule(gate_rule("shell", "ci").args("git push"))
        .rule(gate_rule("deploy", "freeze"))
        .rule(gate_rule("rm", "nobody"))
        .rule(gate_rule("curl", "broken"))
        .gate("ci", move |check| {
            let _ = seen.send(check.clone());
            async move {
                match check.args["command"].as_str() {
                    Some(c) if c.contains("--force") => Verdict::Deny("CI is red".into()),
                    _ => Verdict::Allow,
                }
            }
        })
        .gate("freeze", |_| async {
            Verdict::Context("Deploys are frozen after 4 pm.".into())
        })
        .gate("broken", |_| async {
            if true {
                panic!("no network");
            }
            Verdict::Allow
        })
        .connect()
        .await
        .unwrap();

    let d = precheck(
        &host,
        &session.id,
        "shell",
        json!({"command": "git push --force"}),
    )
    .await;
    assert_eq!(
        (d.decision, d.reason.as_deref()),
        (PrecheckDecision::Deny, Some("CI is red"))
    );
    let check = soon("the gate's check", checks.recv()).await.unwrap();
    assert_eq!(
        (
            check.gate_id.as_deref(),
            check.tool.as_str(),
            check.session_id.as_str()
        ),
        (Some("ci"), "shell", session.id.as_str())
    );
    let d = precheck(&host, &session.id, "shell", json!({"command": "git push"})).await;
    assert_eq!(d.decision, PrecheckDecision::Allow);
    // Only calls the rule matches reach the gate.
    let d = precheck(&host, &session.id, "shell", json!({"command": "ls"})).await;
    assert_eq!(d.decision, PrecheckDecision::Allow);
    assert!(checks.try_recv().is_ok(), "the plain push was checked");
    assert!(checks.try_recv().is_err(), "ls was not");

    let d = precheck(&host, &session.id, "deploy", json!({})).await;
    assert_eq!(
        (d.decision, d.context.as_deref()),
        (
            PrecheckDecision::Context,
            Some("Deploys are frozen after 4 pm.")
        )
    );
    let d = precheck(&host, &session.id, "rm", json!({})).await;
    assert_eq!(d.decision, PrecheckDecision::Deny);
    assert!(d.reason.unwrap().contains("no handler for gate 'nobody'"));
    let d = precheck(&host, &session.id, "curl", json!({})).await;
    assert_eq!(d.decision, PrecheckDecision::Deny);
    assert!(d.reason.unwrap().contains("no network"));
}

#[tokio::test]
async fn a_callback_transform_rewrites_its_section_and_static_ones_apply_as_declared() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let _p = builder(&gw, "styler")
        .transform(
            "custom_instructions",
            Transform::callback(|r| async move {
                format!("{}\nCI is green (asked for {}).", r.current, r.session_id)
            }),
        )
        .transform("tone", Transform::prepend("Be brief."))
        .connect()
        .await
        .unwrap();
    let a = apply(
        &host,
        &session.id,
        &[
            ("custom_instructions", "Write tests."),
            ("tone", "Be kind."),
        ],
    )
    .await;
    assert_eq!(
        a.sections["custom_instructions"],
        format!("Write tests.\nCI is green (asked for {}).", session.id)
    );
    assert_eq!(a.sections["tone"], "Be brief.\nBe kind.");
}

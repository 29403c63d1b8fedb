//! Runtime updates, each resolved at the gateway's `ack` with the binding's revision:
//! `tools.update`, `hooks.update` (rules, transforms), `context.update`, `filter.set`; and a
//! refused update leaves the declaration as it was.

use crate::common::*;
use tap_protocol::host::PrecheckDecision;
use tap_provider::{
    deny_rule, json, FilterOutcome, FilterRule, Provider, PushLevel, PushOptions, Tool, Transform,
};
use tap_testkit::{apply, precheck, stored, TestGateway};

fn ping() -> Tool {
    Tool::new("ping", "", json!({}), |_, _| async move { Ok("pong") }).unwrap()
}

#[tokio::test]
async fn set_tools_replaces_the_tool_set_once_acknowledged() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let p = builder(&gw, "changing").connect().await.unwrap();
    let revision = soon("the ack", p.set_tools(vec![ping()])).await.unwrap();
    assert!(revision > 0);
    let (data, _, _) = invoke(&host, &session.id, "ping", json!({})).await;
    assert_eq!(data, Some(json!("pong")));
    let (_, code, _) = invoke(&host, &session.id, "greet", json!({"name": "x"})).await;
    assert_eq!(code.as_deref(), Some("NOT_FOUND"), "greet is gone");
}

#[tokio::test]
async fn a_refused_tools_update_keeps_the_old_tools() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let _owner = builder(&gw, "owner").connect().await.unwrap();
    let p = Provider::builder("other")
        .tool(ping())
        .endpoint(endpoint(&gw))
        .connect()
        .await
        .unwrap();
    // `greet` belongs to another provider in this session.
    let e = soon("the refusal", p.set_tools(vec![greet()]))
        .await
        .unwrap_err();
    assert_eq!(e.code().map(|c| c.as_str()), Some("TOOL_CONFLICT"), "{e}");
    let (data, _, _) = invoke(&host, &session.id, "ping", json!({})).await;
    assert_eq!(data, Some(json!("pong")), "ping is still answered");
}

#[tokio::test]
async fn set_rules_replaces_the_hook_rules() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let p = builder(&gw, "rules").connect().await.unwrap();
    let args = json!({"name": "Mallory"});
    soon("the ack", p.set_rules(vec![deny_rule("greet", "Not now.")]))
        .await
        .unwrap();
    let d = precheck(&host, &session.id, "greet", args.clone()).await;
    assert_eq!(
        (d.decision, d.reason.as_deref()),
        (PrecheckDecision::Deny, Some("Not now."))
    );
    soon("the ack", p.set_rules(vec![])).await.unwrap();
    let d = precheck(&host, &session.id, "greet", args).await;
    assert_eq!(d.decision, PrecheckDecision::Allow);
}

#[tokio::test]
async fn set_transform_adds_changes_and_removes_a_section_transform() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let p = builder(&gw, "styler")
        .transform("tone", Transform::append("Be brief."))
        .connect()
        .await
        .unwrap();
    let tone = |a: tap_protocol::host::PromptApplied| a.sections["tone"].clone();
    assert_eq!(
        tone(apply(&host, &session.id, &[("tone", "Hi.")]).await),
        "Hi.\nBe brief."
    );
    let shout = Transform::callback(|r| async move { r.current.to_uppercase() });
    soon("the ack", p.set_transform("tone", Some(shout)))
        .await
        .unwrap();
    assert_eq!(
        tone(apply(&host, &session.id, &[("tone", "Hi.")]).await),
        "HI."
    );
    soon("the ack", p.set_transform("tone", None))
        .await
        .unwrap();
    assert_eq!(
        tone(apply(&host, &session.id, &[("tone", "Hi.")]).await),
        "Hi."
    );
}

#[tokio::test]
async fn set_context_replaces_and_clears_the_ambient_context() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let p = builder(&gw, "ctx")
        .context("Use pnpm.")
        .connect()
        .await
        .unwrap();
    assert_eq!(apply(&host, &session.id, &[]).await.context, ["Use pnpm."]);
    soon("the ack", p.set_context(Some("Use yarn.".into())))
        .await
        .unwrap();
    assert_eq!(apply(&host, &session.id, &[]).await.context, ["Use yarn."]);
    soon("the ack", p.set_context(None)).await.unwrap();
    assert!(apply(&host, &session.id, &[]).await.context.is_empty());
}

#[tokio::test]
async fn filters_declared_and_set_at_runtime_apply_to_pushes() {
    let gw = TestGateway::start().await;
    let (host, session) = gw.host_with_session().await;
    let drop_noise = vec![FilterRule {
        pattern: "^noise".into(),
        outcome: FilterOutcome::Drop,
    }];
    let p = builder(&gw, "ci")
        .filter("builds", drop_noise)
        .connect()
        .await
        .unwrap();
    let push = |text: &str| p.push(PushLevel::Keep, text, PushOptions::stream("builds"));
    push("noise 1").await.unwrap();
    push("build 1 passed").await.unwrap();
    assert_eq!(
        stored(&host, &session.id, "builds@ci").await,
        ["build 1 passed"]
    );
    soon("the ack", p.set_filter("builds", vec![]))
        .await
        .unwrap();
    push("noise 2").await.unwrap();
    assert_eq!(
        stored(&host, &session.id, "builds@ci").await,
        ["noise 2", "build 1 passed"]
    );
}

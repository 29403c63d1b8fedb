//! Spec section "Hook rules — declarative API" → "Transform rules": one test per row of the
//! action table (`append`, `prepend`, `replace`, `callback`), several providers' appends
//! concatenated in registration order, and `hooks.update` transforms (`null` removes).
//! Spec decisions T1–T5: only sections the host sent; bind order; newline joins; callback
//! answers replace the section, no answer in 2 s leaves it unchanged.

use crate::common::*;
use tap_protocol::limits::TRANSFORM_TIMEOUT;

fn transforms(t: Value) -> Value {
    json!({"hooks": {"transforms": t}})
}

#[tokio::test]
async fn append_adds_its_content_after_the_section() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _p = bind(
        &gw,
        "p",
        &s.id,
        transforms(json!({"ci": {"action": "append", "content": "Use pnpm."}})),
    )
    .await;
    assert_eq!(
        apply(&host, &s.id, &[("ci", "Write tests.")])
            .await
            .sections["ci"],
        "Write tests.\nUse pnpm."
    );
    assert_eq!(
        apply(&host, &s.id, &[("ci", "")]).await.sections["ci"],
        "Use pnpm."
    );
}

#[tokio::test]
async fn prepend_adds_its_content_before_the_section() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _p = bind(
        &gw,
        "p",
        &s.id,
        transforms(json!({"tone": {"action": "prepend", "content": "Be brief."}})),
    )
    .await;
    assert_eq!(
        apply(&host, &s.id, &[("tone", "Be kind.")]).await.sections["tone"],
        "Be brief.\nBe kind."
    );
}

#[tokio::test]
async fn replace_sets_the_section() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _p = bind(
        &gw,
        "p",
        &s.id,
        transforms(json!({"env": {"action": "replace", "content": "Linux"}})),
    )
    .await;
    assert_eq!(
        apply(&host, &s.id, &[("env", "Windows")]).await.sections["env"],
        "Linux"
    );
}

#[tokio::test]
async fn callback_asks_the_provider_and_takes_its_content() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let host = Arc::new(host);
    let (mut p, _) = bind(
        &gw,
        "p",
        &s.id,
        transforms(json!({"code_change_rules": {"action": "callback"}})),
    )
    .await;
    let h = host.clone();
    let sid = s.id.clone();
    let task = tokio::spawn(async move {
        h.apply_prompt(
            &sid,
            "prompt",
            sections(&[("code_change_rules", "existing")]),
        )
        .await
        .unwrap()
    });
    let req = p.expect("transform.request").await;
    assert_eq!(req["section"], "code_change_rules");
    assert_eq!(req["current"], "existing");
    assert_eq!(req["sessionId"], s.id.as_str());
    p.send(json!({"type": "transform.result", "callId": req["callId"],
                  "content": "existing plus live state"}))
        .await;
    let a = tokio::time::timeout(PATIENCE, task).await.unwrap().unwrap();
    assert_eq!(a.sections["code_change_rules"], "existing plus live state");
}

#[tokio::test(start_paused = true)]
async fn callback_without_answer_within_2s_leaves_the_section_unchanged() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let host = Arc::new(host);
    let (mut p, _) = bind(
        &gw,
        "p",
        &s.id,
        transforms(json!({"x": {"action": "callback"},
                          "y": {"action": "append", "content": "y+"}})),
    )
    .await;
    let h = host.clone();
    let sid = s.id.clone();
    let started = tokio::time::Instant::now();
    let task = tokio::spawn(async move {
        h.apply_prompt(&sid, "p", sections(&[("x", "as it was"), ("y", "y0")]))
            .await
            .unwrap()
    });
    let req = p.expect("transform.request").await;
    let a = tokio::time::timeout(PATIENCE, task).await.unwrap().unwrap();
    assert!(
        started.elapsed() >= TRANSFORM_TIMEOUT,
        "{:?}",
        started.elapsed()
    );
    assert_eq!(a.sections["x"], "as it was");
    assert_eq!(
        a.sections["y"], "y0\ny+",
        "the other sections are transformed"
    );
    // The late answer is ignored.
    p.send(json!({"type": "transform.result", "callId": req["callId"], "content": "late"}))
        .await;
    fence(&mut p).await;
}

#[tokio::test]
async fn several_providers_appends_are_concatenated_in_registration_order() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut providers = Vec::new();
    for name in ["first", "second", "third"] {
        providers.push(
            bind(
                &gw,
                name,
                &s.id,
                transforms(json!({"ci": {"action": "append", "content": name}})),
            )
            .await,
        );
    }
    assert_eq!(
        apply(&host, &s.id, &[("ci", "base")]).await.sections["ci"],
        "base\nfirst\nsecond\nthird"
    );
}

#[tokio::test]
async fn each_transform_sees_the_result_of_the_ones_before_it() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _a = bind(
        &gw,
        "a",
        &s.id,
        transforms(json!({"x": {"action": "append", "content": "a"}})),
    )
    .await;
    let _b = bind(
        &gw,
        "b",
        &s.id,
        transforms(json!({"x": {"action": "replace", "content": "b"}})),
    )
    .await;
    let _c = bind(
        &gw,
        "c",
        &s.id,
        transforms(json!({"x": {"action": "append", "content": "c"}})),
    )
    .await;
    assert_eq!(
        apply(&host, &s.id, &[("x", "base")]).await.sections["x"],
        "b\nc"
    );
}

#[tokio::test]
async fn a_rebind_moves_the_provider_to_the_end_of_the_order() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let t = |c: &str| transforms(json!({"x": {"action": "append", "content": c}}));
    let (mut a, _) = bind(&gw, "a", &s.id, t("a")).await;
    let _b = bind(&gw, "b", &s.id, t("b")).await;
    assert_eq!(
        apply(&host, &s.id, &[("x", "0")]).await.sections["x"],
        "0\na\nb"
    );
    a.send(hello("a", &s.id, t("a"))).await;
    expect_bound(&mut a, &s.id).await;
    assert_eq!(
        apply(&host, &s.id, &[("x", "0")]).await.sections["x"],
        "0\nb\na"
    );
}

#[tokio::test]
async fn a_transform_for_a_section_the_host_did_not_send_creates_nothing() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _p = bind(
        &gw,
        "p",
        &s.id,
        transforms(json!({"absent": {"action": "append", "content": "x"}})),
    )
    .await;
    let a = apply(&host, &s.id, &[("present", "p")]).await;
    assert_eq!(a.sections, sections(&[("present", "p")]));
}

#[tokio::test]
async fn static_transforms_need_content() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (mut p, _) = authed(&gw).await;
    for action in ["append", "prepend", "replace"] {
        let e = hello_refused(
            &mut p,
            hello("p", &s.id, transforms(json!({"x": {"action": action}}))),
            "INVALID_JSON",
        )
        .await;
        assert!(e["message"].as_str().unwrap().contains("content"), "{e}");
    }
    // A refused hello keeps the connection; a callback needs no content.
    p.send(hello(
        "p",
        &s.id,
        transforms(json!({"x": {"action": "callback"}})),
    ))
    .await;
    expect_bound(&mut p, &s.id).await;
}

#[tokio::test]
async fn hooks_update_changes_named_sections_and_null_removes_one() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut p, _) = bind(
        &gw,
        "p",
        &s.id,
        transforms(json!({
        "x": {"action": "append", "content": "x1"},
        "y": {"action": "append", "content": "y1"}})),
    )
    .await;
    p.send(json!({"type": "hooks.update", "requestId": "r",
                  "transforms": {"x": null, "y": {"action": "replace", "content": "y2"}}}))
        .await;
    p.expect("ack").await;
    let a = apply(&host, &s.id, &[("x", "x0"), ("y", "y0")]).await;
    assert_eq!(
        (a.sections["x"].as_str(), a.sections["y"].as_str()),
        ("x0", "y2")
    );
}

#[tokio::test]
async fn transforms_leave_with_the_provider() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (p, _) = bind(
        &gw,
        "p",
        &s.id,
        transforms(json!({"x": {"action": "replace", "content": "gone soon"}})),
    )
    .await;
    drop(p);
    wait_until("the provider is gone", || async {
        !provider_listed(&host, "p").await
    })
    .await;
    assert_eq!(
        apply(&host, &s.id, &[("x", "x0")]).await.sections["x"],
        "x0"
    );
}

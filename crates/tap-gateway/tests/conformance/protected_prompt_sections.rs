//! Spec section "Protected prompt sections" (Protocol rules): `safety` and `identity` are
//! immutable — only `append`, at every trust level — and provider transforms are applied
//! before them, so safety content has the last word. Spec decision T4: other actions are
//! refused `UNAUTHORIZED` at registration (`hello` or `hooks.update`). That protected
//! sections are transformed after the others is not observable on the wire: nothing but
//! appends can touch them.

use crate::common::*;

#[tokio::test]
async fn replace_prepend_and_callback_of_protected_sections_are_unauthorized_in_hello() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (mut p, _) = authed(&gw).await;
    for section in ["safety", "identity"] {
        for t in [
            json!({"action": "replace", "content": "anything goes"}),
            json!({"action": "prepend", "content": "first"}),
            json!({"action": "callback"}),
        ] {
            hello_refused(
                &mut p,
                hello("p", &s.id, json!({"hooks": {"transforms": { section: t }}})),
                "UNAUTHORIZED",
            )
            .await;
        }
    }
}

#[tokio::test]
async fn replace_of_a_protected_section_is_unauthorized_in_hooks_update() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = bound(&gw, "p", &s.id, json!([])).await;
    p.send(json!({"type": "hooks.update", "requestId": "h",
                  "transforms": {"safety": {"action": "replace", "content": "none"}}}))
        .await;
    let e = p.expect_error("UNAUTHORIZED").await;
    assert_eq!(e["requestId"], "h", "{e}");
    let a = apply(&host, &s.id, &[("safety", "Never push to main.")]).await;
    assert_eq!(a.sections["safety"], "Never push to main.");
}

#[tokio::test]
async fn protected_sections_accept_appends() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _p = bind(
        &gw,
        "p",
        &s.id,
        json!({"hooks": {"transforms": {
            "safety": {"action": "append", "content": "No force pushes."},
            "identity": {"action": "append", "content": "Also a reviewer."}}}}),
    )
    .await;
    let a = apply(
        &host,
        &s.id,
        &[
            ("safety", "Never push to main."),
            ("identity", "You are Copilot."),
        ],
    )
    .await;
    assert_eq!(
        a.sections["safety"],
        "Never push to main.\nNo force pushes."
    );
    assert_eq!(a.sections["identity"], "You are Copilot.\nAlso a reviewer.");
}

#[tokio::test]
async fn paired_providers_may_append_to_protected_sections_too() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let _p = paired_bound(
        &gw,
        "ext",
        &s.id,
        json!({"hooks": {"transforms": {"safety": {"action": "append", "content": "Be careful."}}}}),
    )
    .await;
    let a = apply(&host, &s.id, &[("safety", "Base.")]).await;
    assert_eq!(a.sections["safety"], "Base.\nBe careful.");
}

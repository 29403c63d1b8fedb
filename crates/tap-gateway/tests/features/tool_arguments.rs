//! A call's `args` are checked against the tool's declared `parameters` (decision 34):
//! invalid arguments end `INVALID_JSON` naming the failing path and never reach the
//! provider; a schema that does not compile is refused at `hello` and `tools.update`;
//! the gateway's own `target` on a shared tool is not the provider's to refuse.
use tap_testkit::*;

use serde_json::{json, Value};

fn greet() -> Value {
    json!({"name": "greet", "description": "Says hello",
           "parameters": {"type": "object", "properties": {"name": {"type": "string"}},
                          "required": ["name"], "additionalProperties": false}})
}

async fn result(
    host: &tap_client::HostClient,
    s: &str,
    tool: &str,
    args: Value,
) -> (Option<String>, String) {
    let r = result_of(invoke(host, s, tool, args)).await;
    (code(&r).map(str::to_string), r.error.unwrap_or_default())
}

#[tokio::test]
async fn invalid_args_fail_invalid_json_naming_the_path_and_never_reach_the_provider() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = gw.bound("p", &s.id, json!([greet()])).await;

    let (c, msg) = result(&host, &s.id, "greet", json!({"name": 42})).await;
    assert_eq!(c.as_deref(), Some("INVALID_JSON"), "{msg}");
    assert!(
        msg.contains("'greet'") && msg.contains("'/name'") && msg.contains("string"),
        "{msg}"
    );
    let (c, msg) = result(&host, &s.id, "greet", json!({})).await;
    assert_eq!(c.as_deref(), Some("INVALID_JSON"), "{msg}");
    assert!(msg.contains("at '/'") && msg.contains("\"name\""), "{msg}");
    let (c, _) = result(&host, &s.id, "greet", json!({"name": "a", "x": 1})).await;
    assert_eq!(c.as_deref(), Some("INVALID_JSON"));
    let (_, msg) = result(
        &host,
        &s.id,
        "greet",
        json!({"name": "y".repeat(10_000), "z": 1}),
    )
    .await;
    assert!(msg.len() < 1_000, "bounded: {} bytes", msg.len());
    fence(&mut p).await;

    let rx = invoke(&host, &s.id, "greet", json!({"name": "Ada"}));
    let call = p.expect("tool.call").await;
    assert_eq!(call["args"], json!({"name": "Ada"}));
    answer(&mut p, &call, json!("Hello, Ada")).await;
    assert_eq!(result_of(rx).await.data, Some(json!("Hello, Ada")));
}

#[tokio::test]
async fn a_schema_that_does_not_compile_is_refused_at_hello() {
    let gw = TestGateway::start().await;
    let (_host, s) = gw.host_with_session().await;
    let (mut p, _) = gw.authed().await;
    let bad = json!({"name": "t", "parameters": {"type": "object",
                     "properties": {"n": {"type": "integr"}}}});
    let e = hello_refused(
        &mut p,
        hello("p", &s.id, json!({"tools": [bad]})),
        "INVALID_JSON",
    )
    .await;
    assert!(e["message"].as_str().unwrap().contains("Tool 't'"), "{e}");
    let remote = json!({"name": "t", "parameters": {"$ref": "http://127.0.0.1:9/schema.json"}});
    hello_refused(
        &mut p,
        hello("p", &s.id, json!({"tools": [remote]})),
        "INVALID_JSON",
    )
    .await;
    // Still able to bind with a good declaration.
    p.send(hello("p", &s.id, json!({"tools": [greet()]}))).await;
    expect_bound(&mut p, &s.id).await;
}

#[tokio::test]
async fn a_schema_that_does_not_compile_is_refused_at_tools_update() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = gw.bound("p", &s.id, json!([greet()])).await;
    let bad = json!({"name": "u", "parameters": {"type": "object", "minProperties": "two"}});
    p.send(json!({"type": "tools.update", "requestId": "r1", "tools": [greet(), bad]}))
        .await;
    let e = p.expect_error("INVALID_JSON").await;
    assert_eq!(e["requestId"], "r1", "{e}");
    assert!(e["message"].as_str().unwrap().contains("Tool 'u'"), "{e}");
    assert_eq!(
        session_tool_names(&host, &s.id).await,
        ["greet"],
        "nothing changed"
    );
    let (c, _) = result(&host, &s.id, "greet", json!({"name": 1})).await;
    assert_eq!(
        c.as_deref(),
        Some("INVALID_JSON"),
        "the old schema still applies"
    );
}

#[tokio::test]
async fn a_tools_update_brings_its_new_schema_into_effect() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let mut p = gw.bound("p", &s.id, json!([greet()])).await;
    // A changed definition would be held until accepted (docs/pins.md); this is about
    // the schema taking effect.
    let (mut control, _) = Control::authed(&gw).await;
    control
        .ok(
            "pins.setEnabled",
            json!({"provider": "p", "enabled": false}),
        )
        .await;
    let loose = json!({"name": "greet", "parameters": {"type": "object"}});
    p.send(json!({"type": "tools.update", "requestId": "r1", "tools": [loose]}))
        .await;
    p.expect("ack").await;
    let rx = invoke(&host, &s.id, "greet", json!({"name": 42}));
    let call = p.expect("tool.call").await;
    answer(&mut p, &call, json!("ok")).await;
    assert_eq!(result_of(rx).await.data, Some(json!("ok")));
}

#[tokio::test]
async fn a_shared_tool_called_with_target_passes_the_instances_strict_schema() {
    let gw = TestGateway::start().await;
    let (host, s) = gw.host_with_session().await;
    let (mut a, _) = gw
        .bind("tab", &s.id, json!({"instance": "a", "tools": [greet()]}))
        .await;
    let (_b, _) = gw
        .bind("tab", &s.id, json!({"instance": "b", "tools": [greet()]}))
        .await;
    let rx = invoke(&host, &s.id, "greet", json!({"target": "a", "name": "Ada"}));
    let call = a.expect("tool.call").await;
    assert_eq!(
        call["args"],
        json!({"name": "Ada"}),
        "target is the gateway's"
    );
    answer(&mut a, &call, json!("hi")).await;
    assert_eq!(result_of(rx).await.data, Some(json!("hi")));
    let (c, msg) = result(&host, &s.id, "greet", json!({"target": "a", "name": 7})).await;
    assert_eq!(c.as_deref(), Some("INVALID_JSON"), "{msg}");
    assert!(msg.contains("'/name'"), "{msg}");
    fence(&mut a).await;
    let (c, _) = result(&host, &s.id, "list_tab_instances", json!({})).await;
    assert_eq!(
        c, None,
        "the generated tool takes no schema of the provider's"
    );
}

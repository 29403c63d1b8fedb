//! Provider → gateway: every JSON example of the two spec documents
//! (`provider-interface-v2.md`, `provider-interface-core-profile.md`) decodes through
//! [`tap_protocol::decode`] into the expected variant with the expected field values.
//!
//! Examples are copied verbatim from the spec text. Where the spec elides content with
//! `...` or `[...]` (not JSON), the test says so and fills in the smallest valid content.

use serde_json::{json, Value};
use std::collections::BTreeMap;
use tap_protocol::provider::*;
use tap_protocol::{ErrorCode, JsonObject};

/// Decodes a spec example, failing the test with the example on error.
fn decode(json: &str) -> ProviderMessage {
    tap_protocol::decode::<ProviderMessage>(json.as_bytes(), ProviderMessage::TYPES)
        .unwrap_or_else(|e| panic!("spec example failed to decode: {e:?}\n{json}"))
}

/// Serializing the decoded value gives back the example (same field names, no added nulls).
fn assert_reserializes(json: &str, msg: &ProviderMessage) {
    let expected: Value = serde_json::from_str(json).unwrap();
    let actual = serde_json::to_value(msg).unwrap();
    assert_eq!(
        actual, expected,
        "re-serialized message differs from the spec example"
    );
}

fn obj(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

fn tool(name: &str, description: &str, parameters: Value, timeout: Option<u64>) -> ToolDef {
    ToolDef {
        name: name.into(),
        description: description.into(),
        parameters: parameters.into(),
        timeout,
        ..Default::default()
    }
}

fn greet_schema() -> Value {
    json!({ "type": "object", "properties": { "name": { "type": "string" } }, "required": ["name"] })
}

// ------------------------------------------------------------------ auth

#[test]
fn auth_with_project_token() {
    // v2 "Project providers", v2 "auth — authenticate on connect", core "Authentication".
    let json = r#"{ "type": "auth", "token": "ptk-a8f3..." }"#;
    let msg = decode(json);
    let ProviderMessage::Auth(auth) = &msg else {
        panic!("expected Auth, got {msg:?}")
    };
    assert_eq!(auth.token.as_deref(), Some("ptk-a8f3..."));
    assert_eq!(auth.mode, None);
    assert_eq!(msg.type_name(), "auth");
    assert_reserializes(json, &msg);
}

#[test]
fn auth_quickstart_placeholder_token() {
    // v2 "Quickstart" step 2.
    let json = r#"{ "type": "auth", "token": "<your TAP_PROVIDER_TOKEN>" }"#;
    let ProviderMessage::Auth(auth) = decode(json) else {
        panic!("expected Auth")
    };
    assert_eq!(auth.token.as_deref(), Some("<your TAP_PROVIDER_TOKEN>"));
    assert_eq!(auth.mode, None);
}

#[test]
fn auth_with_issued_external_token() {
    // v2 "External providers" step 7.
    let json = r#"{ "type": "auth", "token": "ext-tok-9f2b..." }"#;
    let ProviderMessage::Auth(auth) = decode(json) else {
        panic!("expected Auth")
    };
    assert_eq!(
        auth,
        Auth {
            token: Some("ext-tok-9f2b...".into()),
            ..Auth::default()
        }
    );
}

#[test]
fn auth_pair_mode() {
    // v2 "External providers" step 1 and "auth — authenticate on connect".
    let json = r#"{ "type": "auth", "mode": "pair" }"#;
    let msg = decode(json);
    let ProviderMessage::Auth(auth) = &msg else {
        panic!("expected Auth, got {msg:?}")
    };
    assert_eq!(auth.mode.as_deref(), Some("pair"));
    assert_eq!(auth.token, None);
    assert_reserializes(json, &msg);
}

#[test]
fn auth_confirm() {
    // v2 "External providers" step 5 and "auth.confirm — confirm pairing code".
    let json = r#"{ "type": "auth.confirm", "code": "847293" }"#;
    let msg = decode(json);
    let ProviderMessage::AuthConfirm(c) = &msg else {
        panic!("expected AuthConfirm, got {msg:?}")
    };
    assert_eq!(c.code, "847293");
    assert_eq!(msg.type_name(), "auth.confirm");
    assert_reserializes(json, &msg);
}

// ------------------------------------------------------------------ hello

const HELLO_FULL: &str = r#"{
"type": "hello",
"name": "my-provider",
"protocolVersion": 2,
"session": "abc123",
"instance": "tab-a3f8",
"reconnectToken": "tok-xyz789",
"startup_context": "Provider loaded. Monitoring 3 endpoints.",
"metadata": {
"url": "https://app.example.com",
"title": "Dashboard"
},
"tools": [
{
"name": "my_tool",
"description": "Does something useful",
"timeout": 15000,
"parameters": {
"type": "object",
"properties": {
"query": { "type": "string" }
},
"required": ["query"]
}
}
],
"hooks": {
"onPreToolUse": [
{
"match": { "tool": "shell", "args": "git push" },
"action": "gate",
"gateId": "check-before-push"
}
],
"transforms": {
"code_change_rules": { "action": "callback" },
"custom_instructions": {
"action": "append",
"content": "This repo uses pnpm, not npm."
}
}
},
"subscribe": ["user.message", "assistant.message"],
"context": "CI is currently passing. No active deploys."
}"#;

fn hello_full_expected() -> Hello {
    let mut transforms = BTreeMap::new();
    transforms.insert(
        "code_change_rules".to_string(),
        Some(Transform {
            action: TransformAction::Callback,
            content: None,
        }),
    );
    transforms.insert(
        "custom_instructions".to_string(),
        Some(Transform {
            action: TransformAction::Append,
            content: Some("This repo uses pnpm, not npm.".into()),
        }),
    );
    Hello {
        name: "my-provider".into(),
        protocol_version: 2,
        session: Some("abc123".into()),
        instance: Some("tab-a3f8".into()),
        reconnect_token: Some("tok-xyz789".into()),
        startup_context: Some("Provider loaded. Monitoring 3 endpoints.".into()),
        metadata: Some(obj(
            json!({ "url": "https://app.example.com", "title": "Dashboard" }),
        )),
        tools: Some(vec![tool(
            "my_tool",
            "Does something useful",
            json!({
                "type": "object",
                "properties": { "query": { "type": "string" } },
                "required": ["query"]
            }),
            Some(15000),
        )]),
        hooks: Some(Hooks {
            on_pre_tool_use: Some(vec![HookRule {
                matcher: HookMatch {
                    tool: Some("shell".into()),
                    args: Some("git push".into()),
                    provider: None,
                    profile: None,
                    client: None,
                    other: JsonObject::new(),
                },
                action: HookAction::Gate,
                reason: None,
                content: None,
                gate_id: Some("check-before-push".into()),
                fail_open: false,
            }]),
            transforms: Some(transforms),
        }),
        subscribe: Some(vec!["user.message".into(), "assistant.message".into()]),
        context: Some("CI is currently passing. No active deploys.".into()),
        concurrency: None,
    }
}

#[test]
fn hello_full_example() {
    // v2 "hello — register as a provider".
    let msg = decode(HELLO_FULL);
    let ProviderMessage::Hello(hello) = &msg else {
        panic!("expected Hello, got {msg:?}")
    };
    assert_eq!(**hello, hello_full_expected());
    // Spot checks that do not depend on building the whole expected value right.
    assert_eq!(
        hello.startup_context.as_deref(),
        Some("Provider loaded. Monitoring 3 endpoints.")
    );
    assert_eq!(hello.reconnect_token.as_deref(), Some("tok-xyz789"));
    assert_eq!(hello.tools.as_ref().unwrap()[0].timeout, Some(15000));
    assert_eq!(msg.type_name(), "hello");
    assert_reserializes(HELLO_FULL, &msg);
    // `startup_context` stays snake_case on the wire; `reconnectToken` stays camelCase.
    let v = serde_json::to_value(&msg).unwrap();
    assert!(v.get("startup_context").is_some());
    assert!(v.get("startupContext").is_none());
    assert!(v.get("reconnect_token").is_none());
}

#[test]
fn hello_full_example_with_concurrency() {
    // The full example plus the "Tool concurrency" fragment's `concurrency` field.
    let mut v: Value = serde_json::from_str(HELLO_FULL).unwrap();
    v["concurrency"] = json!({ "max": 1, "scope": "instance" });
    let json = v.to_string();
    let msg = decode(&json);
    let ProviderMessage::Hello(hello) = &msg else {
        panic!("expected Hello")
    };
    let mut expected = hello_full_expected();
    expected.concurrency = Some(Concurrency {
        max: 1,
        scope: ConcurrencyScope::Instance,
    });
    assert_eq!(**hello, expected);
    assert_reserializes(&json, &msg);
}

#[test]
fn hello_concurrency_fragment() {
    // v2 "Tool concurrency". The spec's `...` stands for the other fields; the one
    // required field it elides, `protocolVersion`, is filled in.
    let json = r#"{
"type": "hello",
"name": "browser",
"concurrency": { "max": 1, "scope": "instance" },
"protocolVersion": 2
}"#;
    let ProviderMessage::Hello(hello) = decode(json) else {
        panic!("expected Hello")
    };
    assert_eq!(hello.name, "browser");
    assert_eq!(
        hello.concurrency,
        Some(Concurrency {
            max: 1,
            scope: ConcurrencyScope::Instance
        })
    );
    assert_eq!(hello.session, None);
    assert_eq!(hello.tools, None);
}

#[test]
fn hello_concurrency_scopes() {
    // "scope — "instance" (per name+instance), "provider" (all instances), or "tool"".
    for (scope, expected) in [
        ("instance", ConcurrencyScope::Instance),
        ("provider", ConcurrencyScope::Provider),
        ("tool", ConcurrencyScope::Tool),
    ] {
        let json = format!(
            r#"{{"type":"hello","name":"b","protocolVersion":2,"concurrency":{{"max":3,"scope":"{scope}"}}}}"#
        );
        let ProviderMessage::Hello(hello) = decode(&json) else {
            panic!("expected Hello")
        };
        let c = hello.concurrency.unwrap();
        assert_eq!(c.max, 3);
        assert_eq!(c.scope, expected);
    }
    // Scope omitted: defaults to per-instance.
    let ProviderMessage::Hello(hello) =
        decode(r#"{"type":"hello","name":"b","protocolVersion":2,"concurrency":{"max":2}}"#)
    else {
        panic!("expected Hello")
    };
    assert_eq!(hello.concurrency.unwrap().scope, ConcurrencyScope::Instance);
}

#[test]
fn hello_core_profile_example() {
    // core "hello — Provider → Gateway".
    let json = r#"{
"type": "hello", "name": "my-provider", "protocolVersion": 2,
"session": "abc123",
"tools": [{
"name": "greet", "description": "Say hello",
"parameters": { "type": "object", "properties": { "name": { "type": "string" } }, "required": ["name"] }
}]
}"#;
    let msg = decode(json);
    let ProviderMessage::Hello(hello) = &msg else {
        panic!("expected Hello")
    };
    assert_eq!(
        **hello,
        Hello {
            name: "my-provider".into(),
            protocol_version: 2,
            session: Some("abc123".into()),
            tools: Some(vec![tool("greet", "Say hello", greet_schema(), None)]),
            ..Hello::default()
        }
    );
    assert_reserializes(json, &msg);
}

#[test]
fn hello_minimal_node_provider() {
    // v2 "Minimal Node.js provider": the object passed to JSON.stringify, with
    // `msg.active[0]?.id ?? "all"` evaluated to "all" (no sessions).
    let json = r#"{
"type": "hello",
"name": "my-provider",
"protocolVersion": 2,
"session": "all",
"tools": [{
"name": "greet",
"description": "Say hello",
"parameters": { "type": "object", "properties": { "name": { "type": "string" } }, "required": ["name"] }
}]
}"#;
    let ProviderMessage::Hello(hello) = decode(json) else {
        panic!("expected Hello")
    };
    assert_eq!(hello.session.as_deref(), Some("all"));
    assert_eq!(
        hello.tools.unwrap(),
        vec![tool("greet", "Say hello", greet_schema(), None)]
    );
}

#[test]
fn hello_browser_provider_first_connect() {
    // v2 "Browser (external provider — pairing auth)", `register()`: on first connect
    // `reconnectToken` is `null`, which JSON.stringify sends as `null`.
    let json = r#"{
"type": "hello",
"name": "browser",
"protocolVersion": 2,
"instance": "tab-x7q2",
"reconnectToken": null,
"session": "abc123",
"metadata": { "url": "https://app.example.com/", "title": "Dashboard" },
"tools": [
{ "name": "page_title", "description": "Get page title", "parameters": {} },
{ "name": "screenshot", "description": "Screenshot viewport (downscaled to <5MB)", "timeout": 15000, "parameters": {} }
]
}"#;
    let ProviderMessage::Hello(hello) = decode(json) else {
        panic!("expected Hello")
    };
    assert_eq!(hello.name, "browser");
    assert_eq!(hello.instance.as_deref(), Some("tab-x7q2"));
    assert_eq!(hello.reconnect_token, None);
    assert_eq!(hello.session.as_deref(), Some("abc123"));
    assert_eq!(
        hello.metadata,
        Some(obj(
            json!({ "url": "https://app.example.com/", "title": "Dashboard" })
        ))
    );
    assert_eq!(
        hello.tools.unwrap(),
        vec![
            tool("page_title", "Get page title", json!({}), None),
            tool(
                "screenshot",
                "Screenshot viewport (downscaled to <5MB)",
                json!({}),
                Some(15000)
            ),
        ]
    );
}

#[test]
fn hello_python_provider() {
    // v2 "Python (project provider — token auth)", with no active session.
    let json = r#"{
"type": "hello",
"name": "python-provider",
"protocolVersion": 2,
"session": "all",
"tools": [{
"name": "compute",
"description": "Evaluate a Python expression",
"parameters": {
"type": "object",
"properties": {"expr": {"type": "string"}},
"required": ["expr"]
}
}]
}"#;
    let ProviderMessage::Hello(hello) = decode(json) else {
        panic!("expected Hello")
    };
    assert_eq!(hello.name, "python-provider");
    let tools = hello.tools.unwrap();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].name, "compute");
    assert_eq!(tools[0].parameters.to_value()["required"], json!(["expr"]));
}

#[test]
fn tool_def_without_parameters_or_description() {
    // `{}` means "no arguments"; a missing `parameters` is the same.
    let json = r#"{"type":"hello","name":"p","protocolVersion":2,"tools":[{"name":"ping"}]}"#;
    let ProviderMessage::Hello(hello) = decode(json) else {
        panic!("expected Hello")
    };
    let t = &hello.tools.unwrap()[0];
    assert_eq!(t.name, "ping");
    assert_eq!(t.description, "");
    assert_eq!(t.parameters, json!({}));
    assert_eq!(t.timeout, None);
}

#[test]
fn auto_generated_multi_instance_tool_schema_is_a_tool_def() {
    // v2 "Multi-instance providers": the gateway-generated schema has the tool-def shape.
    let json = r#"{
"name": "browser_screenshot",
"description": "Screenshot the viewport",
"parameters": {
"type": "object",
"properties": {
"target": {
"type": "string",
"description": "Tab instance ID. Available: tab-a3f8 (Dashboard — MyApp), tab-b2c1 (Settings)"
}
}
}
}"#;
    let t: ToolDef = serde_json::from_str(json).unwrap();
    assert_eq!(t.name, "browser_screenshot");
    assert_eq!(t.description, "Screenshot the viewport");
    assert_eq!(
        t.parameters.to_value()["properties"]["target"]["type"],
        "string"
    );
    assert_eq!(
        serde_json::to_value(&t).unwrap(),
        serde_json::from_str::<Value>(json).unwrap()
    );
}

// ------------------------------------------------------------------ hook rules

#[test]
fn hook_rule_gate_fragment() {
    // v2 "onPreToolUse rules".
    let json = r#"{
"match": { "tool": "shell", "args": "git push" },
"action": "gate",
"gateId": "check-ci-status"
}"#;
    let rule: HookRule = serde_json::from_str(json).unwrap();
    assert_eq!(rule.matcher.tool.as_deref(), Some("shell"));
    assert_eq!(rule.matcher.args.as_deref(), Some("git push"));
    assert_eq!(rule.matcher.provider, None);
    assert!(rule.matcher.other.is_empty());
    assert_eq!(rule.action, HookAction::Gate);
    assert_eq!(rule.gate_id.as_deref(), Some("check-ci-status"));
    assert!(!rule.fail_open);
    assert_eq!(
        serde_json::to_value(&rule).unwrap(),
        serde_json::from_str::<Value>(json).unwrap()
    );
}

#[test]
fn hook_rule_fail_open_fragment() {
    // v2 "Gate timeout behavior": `{ "action": "gate", "gateId": "...", "failOpen": true }`.
    let json = r#"{ "action": "gate", "gateId": "...", "failOpen": true }"#;
    let rule: HookRule = serde_json::from_str(json).unwrap();
    assert_eq!(rule.action, HookAction::Gate);
    assert_eq!(rule.gate_id.as_deref(), Some("..."));
    assert!(rule.fail_open);
    assert_eq!(rule.matcher, HookMatch::default());
    let v = serde_json::to_value(&rule).unwrap();
    assert_eq!(v["failOpen"], json!(true));
}

#[test]
fn hook_rule_deny_and_provider_scope() {
    let json = r#"{ "match": { "tool": "shell", "provider": "guardian" }, "action": "deny", "reason": "no" }"#;
    let rule: HookRule = serde_json::from_str(json).unwrap();
    assert_eq!(rule.action, HookAction::Deny);
    assert_eq!(rule.reason.as_deref(), Some("no"));
    assert_eq!(rule.matcher.provider.as_deref(), Some("guardian"));
}

// ------------------------------------------------------------------ goodbye, session.ready, shutdown.ready

#[test]
fn goodbye_with_reason() {
    // v2 "goodbye — graceful disconnect", core "goodbye — Provider → Gateway".
    let json = r#"{
"type": "goodbye",
"reason": "shutting down"
}"#;
    let msg = decode(json);
    let ProviderMessage::Goodbye(g) = &msg else {
        panic!("expected Goodbye, got {msg:?}")
    };
    assert_eq!(g.reason.as_deref(), Some("shutting down"));
    assert_reserializes(json, &msg);

    // core one-liner, and the core examples' "session ending".
    let ProviderMessage::Goodbye(g) = decode(r#"{ "type": "goodbye", "reason": "shutting down" }"#)
    else {
        panic!("expected Goodbye")
    };
    assert_eq!(g.reason.as_deref(), Some("shutting down"));
    let ProviderMessage::Goodbye(g) = decode(r#"{"type": "goodbye", "reason": "session ending"}"#)
    else {
        panic!("expected Goodbye")
    };
    assert_eq!(g.reason.as_deref(), Some("session ending"));
}

#[test]
fn goodbye_reason_is_optional() {
    // core: "`reason` is optional".
    let ProviderMessage::Goodbye(g) = decode(r#"{ "type": "goodbye" }"#) else {
        panic!("expected Goodbye")
    };
    assert_eq!(g.reason, None);
}

#[test]
fn session_ready() {
    // v2 "session.ready" and the `"all"` binding one-liner.
    for json in [
        r#"{
"type": "session.ready",
"sessionId": "new-session-id"
}"#,
        r#"{ "type": "session.ready", "sessionId": "new-session-id" }"#,
    ] {
        let msg = decode(json);
        let ProviderMessage::SessionReady(r) = &msg else {
            panic!("expected SessionReady, got {msg:?}")
        };
        assert_eq!(r.session_id, "new-session-id");
        assert_eq!(msg.type_name(), "session.ready");
        assert_reserializes(json, &msg);
    }
}

#[test]
fn shutdown_ready() {
    // v2 "shutdown.ready — async cleanup complete".
    let json = r#"{
"type": "shutdown.ready",
"sessionId": "abc123"
}"#;
    let msg = decode(json);
    let ProviderMessage::ShutdownReady(r) = &msg else {
        panic!("expected ShutdownReady, got {msg:?}")
    };
    assert_eq!(r.session_id, "abc123");
    assert_eq!(msg.type_name(), "shutdown.ready");
    assert_reserializes(json, &msg);
}

// ------------------------------------------------------------------ tool.result, tool.progress

#[test]
fn tool_result_data_object() {
    // v2 "tool.result — respond to a tool invocation", success.
    let json = r#"{
"type": "tool.result",
"id": "call-123",
"data": { "user": "alice", "role": "admin" }
}"#;
    let msg = decode(json);
    let ProviderMessage::ToolResult(r) = &msg else {
        panic!("expected ToolResult, got {msg:?}")
    };
    assert_eq!(
        *r,
        ToolResult {
            id: "call-123".into(),
            data: Some(json!({ "user": "alice", "role": "admin" })),
            ..ToolResult::default()
        }
    );
    assert_reserializes(json, &msg);
}

#[test]
fn tool_result_data_string() {
    // v2 quickstart step 7, core "tool.result — Provider → Gateway".
    for (json, id, data) in [
        (
            r#"{ "type": "tool.result", "id": "c-1", "data": "result" }"#,
            "c-1",
            "result",
        ),
        (
            r#"{ "type": "tool.result", "id": "call-123", "data": "Hello, Alice!" }"#,
            "call-123",
            "Hello, Alice!",
        ),
    ] {
        let msg = decode(json);
        let ProviderMessage::ToolResult(r) = &msg else {
            panic!("expected ToolResult")
        };
        assert_eq!(r.id, id);
        assert_eq!(r.data, Some(json!(data)));
        assert_eq!(r.error, None);
        assert_eq!(r.error_code, None);
        assert_eq!(r.file, None);
        assert_reserializes(json, &msg);
    }
}

#[test]
fn tool_result_error_not_retryable() {
    // v2 "tool.result", failure.
    let json = r#"{
"type": "tool.result",
"id": "call-123",
"error": "Element not found: #submit-btn",
"errorCode": "NOT_FOUND",
"retryable": false
}"#;
    let msg = decode(json);
    let ProviderMessage::ToolResult(r) = &msg else {
        panic!("expected ToolResult, got {msg:?}")
    };
    assert_eq!(
        *r,
        ToolResult {
            id: "call-123".into(),
            error: Some("Element not found: #submit-btn".into()),
            error_code: Some(ErrorCode::NotFound),
            retryable: Some(false),
            ..ToolResult::default()
        }
    );
    assert_reserializes(json, &msg);
}

#[test]
fn tool_result_error_retryable_true() {
    let ProviderMessage::ToolResult(r) = decode(
        r#"{"type":"tool.result","id":"call-9","error":"tab closed","errorCode":"DISCONNECTED","retryable":true}"#,
    ) else {
        panic!("expected ToolResult")
    };
    assert_eq!(r.retryable, Some(true));
    assert_eq!(r.error_code, Some(ErrorCode::Disconnected));
}

#[test]
fn tool_result_core_error_and_cancel() {
    // core: failure with NOT_FOUND, and the mandatory reply to `tool.cancel`.
    let ProviderMessage::ToolResult(r) = decode(
        r#"{ "type": "tool.result", "id": "call-123", "error": "Not found", "errorCode": "NOT_FOUND" }"#,
    ) else {
        panic!("expected ToolResult")
    };
    assert_eq!(r.error.as_deref(), Some("Not found"));
    assert_eq!(r.error_code, Some(ErrorCode::NotFound));
    assert_eq!(r.retryable, None);

    let json = r#"{ "type": "tool.result", "id": "call-123", "error": "Cancelled", "errorCode": "CANCELLED" }"#;
    let msg = decode(json);
    let ProviderMessage::ToolResult(r) = &msg else {
        panic!("expected ToolResult")
    };
    assert_eq!(r.id, "call-123");
    assert_eq!(r.error.as_deref(), Some("Cancelled"));
    assert_eq!(r.error_code, Some(ErrorCode::Cancelled));
    assert_eq!(r.data, None);
    assert_reserializes(json, &msg);
}

#[test]
fn tool_result_quickstart_cancel_without_error_text() {
    // v2 quickstart step 8: only `errorCode`.
    let ProviderMessage::ToolResult(r) =
        decode(r#"{ "type": "tool.result", "id": "c-1", "errorCode": "CANCELLED" }"#)
    else {
        panic!("expected ToolResult")
    };
    assert_eq!(r.id, "c-1");
    assert_eq!(r.error, None);
    assert_eq!(r.error_code, Some(ErrorCode::Cancelled));
}

#[test]
fn tool_result_browser_examples() {
    // v2 browser provider: `handleCancel` and the screenshot result.
    let ProviderMessage::ToolResult(r) = decode(
        r#"{"type":"tool.result","id":"call-7","error":"Cancelled","errorCode":"CANCELLED","retryable":false}"#,
    ) else {
        panic!("expected ToolResult")
    };
    assert_eq!(r.error_code, Some(ErrorCode::Cancelled));
    assert_eq!(r.retryable, Some(false));

    let ProviderMessage::ToolResult(r) = decode(
        r#"{"type":"tool.result","id":"call-8","data":{"image":"data:image/jpeg;base64,/9j/4AAQ"}}"#,
    ) else {
        panic!("expected ToolResult")
    };
    assert_eq!(
        r.data,
        Some(json!({ "image": "data:image/jpeg;base64,/9j/4AAQ" }))
    );
}

#[test]
fn tool_result_file_ref() {
    // v2 "Payload limits".
    let json = r#"{ "type": "tool.result", "id": "call-123", "file": { "path": "/home/user/.copilot/providers/browser/screenshot-abc.png", "mimeType": "image/png", "size": 8421000, "ttl": 300 } }"#;
    let msg = decode(json);
    let ProviderMessage::ToolResult(r) = &msg else {
        panic!("expected ToolResult, got {msg:?}")
    };
    assert_eq!(r.id, "call-123");
    assert_eq!(r.data, None);
    assert_eq!(
        r.file,
        Some(FileRef {
            path: "/home/user/.copilot/providers/browser/screenshot-abc.png".into(),
            mime_type: "image/png".into(),
            size: 8_421_000,
            ttl: 300,
        })
    );
    assert_reserializes(json, &msg);
}

#[test]
fn tool_progress() {
    // v2 "tool.progress — incremental status for slow tools".
    let json = r#"{
"type": "tool.progress",
"id": "call-123",
"message": "Capturing viewport... 60%"
}"#;
    let msg = decode(json);
    let ProviderMessage::ToolProgress(p) = &msg else {
        panic!("expected ToolProgress, got {msg:?}")
    };
    assert_eq!(p.id, "call-123");
    assert_eq!(p.message, "Capturing viewport... 60%");
    assert_eq!(msg.type_name(), "tool.progress");
    assert_reserializes(json, &msg);

    // Browser provider: `{ type: "tool.progress", id: msg.id, message: "Capturing..." }`.
    let ProviderMessage::ToolProgress(p) =
        decode(r#"{"type":"tool.progress","id":"call-8","message":"Capturing..."}"#)
    else {
        panic!("expected ToolProgress")
    };
    assert_eq!(p.message, "Capturing...");
}

// ------------------------------------------------------------------ gate.result, transform.result

#[test]
fn gate_result() {
    // v2 "gate.result — respond to a hook gate check".
    let json = r#"{
"type": "gate.result",
"gateId": "check-before-push",
"callId": "gate-456",
"decision": "deny",
"reason": "CI is failing on this branch. Fix tests first."
}"#;
    let msg = decode(json);
    let ProviderMessage::GateResult(g) = &msg else {
        panic!("expected GateResult, got {msg:?}")
    };
    assert_eq!(
        *g,
        GateResult {
            gate_id: Some("check-before-push".into()),
            call_id: "gate-456".into(),
            decision: GateDecision::Deny,
            reason: Some("CI is failing on this branch. Fix tests first.".into()),
        }
    );
    assert_reserializes(json, &msg);
}

#[test]
fn gate_result_decisions() {
    // `decision`: "allow" | "deny" | "context".
    for (s, d) in [
        ("allow", GateDecision::Allow),
        ("deny", GateDecision::Deny),
        ("context", GateDecision::Context),
    ] {
        let json = format!(r#"{{"type":"gate.result","callId":"g-1","decision":"{s}"}}"#);
        let ProviderMessage::GateResult(g) = decode(&json) else {
            panic!("expected GateResult")
        };
        assert_eq!(g.decision, d);
        assert_eq!(g.gate_id, None);
        assert_eq!(g.reason, None);
    }
}

#[test]
fn transform_result() {
    // v2 "transform.result — respond to a transform callback".
    let json = r#"{
"type": "transform.result",
"callId": "tx-789",
"content": "...existing content plus dynamic additions based on live state..."
}"#;
    let msg = decode(json);
    let ProviderMessage::TransformResult(t) = &msg else {
        panic!("expected TransformResult, got {msg:?}")
    };
    assert_eq!(t.call_id, "tx-789");
    assert_eq!(
        t.content,
        "...existing content plus dynamic additions based on live state..."
    );
    assert_reserializes(json, &msg);
}

// ------------------------------------------------------------------ push

#[test]
fn push_v2_example() {
    // v2 "push — send an event into the session".
    let json = r#"{
"type": "push",
"stream": "ci-watch",
"event": "CI failed on test/auth.spec.ts",
"level": "inject",
"metadata": { "kind": "ci-failure", "runId": 12345 }
}"#;
    let msg = decode(json);
    let ProviderMessage::Push(p) = &msg else {
        panic!("expected Push, got {msg:?}")
    };
    assert_eq!(
        *p,
        Push {
            level: PushLevel::Inject,
            event: Some("CI failed on test/auth.spec.ts".into()),
            prompt: None,
            stream: Some("ci-watch".into()),
            session_id: None,
            broadcast: false,
            metadata: Some(obj(json!({ "kind": "ci-failure", "runId": 12345 }))),
        }
    );
    assert_reserializes(json, &msg);
}

#[test]
fn push_core_example() {
    // core "push — Provider → Gateway".
    let json = r#"{ "type": "push", "level": "inject", "event": "Page asks for help", "stream": "detour" }"#;
    let msg = decode(json);
    let ProviderMessage::Push(p) = &msg else {
        panic!("expected Push, got {msg:?}")
    };
    assert_eq!(p.level, PushLevel::Inject);
    assert_eq!(p.event.as_deref(), Some("Page asks for help"));
    assert_eq!(p.stream.as_deref(), Some("detour"));
    assert_eq!(p.session_id, None);
    assert_eq!(p.metadata, None);
    assert!(!p.broadcast);
    assert_reserializes(json, &msg);
}

#[test]
fn push_all_fields() {
    // Every field of the v2 `push` field table (`stream`, `sessionId`, `event`, `prompt`,
    // `level`, `metadata`) plus `broadcast`.
    let json = r#"{
"type": "push",
"stream": "ci-watch",
"sessionId": "abc123",
"event": "CI failed on test/auth.spec.ts",
"prompt": "CI failed. Investigate test/auth.spec.ts and propose a fix.",
"level": "surface",
"broadcast": true,
"metadata": { "kind": "ci-failure", "runId": 12345 }
}"#;
    let msg = decode(json);
    let ProviderMessage::Push(p) = &msg else {
        panic!("expected Push, got {msg:?}")
    };
    assert_eq!(
        *p,
        Push {
            level: PushLevel::Surface,
            event: Some("CI failed on test/auth.spec.ts".into()),
            prompt: Some("CI failed. Investigate test/auth.spec.ts and propose a fix.".into()),
            stream: Some("ci-watch".into()),
            session_id: Some("abc123".into()),
            broadcast: true,
            metadata: Some(obj(json!({ "kind": "ci-failure", "runId": 12345 }))),
        }
    );
    assert_reserializes(json, &msg);
}

#[test]
fn push_levels_and_prompt_only() {
    for (s, l) in [
        ("keep", PushLevel::Keep),
        ("surface", PushLevel::Surface),
        ("inject", PushLevel::Inject),
    ] {
        let ProviderMessage::Push(p) =
            decode(&format!(r#"{{"type":"push","level":"{s}","event":"e"}}"#))
        else {
            panic!("expected Push")
        };
        assert_eq!(p.level, l);
    }
    // `event` is required "unless `prompt`": a prompt-only push decodes.
    let ProviderMessage::Push(p) =
        decode(r#"{"type":"push","level":"inject","prompt":"Summarize the build"}"#)
    else {
        panic!("expected Push")
    };
    assert_eq!(p.event, None);
    assert_eq!(p.prompt.as_deref(), Some("Summarize the build"));
}

// ------------------------------------------------------------------ tools.update

#[test]
fn tools_update_with_remove() {
    // v2 "tools.update — change tool definitions".
    let json = r#"{
"type": "tools.update",
"sessionId": "abc123",
"tools": [
{ "name": "new_tool", "description": "Just appeared", "parameters": {} }
],
"remove": ["old_tool"]
}"#;
    let msg = decode(json);
    let ProviderMessage::ToolsUpdate(u) = &msg else {
        panic!("expected ToolsUpdate, got {msg:?}")
    };
    assert_eq!(
        *u,
        ToolsUpdate {
            request_id: None,
            session_id: Some("abc123".into()),
            tools: vec![tool("new_tool", "Just appeared", json!({}), None)],
            remove: Some(vec!["old_tool".into()]),
        }
    );
    assert_reserializes(json, &msg);
}

#[test]
fn tools_update_with_request_id() {
    // v2 "Update acknowledgments"; the spec's `"tools": [...]` is filled with one tool.
    let json = r#"{ "type": "tools.update", "requestId": "req-42", "sessionId": "abc123", "tools": [{ "name": "t", "description": "d", "parameters": {} }] }"#;
    let msg = decode(json);
    let ProviderMessage::ToolsUpdate(u) = &msg else {
        panic!("expected ToolsUpdate, got {msg:?}")
    };
    assert_eq!(u.request_id.as_deref(), Some("req-42"));
    assert_eq!(u.session_id.as_deref(), Some("abc123"));
    assert_eq!(u.tools, vec![tool("t", "d", json!({}), None)]);
    assert_eq!(u.remove, None);
    assert_reserializes(json, &msg);
}

#[test]
fn tools_update_core_example() {
    // core "tools.update — Provider → Gateway": no requestId, no sessionId.
    let json = r#"{
"type": "tools.update",
"tools": [{
"name": "greet", "description": "Say hello",
"parameters": { "type": "object", "properties": { "name": { "type": "string" } } }
}]
}"#;
    let msg = decode(json);
    let ProviderMessage::ToolsUpdate(u) = &msg else {
        panic!("expected ToolsUpdate, got {msg:?}")
    };
    assert_eq!(
        *u,
        ToolsUpdate {
            request_id: None,
            session_id: None,
            tools: vec![tool(
                "greet",
                "Say hello",
                json!({ "type": "object", "properties": { "name": { "type": "string" } } }),
                None
            )],
            remove: None,
        }
    );
    assert_reserializes(json, &msg);
}

// ------------------------------------------------------------------ hooks.update, context.update

#[test]
fn hooks_update_with_null_transform() {
    // v2 "hooks.update — change hook rules or transforms".
    let json = r#"{
"type": "hooks.update",
"sessionId": "abc123",
"onPreToolUse": [
{
"match": { "tool": "edit", "file": "*.sql" },
"action": "context",
"content": "This is a migration file. Ensure backward compatibility."
}
],
"transforms": {
"code_change_rules": { "action": "callback" },
"custom_instructions": null
}
}"#;
    let msg = decode(json);
    let ProviderMessage::HooksUpdate(u) = &msg else {
        panic!("expected HooksUpdate, got {msg:?}")
    };
    assert_eq!(u.request_id, None);
    assert_eq!(u.session_id.as_deref(), Some("abc123"));

    let rules = u.on_pre_tool_use.as_ref().expect("onPreToolUse");
    assert_eq!(rules.len(), 1);
    let rule = &rules[0];
    assert_eq!(rule.action, HookAction::Context);
    assert_eq!(
        rule.content.as_deref(),
        Some("This is a migration file. Ensure backward compatibility.")
    );
    assert_eq!(rule.matcher.tool.as_deref(), Some("edit"));
    // `file` is not a matcher key this gateway interprets; it is kept, not dropped.
    assert_eq!(rule.matcher.other.get("file"), Some(&json!("*.sql")));

    let transforms = u.transforms.as_ref().expect("transforms");
    assert_eq!(transforms.len(), 2);
    assert_eq!(
        transforms.get("code_change_rules"),
        Some(&Some(Transform {
            action: TransformAction::Callback,
            content: None
        }))
    );
    // `null` is "remove this transform": present as a key, with no transform.
    assert_eq!(transforms.get("custom_instructions"), Some(&None));

    assert_reserializes(json, &msg);
}

#[test]
fn transform_actions() {
    for (s, a) in [
        ("append", TransformAction::Append),
        ("prepend", TransformAction::Prepend),
        ("replace", TransformAction::Replace),
        ("callback", TransformAction::Callback),
    ] {
        let t: Transform = serde_json::from_str(&format!(r#"{{"action":"{s}"}}"#)).unwrap();
        assert_eq!(t.action, a);
    }
}

#[test]
fn context_update() {
    // v2 "context.update — change ambient context".
    let json = r#"{
"type": "context.update",
"context": "CI is now passing. Deploy v2.4.3 completed."
}"#;
    let msg = decode(json);
    let ProviderMessage::ContextUpdate(c) = &msg else {
        panic!("expected ContextUpdate, got {msg:?}")
    };
    assert_eq!(
        *c,
        ContextUpdate {
            request_id: None,
            session_id: None,
            context: Some("CI is now passing. Deploy v2.4.3 completed.".into()),
        }
    );
    assert_reserializes(json, &msg);
}

// ------------------------------------------------------------------ filter.set, stream.query

#[test]
fn filter_set() {
    // v2 "filter.set — set gateway-side EventFilter for a stream".
    let json = r#"{
"type": "filter.set",
"stream": "git-watch",
"rules": [
{ "match": "behind=0", "outcome": "drop" },
{ "match": "conflicts=[1-9]", "outcome": "inject" },
{ "match": ".*", "outcome": "keep" }
]
}"#;
    let msg = decode(json);
    let ProviderMessage::FilterSet(f) = &msg else {
        panic!("expected FilterSet, got {msg:?}")
    };
    let rule = |pattern: &str, outcome| FilterRule {
        pattern: pattern.into(),
        outcome,
    };
    assert_eq!(
        *f,
        FilterSet {
            request_id: None,
            session_id: None,
            stream: "git-watch".into(),
            rules: vec![
                rule("behind=0", FilterOutcome::Drop),
                rule("conflicts=[1-9]", FilterOutcome::Inject),
                rule(".*", FilterOutcome::Keep),
            ],
        }
    );
    assert_reserializes(json, &msg);

    let ProviderMessage::FilterSet(f) = decode(
        r#"{"type":"filter.set","requestId":"r-1","stream":"s","rules":[{"match":"x","outcome":"surface"}]}"#,
    ) else {
        panic!("expected FilterSet")
    };
    assert_eq!(f.request_id.as_deref(), Some("r-1"));
    assert_eq!(f.rules[0].outcome, FilterOutcome::Surface);
}

#[test]
fn stream_query() {
    // v2 "stream.query — read EventStream history".
    let json = r#"{
"type": "stream.query",
"queryId": "q-1",
"sessionId": "abc123",
"streams": ["ci-watch@ci-watcher", "git-watch@guardian"],
"last": 10
}"#;
    let msg = decode(json);
    let ProviderMessage::StreamQuery(q) = &msg else {
        panic!("expected StreamQuery, got {msg:?}")
    };
    assert_eq!(
        *q,
        StreamQuery {
            query_id: "q-1".into(),
            session_id: Some("abc123".into()),
            streams: Some(vec![
                "ci-watch@ci-watcher".into(),
                "git-watch@guardian".into()
            ]),
            last: Some(10),
        }
    );
    assert_reserializes(json, &msg);
}

#[test]
fn stream_query_minimal() {
    let ProviderMessage::StreamQuery(q) = decode(r#"{"type":"stream.query","queryId":"q-2"}"#)
    else {
        panic!("expected StreamQuery")
    };
    assert_eq!(q.query_id, "q-2");
    assert_eq!(q.session_id, None);
    assert_eq!(q.streams, None);
    assert_eq!(q.last, None);
}

// ------------------------------------------------------------------ serialization shape

#[test]
fn serialized_provider_messages_omit_absent_fields() {
    let msg = ProviderMessage::ToolResult(ToolResult {
        id: "c-1".into(),
        data: Some(json!("ok")),
        ..ToolResult::default()
    });
    assert_eq!(
        serde_json::to_value(&msg).unwrap(),
        json!({ "type": "tool.result", "id": "c-1", "data": "ok" })
    );
    let msg = ProviderMessage::Hello(Box::new(Hello {
        name: "p".into(),
        protocol_version: 2,
        ..Hello::default()
    }));
    assert_eq!(
        serde_json::to_value(&msg).unwrap(),
        json!({ "type": "hello", "name": "p", "protocolVersion": 2 })
    );
}

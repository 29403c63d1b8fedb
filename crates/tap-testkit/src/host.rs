//! Session hosts through `tap-client`'s [`HostClient`] (a real `/session` socket): waiting
//! for events and results, invoking, prompts, streams, ending sessions.

use crate::provider::{answer, session_ids, Provider};
use crate::PATIENCE;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Arc;
use tap_client::HostClient;
use tap_protocol::host::{
    Delivery, HostEvent, HostToolResult, PromptApplied, SessionEnded, SessionRegister,
    SessionTools, ToolDecision,
};
use tap_protocol::provider::SessionInfo;
use tap_protocol::ErrorCode;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Next host event matching `pred`, skipping others.
///
/// A `session.tools` is seen without the gateway's built-in `tap_*` tools, which every set
/// holds ([`tap_gateway::builtin_tools`]): tests about providers' tools see exactly the
/// providers'. `features::agent_tools` asserts the built-ins on the raw events.
pub async fn next_host_event(
    host: &mut HostClient,
    pred: impl Fn(&HostEvent) -> bool,
) -> HostEvent {
    loop {
        let e = tokio::time::timeout(PATIENCE, host.next_event())
            .await
            .expect("timed out waiting for a host event")
            .expect("host connection closed");
        let e = match e {
            HostEvent::SessionTools(mut t) => {
                t.tools
                    .retain(|t| t.provider != tap_gateway::BUILTIN_PROVIDER);
                HostEvent::SessionTools(t)
            }
            other => other,
        };
        if pred(&e) {
            return e;
        }
    }
}

/// Waits for the terminal `tool.result` of an invocation started with `start_invoke`.
pub async fn result_of(rx: oneshot::Receiver<HostEvent>) -> HostToolResult {
    match tokio::time::timeout(PATIENCE, rx)
        .await
        .expect("timed out waiting for a tool.result")
        .expect("host connection closed before the result")
    {
        HostEvent::ToolResult(r) => r,
        other => panic!("expected a tool.result, got {other:?}"),
    }
}

/// Registers another session on `host` (not in the foreground).
pub async fn second_session(host: &HostClient, label: &str) -> SessionInfo {
    host.register_session(SessionRegister {
        label: Some(label.into()),
        cwd: Some(format!("/work/{label}")),
        foreground: false,
        ..Default::default()
    })
    .await
    .unwrap()
}

/// Calls `tool` in `session` through `host` and waits for its result.
pub async fn call_tool(
    host: &HostClient,
    session: &str,
    tool: &str,
    args: Value,
) -> HostToolResult {
    result_of(invoke(host, session, tool, args)).await
}

/// The data of a call that must succeed (the test fails with the result otherwise).
pub async fn call_ok(host: &HostClient, session: &str, tool: &str, args: Value) -> Value {
    let r = call_tool(host, session, tool, args).await;
    assert!(r.error.is_none(), "{tool}: {r:?}");
    r.data.unwrap_or_default()
}

/// Starts an invocation from `host`; the receiver yields its one `tool.result`.
pub fn invoke(
    host: &HostClient,
    session: &str,
    tool: &str,
    args: Value,
) -> oneshot::Receiver<HostEvent> {
    host.start_invoke(session, tool, args).unwrap().1
}

/// Invokes `tool` and answers the provider's `tool.call` with `data`; returns the result.
pub async fn call_and_answer(
    host: &HostClient,
    p: &mut Provider,
    session: &str,
    tool: &str,
    data: Value,
) -> HostToolResult {
    let rx = invoke(host, session, tool, json!({}));
    let call = p.expect("tool.call").await;
    assert_eq!(call["tool"], tool, "{call}");
    answer(p, &call, data).await;
    result_of(rx).await
}

/// The result of invoking a tool nobody answers in time is decided by the gateway alone
/// (NOT_FOUND, INVALID_SESSION, RATE_LIMITED, ...).
pub async fn invoke_unanswered(host: &HostClient, session: &str, tool: &str) -> HostToolResult {
    result_of(invoke(host, session, tool, json!({}))).await
}

/// The error code of a result, if it failed.
pub fn code(r: &HostToolResult) -> Option<&str> {
    r.error_code.as_ref().map(ErrorCode::as_str)
}

/// Next `delivery` to `host`, skipping other events.
pub async fn next_delivery(host: &mut HostClient) -> Delivery {
    match next_host_event(host, |e| matches!(e, HostEvent::Delivery(_))).await {
        HostEvent::Delivery(d) => d,
        _ => unreachable!(),
    }
}

/// Every event the host got until now: a `status.get` answered proves the gateway sent
/// everything before it, and the client queued it before routing the answer.
pub async fn host_events_so_far(host: &mut HostClient) -> Vec<HostEvent> {
    host.status().await.unwrap();
    let mut seen = vec![];
    while let Ok(Some(e)) = tokio::time::timeout(std::time::Duration::ZERO, host.next_event()).await
    {
        seen.push(e);
    }
    seen
}

/// Next `session.tools` for `session` whose providers' tool names are exactly `want`
/// (sorted; [`next_host_event`] has left the built-in ones aside).
pub async fn tools_published(host: &mut HostClient, session: &str, want: &[&str]) -> SessionTools {
    let e = next_host_event(host, |e| {
        matches!(e, HostEvent::SessionTools(t) if t.session_id == session
            && t.tools.iter().map(|t| t.name.as_str()).eq(want.iter().copied()))
    })
    .await;
    match e {
        HostEvent::SessionTools(t) => t,
        _ => unreachable!(),
    }
}

/// Event texts stored in `key` (`stream@provider`) of `session`, newest first.
pub async fn stored(host: &HostClient, session: &str, key: &str) -> Vec<String> {
    let h = host
        .streams_history(session, Some(key), None)
        .await
        .unwrap();
    h.streams
        .get(key)
        .map(|v| v.iter().map(|e| e.event.clone()).collect())
        .unwrap_or_default()
}

/// The session's tool names as `status` reports them, sorted.
pub async fn session_tool_names(host: &HostClient, session: &str) -> Vec<String> {
    let status = host.status().await.unwrap();
    let s = status
        .sessions
        .iter()
        .find(|s| s.id == session)
        .unwrap_or_else(|| panic!("no session {session} in {status:?}"));
    let mut names = s.tools.clone();
    names.sort();
    names
}

/// The pre-tool-use decision for `tool` with `args`.
pub async fn precheck(host: &HostClient, session: &str, tool: &str, args: Value) -> ToolDecision {
    tokio::time::timeout(PATIENCE, host.precheck(session, tool, args))
        .await
        .expect("no tool.decision")
        .expect("precheck refused")
}

/// Prompt sections from `(name, text)` pairs.
pub fn sections(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `prompt.apply` of `pairs` to `session`, which must succeed.
pub async fn apply(host: &HostClient, session: &str, pairs: &[(&str, &str)]) -> PromptApplied {
    tokio::time::timeout(
        PATIENCE,
        host.apply_prompt(session, "prompt", sections(pairs)),
    )
    .await
    .expect("prompt.apply answered")
    .expect("prompt.apply succeeded")
}

/// Ends `session` from a task, so the test can act as the provider meanwhile.
pub fn end_in_background(host: &Arc<HostClient>, session: &str) -> JoinHandle<SessionEnded> {
    let host = host.clone();
    let session = session.to_string();
    tokio::spawn(async move { host.end_session(&session).await.unwrap() })
}

/// The outcome of [`end_in_background`].
pub async fn ended(task: JoinHandle<SessionEnded>) -> SessionEnded {
    tokio::time::timeout(PATIENCE, task)
        .await
        .expect("the session did not end")
        .unwrap()
}

/// The provider's view of `session` ending: `shutdown.pending` (returned), then
/// `sessions.updated` without it.
pub async fn expect_shutdown(p: &mut Provider, session: &str) -> Value {
    let pending = p.expect("session.lifecycle").await;
    assert_eq!(pending["state"], "shutdown.pending", "{pending}");
    assert_eq!(pending["sessionId"], session, "{pending}");
    let updated = p.expect("sessions.updated").await;
    assert!(
        !session_ids(&updated).contains(&session.to_string()),
        "{updated}"
    );
    pending
}

/// Whether the gateway still lists a provider named `name`.
pub async fn provider_listed(host: &HostClient, name: &str) -> bool {
    host.status()
        .await
        .unwrap()
        .providers
        .iter()
        .any(|p| p.name.as_deref() == Some(name))
}

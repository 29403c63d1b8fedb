//! `tools/call` through the same path as a session host's: the hook precheck (a deny is an
//! `isError` result naming the reason; context is added to the result), then
//! `tools::call::call_tool` (arguments checked against the schema, gates, concurrency,
//! timeouts). MCP progress tokens get the provider's `tool.progress`; the request's
//! cancellation (`notifications/cancelled`, or the client gone) sends `tool.cancel`.
//! Both ways a call arrives go through [`call`]: rmcp's handler and the endpoint's own
//! answer to a plain stateless call (`fast.rs`).

use super::{attach, content};
use crate::request::CallRequest;
use crate::state::mcp_binding::Binding;
use crate::state::Core;
use crate::tools::progress::call_tool_reporting;
use crate::tools::traced;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ProgressNotificationParam, RequestId, RequestMetaObject,
};
use rmcp::service::Peer;
use rmcp::{ErrorData as McpError, RoleServer};
use tap_protocol::Json;
use tokio_util::sync::CancellationToken;

/// What a `tools/call` brings besides its name and arguments, however it arrived.
pub(crate) struct Asked<'a> {
    /// The request's `_meta` (`traceparent`, `progressToken`).
    pub meta: &'a RequestMetaObject,
    /// The request's cancellation.
    pub cancel: CancellationToken,
    /// Where progress notifications go: rmcp's peer. The endpoint's own answer has none,
    /// and takes no request with a progress token.
    pub peer: Option<&'a Peer<RoleServer>>,
    /// Which way it came: `rmcp` or `endpoint` (`fast.rs`), noted on the call's span as
    /// `mcp.path` for whoever reads a trace wondering which path served a call.
    pub path: &'static str,
    /// The request's id, with `peer`: what an MCP server asks the client during the call
    /// (`sampling`, `elicitation`) goes to this request's stream.
    pub origin: Option<RequestId>,
}

pub(crate) async fn call(
    core: &std::sync::Arc<Core>,
    binding: &Binding,
    request: CallToolRequestParams,
    context: Asked<'_>,
) -> Result<CallToolResult, McpError> {
    let name = request.name.to_string();
    let args = Json::Object(request.arguments.unwrap_or_default());
    // An unknown tool is a protocol error (MCP: "Unknown tools" → invalid params), not a
    // tool failure the model should read.
    let Some(mcp_result) = super::tools::exists(core, binding, &name)? else {
        let note = core
            .state()
            .sessions
            .get(&binding.session_id)
            .map(|s| s.profile_note())
            .unwrap_or_default();
        return Err(McpError::invalid_params(
            format!(
                "Unknown tool '{name}' in session '{}'{note}",
                binding.session_id
            ),
            None,
        ));
    };
    // Through `tap_call_tool`, the result is the called tool's: passed through as an MCP
    // result when that tool's is one.
    let mcp_result = match crate::state::search_defs::called(&name, &args) {
        Some((called, _)) => super::tools::exists(core, binding, called)?.unwrap_or(false),
        None => mcp_result,
    };
    // OpenTelemetry's convention for MCP: the client's trace context in the request's
    // `_meta.traceparent`.
    let traceparent = context
        .meta
        .get("traceparent")
        .and_then(|v| v.as_str())
        .map(str::to_string);
    let mut root = traced::open_call(
        core,
        &binding.session_id,
        &name,
        traceparent.as_deref(),
        "mcp",
    );
    root.set("mcp.path", context.path);
    let _asker = match (context.peer, context.origin) {
        (Some(peer), Some(origin)) => {
            super::asks::for_call(binding, root.context().trace_id, peer, origin)
        }
        _ => None,
    };
    let context_text =
        match crate::hooks::decide::precheck_call(core, &binding.session_id, &name, &args, &root)
            .await
        {
            Ok(context) => context,
            Err(e) => {
                root.fail(e.code.clone(), e.message.clone());
                return Ok(content::failure(&e.code.to_string(), &e.message));
            }
        };
    let _busy = attach::busy(core, binding);
    let request = CallRequest {
        session_id: binding.session_id.clone(),
        tool: name,
        args,
        cancel: context.cancel,
        progress: None,
        traceparent: None,
        caller: crate::request::Caller::Agent,
    };
    // Sent only to a client that asked (a progress token) and can hear it (a peer).
    let progress = context.meta.get_progress_token().zip(context.peer);
    let mut step = 0u32;
    let outcome = call_tool_reporting(core, request, &mut root, |message| {
        // Numbered for the client.
        step += 1;
        let note = progress.clone().map(|(t, peer)| {
            let note = ProgressNotificationParam::new(t, f64::from(step)).with_message(message);
            (note, peer.clone())
        });
        async move {
            if let Some((note, peer)) = note {
                // A client that stopped listening to progress still gets its result.
                let _ = peer.notify_progress(note).await;
            }
        }
    })
    .await;
    traced::end_call(root, &outcome);
    Ok(match outcome {
        Ok(data) if mcp_result => content::passed_through(data, context_text),
        Ok(data) => content::success(data, context_text),
        Err(e) => content::failure(&e.code.to_string(), &e.message),
    })
}

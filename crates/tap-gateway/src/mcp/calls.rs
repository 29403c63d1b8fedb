//! `tools/call` through the same path as a session host's: the hook precheck (a deny is an
//! `isError` result naming the reason; context is added to the result), then
//! `tools::call::call_tool` (arguments checked against the schema, gates, concurrency,
//! timeouts). MCP progress tokens get the provider's `tool.progress`; the request's
//! cancellation (`notifications/cancelled`, or the client gone) sends `tool.cancel`.

use super::binding::Binding;
use super::{attach, content};
use crate::state::Core;
use crate::tools::progress::call_tool_reporting;
use crate::tools::request::CallRequest;
use crate::tools::traced;
use rmcp::model::{CallToolRequestParams, CallToolResult, ProgressNotificationParam};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use tap_protocol::Json;

pub(crate) async fn call(
    core: &std::sync::Arc<Core>,
    binding: &Binding,
    request: CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResult, McpError> {
    let name = request.name.to_string();
    let args = Json::Object(request.arguments.unwrap_or_default());
    // An unknown tool is a protocol error (MCP: "Unknown tools" → invalid params), not a
    // tool failure the model should read.
    if !super::tools::exists(core, binding, &name)? {
        return Err(McpError::invalid_params(
            format!("Unknown tool '{name}' in session '{}'", binding.session_id),
            None,
        ));
    }
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
        cancel: context.ct.clone(),
        progress: None,
        traceparent: None,
        caller: crate::tools::request::Caller::Agent,
    };
    let token = context.meta.get_progress_token();
    let mut step = 0u32;
    let outcome = call_tool_reporting(core, request, &mut root, |message| {
        // Numbered for the client; sent only to a client that asked (a progress token).
        step += 1;
        let note = token
            .clone()
            .map(|t| ProgressNotificationParam::new(t, f64::from(step)).with_message(message));
        let peer = context.peer.clone();
        async move {
            if let Some(note) = note {
                // A client that stopped listening to progress still gets its result.
                let _ = peer.notify_progress(note).await;
            }
        }
    })
    .await;
    traced::end(root, &outcome);
    Ok(match outcome {
        Ok(data) => content::success(data, context_text),
        Err(e) => content::failure(&e.code.to_string(), &e.message),
    })
}

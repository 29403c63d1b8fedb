//! `tools/call` through the same path as a session host's: the hook precheck (a deny is an
//! `isError` result naming the reason; context is added to the result), then
//! `tools::call::call_tool` (arguments checked against the schema, gates, concurrency,
//! timeouts). MCP progress tokens get the provider's `tool.progress`; the request's
//! cancellation (`notifications/cancelled`, or the client gone) sends `tool.cancel`.

use super::binding::Binding;
use super::{attach, builtin, content};
use crate::hooks::decide::{pre_tool_use, Decision};
use crate::state::Core;
use crate::tools::request::CallRequest;
use rmcp::model::{CallToolRequestParams, CallToolResult, ProgressNotificationParam};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use tap_protocol::Json;
use tokio::sync::mpsc;

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
    if builtin::is_builtin(&name) {
        let result = builtin::check_args(&name, &args)
            .and_then(|()| builtin::call(core, binding, &name, &args));
        return Ok(match result {
            Ok(data) => content::success(data, None),
            Err((code, message)) => content::failure(&code.to_string(), &message),
        });
    }
    let context_text = match pre_tool_use(core, &binding.session_id, &name, &args).await {
        Ok(Decision::Allow) => None,
        Ok(Decision::Context(c)) => Some(c),
        Ok(Decision::Deny(reason)) => {
            return Ok(content::failure(
                "DENIED",
                &format!("A hook rule denied '{name}': {reason}"),
            ))
        }
        Err(e) => return Ok(content::failure(&e.code.to_string(), &e.message)),
    };
    attach::call_started(core, binding);
    let outcome = run(core, binding, name, args, context).await;
    attach::call_ended(core, binding);
    Ok(match outcome {
        Ok(data) => content::success(data, context_text),
        Err(e) => content::failure(&e.code.to_string(), &e.message),
    })
}

async fn run(
    core: &Core,
    binding: &Binding,
    tool: String,
    args: Json,
    context: &RequestContext<RoleServer>,
) -> Result<Json, crate::tools::request::CallError> {
    let (progress_tx, mut progress_rx) = mpsc::unbounded_channel();
    let token = context.meta.get_progress_token();
    let request = CallRequest {
        session_id: binding.session_id.clone(),
        tool,
        args,
        cancel: context.ct.clone(),
        progress: token.is_some().then_some(progress_tx),
    };
    let run = crate::tools::call::call_tool(core, request);
    tokio::pin!(run);
    let mut step = 0u32;
    loop {
        // Progress first: sent just before the result, it must arrive before it.
        tokio::select! {
            biased;
            Some(message) = progress_rx.recv() => {
                let Some(token) = token.clone() else { continue };
                step += 1;
                let note = ProgressNotificationParam::new(token, f64::from(step))
                    .with_message(message);
                // A client that stopped listening to progress still gets its result.
                let _ = context.peer.notify_progress(note).await;
            }
            outcome = &mut run => return outcome,
        }
    }
}

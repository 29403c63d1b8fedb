//! `tool.invoke` and `tool.precheck`: each runs in a task of its own, so other requests
//! on the connection are not held up, and answers go through the host entry.

use super::send_to_host;
use super::HostConn;
use crate::error::Error;
use crate::hooks::decide::Decision;
use crate::request::CallRequest;
use crate::tools::progress::call_tool_reporting;
use crate::tools::traced;
use tap_protocol::host::{HostError, HostEvent, HostToolProgress, HostToolResult, ToolInvoke};
use tap_protocol::ErrorCode;
use tokio_util::sync::CancellationToken;

impl HostConn {
    pub(super) fn invoke(&self, host_id: String, call: ToolInvoke) -> Result<(), Error> {
        if !call.args.is_object() {
            return Err(Error::new(
                ErrorCode::InvalidJson,
                "'args' must be a JSON object",
            ));
        }
        let cancel = CancellationToken::new();
        {
            let mut state = self.core.state();
            let host = state.hosts.get_mut(&host_id).expect("attached host exists");
            if Some(host.epoch) != self.attached.as_ref().map(|(_, e)| *e) {
                // Another connection resumed this host: a call read late from this one
                // does not run. The resume answered it `DISCONNECTED` if it was listed.
                return Ok(());
            }
            if host.invocations.contains_key(&call.call_id) {
                return Err(Error::new(
                    ErrorCode::InvalidJson,
                    format!("callId '{}' is already in flight", call.call_id),
                ));
            }
            host.invocations
                .insert(call.call_id.clone(), cancel.clone());
        }
        let core = self.core.clone();
        self.core.invocations.spawn(async move {
            let call_id = call.call_id;
            let mut root = traced::open_call(
                &core,
                &call.session_id,
                &call.tool,
                call.traceparent.as_deref(),
                "host",
            );
            root.set("call.id", call_id.as_str());
            let mcp_result = super::mcp_results::is_mcp(&core, &call.session_id, &call.tool);
            let request = CallRequest {
                session_id: call.session_id,
                tool: call.tool,
                args: call.args,
                cancel,
                progress: None,
                traceparent: None,
                caller: crate::request::Caller::Agent,
            };
            let outcome = call_tool_reporting(&core, request, &mut root, |message| {
                let progress = HostEvent::ToolProgress(HostToolProgress {
                    call_id: call_id.clone(),
                    message,
                });
                send_to_host(&core, &host_id, &progress);
                std::future::ready(())
            })
            .await;
            traced::end_call(root, &outcome);
            let outcome = match mcp_result {
                true => super::mcp_results::for_host(outcome),
                false => outcome,
            };
            let result = match outcome {
                Ok(data) => HostToolResult {
                    call_id: call_id.clone(),
                    data: Some(data),
                    error: None,
                    error_code: None,
                },
                Err(e) => HostToolResult {
                    call_id: call_id.clone(),
                    data: None,
                    error: Some(e.message),
                    error_code: Some(e.code),
                },
            };
            let mut state = core.state();
            if let Some(host) = state.hosts.get_mut(&host_id) {
                host.invocations.remove(&call_id);
                host.send(&HostEvent::ToolResult(result));
            }
        });
        Ok(())
    }

    /// `tool.precheck` → `tool.decision`. Gates may take up to 5 s, so the answer comes
    /// from a task; other requests on this connection are not held up.
    pub(super) fn precheck(
        &self,
        host_id: String,
        p: tap_protocol::host::ToolPrecheck,
    ) -> Result<(), Error> {
        use tap_protocol::host::{PrecheckDecision, ToolDecision};
        // Like `tool.invoke`, any host may ask about any session (`tap call` is a host of
        // its own); an unknown session is INVALID_SESSION from `pre_tool_use`.
        if !p.args.is_object() {
            return Err(Error::new(
                ErrorCode::InvalidJson,
                "'args' must be a JSON object",
            ));
        }
        let core = self.core.clone();
        self.core.invocations.spawn(async move {
            let mut span = core.tracer.start("tool.precheck", None);
            span.session(&p.session_id);
            span.tool(&p.tool);
            span.set("via", "host");
            let decision =
                crate::hooks::decide::pre_tool_use(&core, &p.session_id, &p.tool, &p.args, &span)
                    .await;
            traced::end(span, &decision);
            let event = match decision {
                Ok(decision) => {
                    let (decision, reason, context) = match decision {
                        Decision::Allow => (PrecheckDecision::Allow, None, None),
                        Decision::Deny(r) => (PrecheckDecision::Deny, Some(r), None),
                        Decision::Context(c) => (PrecheckDecision::Context, None, Some(c)),
                    };
                    HostEvent::ToolDecision(ToolDecision {
                        request_id: p.request_id,
                        decision,
                        reason,
                        context,
                    })
                }
                Err(e) => HostEvent::Error(HostError {
                    code: e.code,
                    message: e.message,
                    reply_to: Some("tool.precheck".into()),
                    request_id: Some(p.request_id),
                }),
            };
            send_to_host(&core, &host_id, &event);
        });
        Ok(())
    }
}

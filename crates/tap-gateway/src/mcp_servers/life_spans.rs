//! A server's life is kept in the ledger as spans, browsable with the traces:
//! `mcp_server.start` runs from its start to ready (ok, with its tool count and pid) or to
//! the failure; `mcp_server.exit` marks the end of a run (ok when stopped or restarted on
//! request, failed when it crashed), with what comes next (`restart`, `parked`, `stopped`).

use super::server::Server;
use crate::state::Core;
use crate::trace::span::OpenSpan;

/// Opens the span of one start.
pub(crate) fn starting(core: &Core, server: &Server) -> OpenSpan {
    let mut span = core.tracer.start("mcp_server.start", None);
    describe(server, &mut span);
    span
}

/// The server is ready.
pub(crate) fn ready(span: Option<OpenSpan>, tools: usize, pid: Option<u32>) {
    if let Some(mut span) = span {
        span.set("tools", tools);
        if let Some(pid) = pid {
            span.set("pid", pid as usize);
        }
        span.ok();
    }
}

/// A run ended; `failure` is why when it failed; `next` what happens now.
pub(crate) fn exited(core: &Core, server: &Server, failure: Option<&str>, next: &'static str) {
    let mut span = core.tracer.start("mcp_server.exit", None);
    describe(server, &mut span);
    span.set("next", next);
    match failure {
        None => span.ok(),
        Some(why) => span.fail("MCP_SERVER_FAILED", why),
    }
}

fn describe(server: &Server, span: &mut OpenSpan) {
    span.provider(&super::registration::provider_name(server));
    span.set("mcp.server", server.spec.name.as_str());
    span.set(
        "mcp.transport",
        format!("{:?}", server.spec.transport.kind()).to_lowercase(),
    );
    if let Some(session) = &server.session_id {
        span.session(session);
    }
}

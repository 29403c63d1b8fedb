//! S7 in process: MCP `tools/call` over Streamable HTTP against the session-host
//! WebSocket (`mcp.rs`), on the in-process gateway. Information only: the target is judged
//! out of process (`s7_process.rs`).

use super::switches_row;
use crate::options::Counts;
use crate::report::{Report, Row};
use crate::running::{bounded, progress};
use crate::stats::{micros, per_sec, ratio, secs};
use crate::{mcp, s7_process, scenarios};

/// S7: MCP over Streamable HTTP against the session-host WebSocket, same calls, same run.
pub async fn s7(n: &Counts, rig: &scenarios::Rig, main: &str, out: &mut Report) {
    const S7: &str = "S7 MCP tools/call over HTTP";
    progress(S7);
    let sequential = n.sequential / 4;
    match bounded(n.limit, mcp::s7(rig, main, n.warmup, sequential, n.rounds)).await {
        Ok(r) => {
            for (generation, l) in [("initialize", &r.legacy), ("2026-07-28", &r.stateless)] {
                let label = format!("{S7} ({generation})");
                let r50 = ratio(secs(l.p50()), secs(r.host.p50()));
                // Information since run 19: the target is judged out of process
                // (`s7_process.rs`), where the gateway's work is not mixed with the clients'.
                out.rows.extend([
                    Row::info(&label, "p50", micros(l.p50()))
                        .vs(format!("host {}", micros(r.host.p50())), r50),
                    Row::info(&label, "p99", micros(l.p99())).vs(
                        format!("host {}", micros(r.host.p99())),
                        ratio(secs(l.p99()), secs(r.host.p99())),
                    ),
                    Row::info(&label, "calls", per_sec(l.rate()))
                        .vs(per_sec(r.host.rate()), ratio(l.rate(), r.host.rate())),
                ]);
                out.rows.extend(switches_row(&label, "per call", l));
            }
            out.rows.extend(switches_row(
                &format!("{S7} (host socket)"),
                "per call",
                &r.host,
            ));
            // Information only: both clients in the caller's task (no client-side task
            // hand-offs on either side), to tell the clients' cost from the gateway's.
            let label = format!("{S7} (2026-07-28, in-task clients)");
            let (l, h) = (&r.stateless_inline, &r.host_inline);
            out.rows.extend(s7_process::in_task_rows(&label, l, h));
            out.rows.extend(switches_row(&label, "per call", l));
            out.rows.extend(switches_row(
                &format!("{S7} (host socket, in-task client)"),
                "per call",
                h,
            ));
        }
        Err(e) => out.fail(S7, e),
    }
}

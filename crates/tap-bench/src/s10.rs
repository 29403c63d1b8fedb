//! S10: a remote MCP server (Streamable HTTP) run by the gateway, against the same server
//! called directly.
//!
//! The server is `tap-bench mcp-echo-server --http` (`mcp_echo_http.rs`), this binary again:
//! one thread, hyper's HTTP/1.1 server, plain JSON answers, so the server is never what is
//! measured. Two copies of it run, the same code: **open** (no auth) and **signed** (every
//! request must carry `Authorization: Bearer <token>`). Three paths, run by S9's code
//! (`s9::run_sides`, so the measurements are S9's):
//!
//! - **direct**: S7's hyper client (`mcp.rs`) at the open server's `/mcp`, one kept-alive
//!   connection per client. The floor.
//! - **through the gateway, no auth**: `tap gateway` as a child process with both servers in
//!   its `$TAP_HOME/mcp.json` (`"type": "http"`), `open__echo` called over `/mcp/<session>`
//!   with the same client. The gateway reaches the server through rmcp's Streamable HTTP
//!   client inside rmcp's `AuthClient` (`mcp_servers/streamable.rs`), which asks the vault
//!   for a token on every request and, with none stored, sends none.
//! - **through the gateway, signed in**: `signed__echo`. The gateway holds the token as a
//!   sign-in leaves it: rmcp's `StoredCredentials` in `$TAP_HOME/secrets.json` under the
//!   vault's name for the URL (`TAP_KEYRING=off`; `s10_remote.rs`), so at start it runs
//!   OAuth discovery against the server's metadata and then adds the bearer from the vault
//!   to every request. The server counts what it authorized and what it refused: the run
//!   fails unless every call of this path was authorized and nothing was refused.
//!
//! Sequential p50/p99 (the paths interleaved round by round) and calls/s with 32 in flight
//! (32 HTTP connections on every path), each path against direct; CPU per call of the bench,
//! the gateway and the server; and the signed-in path against the no-auth one (what the
//! vault and `AuthClient` add). Information: no target is set for remote servers yet.

use crate::mcp_echo;
use crate::mcp_echo_http::MCP_PATH;
use crate::options::{Counts, Options};
use crate::report::{Report, Row};
use crate::running::{bounded, progress};
use crate::s10_remote::{write_home, HttpEcho, TOKEN};
use crate::s9::{cpu_row, path_rows, run_sides, switches, PathResult};
use crate::s9_paths::{Endpoint, GatewaySide, Side};
use crate::stats::{micros, per_sec, ratio, secs};
use std::path::Path;
use std::sync::Arc;

const S10: &str = "S10 remote MCP server";

/// S10's rows: direct, through the gateway without and with a sign-in.
pub async fn rows(opts: &Options, n: &Counts, out: &mut Report) {
    let Some(tap) = out.tap_for(S10, opts.tap.as_deref()) else {
        return;
    };
    progress(&format!(
        "{S10} (direct, tap gateway, tap gateway signed in)"
    ));
    match bounded(2 * n.limit, measure(&tap, n)).await {
        Ok(r) => push_rows(&r, out),
        Err(e) => out.fail(S10, e),
    }
}

struct Results {
    direct: PathResult,
    open: PathResult,
    signed: PathResult,
    /// What the signed server counted over the measured calls.
    bearer: Bearer,
}

/// The signed server's counts over the measured part: every call authorized, none refused.
struct Bearer {
    calls: u64,
    /// Requests to `/mcp` (calls and anything else the gateway sent), all authorized.
    posts: u64,
    refused: u64,
    /// TCP connections the server accepted.
    connections: u64,
}

/// The calls [`run_sides`] makes on each path: warm-up, sequential, 32 in flight.
fn calls_per_path(n: &Counts) -> u64 {
    (n.warmup / 4 + n.sequential / 4 + n.mcp_calls * n.reps.max(1)) as u64
}

async fn measure(tap: &Path, n: &Counts) -> Result<Results, String> {
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let open = HttpEcho::spawn(&exe, None).await?;
    let signed = HttpEcho::spawn(&exe, Some(TOKEN)).await?;
    let endpoint = Endpoint::new(open.addr, "", MCP_PATH, mcp_echo::TOOL);
    let direct = Side::http(Arc::new(endpoint), 1).await?;
    let (open_url, signed_url) = (open.url(), signed.url());
    let gateway = GatewaySide::start_with(
        tap,
        "s10",
        &[("TAP_KEYRING", "off")],
        |home| write_home(home, &open_url, &signed_url),
        &["open__echo", "signed__echo"],
    )
    .await?;
    let gw: Vec<u32> = gateway.child.id().into_iter().collect();
    let sides = vec![direct, gateway.sides[0].clone(), gateway.sides[1].clone()];
    let pids = vec![
        open.pid(),
        [gw.clone(), open.pid()].concat(),
        [gw, signed.pid()].concat(),
    ];
    let result = async {
        let before = signed.counts().await?;
        let results = run_sides(&sides, &pids, n).await?;
        let after = signed.counts().await?;
        Ok::<_, String>((results, before, after))
    }
    .await;
    drop(sides);
    let (results, before, after) = gateway.stop(result).await?;
    let bearer = Bearer {
        calls: after.calls - before.calls,
        posts: after.posts - before.posts,
        refused: after.refused - before.refused,
        // Less the `GET` that read `after`.
        connections: (after.connections - before.connections).saturating_sub(1),
    };
    let want = calls_per_path(n);
    if bearer.refused != 0 || bearer.calls != want {
        return Err(format!(
            "the signed-in path's server authorized {} of {want} calls and refused {} requests",
            bearer.calls, bearer.refused
        ));
    }
    let mut results = results.into_iter();
    let mut next = || results.next().ok_or("a path has no results");
    Ok(Results {
        direct: next()?,
        open: next()?,
        signed: next()?,
        bearer,
    })
}

fn push_rows(r: &Results, out: &mut Report) {
    let d = &r.direct;
    let direct = format!("{S10} (direct, HTTP)");
    out.rows.extend([
        Row::info(&direct, "p50", micros(d.sequential.p50())),
        Row::info(&direct, "p99", micros(d.sequential.p99())),
        Row::info(&direct, "calls, sequential", per_sec(d.sequential.rate())),
        Row::info(
            &direct,
            &format!("calls, {} in flight", crate::s9::IN_FLIGHT),
            per_sec(d.loaded.median.rate()),
        ),
        crate::rows::spread(
            &direct,
            &format!("{} in flight", crate::s9::IN_FLIGHT),
            &d.loaded.median,
        ),
    ]);
    out.rows.extend(d.loaded.range_row(&direct));
    out.rows.push(switches(&direct, "bench / server", d));
    out.rows.push(cpu_row(&direct, "bench / server", d));
    let who = "bench / gateway / server";
    for (label, l) in [
        (format!("{S10} (through the gateway)"), &r.open),
        (format!("{S10} (gateway, signed in)"), &r.signed),
    ] {
        path_rows(&label, l, d, false, out);
        out.rows.push(switches(&label, who, l));
        out.rows.push(cpu_row(&label, who, l));
    }
    let signed = format!("{S10} (gateway, signed in)");
    let b = &r.bearer;
    out.rows.extend([
        Row::info(
            &signed,
            "calls with the bearer / 401s",
            format!("{} / {}", b.calls, b.refused),
        ),
        Row::info(
            &signed,
            "requests / connections to the server per call",
            format!(
                "{:.2} / {:.2}",
                b.posts as f64 / b.calls.max(1) as f64,
                b.connections as f64 / b.calls.max(1) as f64
            ),
        ),
    ]);
    // What the vault and AuthClient add: the same gateway, the same server code.
    let label = format!("{S10} (signed in / no auth)");
    let (s, o) = (&r.signed, &r.open);
    let gateway_cpu = |l: &PathResult| l.cpu.get(1).copied().flatten();
    let mut rows = vec![
        Row::info(&label, "p50", micros(s.sequential.p50())).vs(
            format!("no auth {}", micros(o.sequential.p50())),
            ratio(secs(s.sequential.p50()), secs(o.sequential.p50())),
        ),
        Row::info(
            &label,
            &format!("calls, {} in flight", crate::s9::IN_FLIGHT),
            per_sec(s.loaded.median.rate()),
        )
        .vs(
            per_sec(o.loaded.median.rate()),
            ratio(s.loaded.median.rate(), o.loaded.median.rate()),
        ),
    ];
    if let (Some(sc), Some(oc)) = (gateway_cpu(s), gateway_cpu(o)) {
        rows.push(
            Row::info(&label, "gateway CPU us per call", format!("{sc:.1}"))
                .vs(format!("no auth {oc:.1}"), ratio(sc, oc)),
        );
    }
    out.rows.extend(rows);
}

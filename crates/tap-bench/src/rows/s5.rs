//! S5: the resident memory of the `tap` binary as a child process (`rss.rs`), idle, with
//! providers bound and after calls.

use crate::options::{Counts, Options};
use crate::report::{Report, Row};
use crate::rss;
use crate::running::{bounded, progress};
use crate::stats::{mib, thousands};

/// S5: the `tap` binary as a child process.
pub async fn s5(opts: &Options, n: &Counts, out: &mut Report) {
    const S5: &str = "S5 gateway RSS (process)";
    let Some(tap) = out.tap_for(S5, opts.tap.as_deref()) else {
        return;
    };
    progress(S5);
    match bounded(n.limit, rss::measure(&tap, n.rss_load_calls)).await {
        Ok(r) => {
            out.rows
                .push(Row::info(S5, "idle", mib(r.idle)).target("< 12 MiB", r.idle < 12 * 1024));
            let per_provider = r.per_provider();
            let bound = |n| format!("{n}x{} tools bound, no call yet", rss::TOOLS_EACH);
            out.rows
                .push(Row::info(S5, &bound(rss::PROVIDERS / 2), mib(r.half_bound)));
            out.rows
                .push(Row::info(S5, &bound(rss::PROVIDERS), mib(r.bound_uncalled)));
            out.rows.push(
                Row::info(
                    S5,
                    "per bound provider (the last 25)",
                    format!("{per_provider} KiB"),
                )
                .target("<= 16 KiB", per_provider <= 16),
            );
            out.rows.push(Row::info(
                S5,
                &format!(
                    "{}x{} tools bound, each called once",
                    rss::PROVIDERS,
                    rss::TOOLS_EACH
                ),
                mib(r.bound),
            ));
            out.rows.push(Row::info(
                S5,
                &format!("after {} calls", thousands(r.load_calls as u64)),
                mib(r.loaded),
            ));
            out.rows.push(Row::info(S5, "peak (VmHWM)", mib(r.peak)));
        }
        Err(e) => out.fail(S5, e),
    }
    // Idle MCP servers (issue 36), in a gateway of their own so the rows above keep
    // their meaning.
    const S5M: &str = "S5 idle MCP server (stdio)";
    progress(S5M);
    match bounded(n.limit, rss::measure_mcp(&tap)).await {
        Ok(m) => {
            let kib = |k: i64, anon: i64| format!("{k} KiB (anon {anon} KiB)");
            out.rows
                .push(Row::info(S5M, "gateway idle, no server", mib(m.before)));
            out.rows.push(Row::info(
                S5M,
                "the first server, ready",
                kib(m.first(), m.anon_first()),
            ));
            out.rows.push(Row::info(
                S5M,
                &format!("per server (the last {})", rss::MCP_SERVERS - 1),
                kib(m.per_server(), m.anon_per_server()),
            ));
        }
        Err(e) => out.fail(S5M, e),
    }
}

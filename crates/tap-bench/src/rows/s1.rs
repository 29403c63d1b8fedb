//! S1a / S1b: sequential calls through the gateway (one hop and two) against E0's
//! sequential echo, and with the ledger on against off.

use super::switches_row;
use crate::options::ledger_label;
use crate::report::{Report, Row};
use crate::scenarios;
use crate::setup::Setup;
use crate::stats::{micros, per_sec, ratio, secs, Latencies};
use tap_gateway::History;

/// S1a / S1b rows against the interleaved E0 sequential numbers (the first gateway), and
/// the first gateway's against the second's (ledger on / off).
pub fn s1_rows(seq: &scenarios::SequentialResults, setups: &[Setup], out: &mut Report) {
    const S1A: &str = "S1a call_tool (1 hop)";
    const S1B: &str = "S1b host invoke (2 hops)";
    let e = &seq.echo;
    let Some((a, b)) = seq.gateways.first() else {
        return;
    };
    // The second gateway's S1a and S1b, with the ledger settings, when there is one.
    let other = match (seq.gateways.get(1), setups) {
        (Some((a_off, b_off)), [on, off, ..]) => Some((on.history, off.history, [a_off, b_off])),
        _ => None,
    };
    for (i, (label, hops, l)) in [(S1A, 1.0, a), (S1B, 2.0, b)].into_iter().enumerate() {
        let times = if hops > 1.0 { "2 x " } else { "" };
        let r50 = ratio(secs(l.p50()), hops * secs(e.p50()));
        let r99 = ratio(secs(l.p99()), hops * secs(e.p99()));
        // Per hop: the gateway path's rate against the echo's (halved for two hops).
        let base = if hops > 1.0 {
            format!("1/2 x {}", per_sec(e.rate()))
        } else {
            per_sec(e.rate())
        };
        out.rows.extend([
            Row::info(label, "p50", micros(l.p50()))
                .vs(format!("{times}{}", micros(e.p50())), r50)
                .target("<= 1.3x per hop", r50 <= 1.3),
            Row::info(label, "p99", micros(l.p99())).vs(format!("{times}{}", micros(e.p99())), r99),
            Row::info(label, "calls", per_sec(l.rate())).vs(base, ratio(l.rate(), e.rate() / hops)),
        ]);
        out.rows.extend(switches_row(label, "per call", l));
        if let Some((on, off, ls)) = &other {
            out.rows
                .extend(latency_vs_ledger(label, *on, *off, l, ls[i]));
        }
    }
}

/// A sequential scenario with one ledger setting against the other: p50 (target: within
/// 10 %), p99, calls/s and the second's context switches.
fn latency_vs_ledger(
    label: &str,
    on: History,
    off: History,
    l_on: &Latencies,
    l_off: &Latencies,
) -> Vec<Row> {
    let (on, off) = (ledger_label(on), ledger_label(off));
    let r50 = ratio(secs(l_on.p50()), secs(l_off.p50()));
    let mut rows = vec![
        Row::info(label, &format!("p50 {on} / off"), micros(l_on.p50()))
            .vs(format!("{off}: {}", micros(l_off.p50())), r50)
            .target("<= 1.10x", r50 <= 1.10),
        Row::info(label, &format!("p99 {on} / off"), micros(l_on.p99())).vs(
            format!("{off}: {}", micros(l_off.p99())),
            ratio(secs(l_on.p99()), secs(l_off.p99())),
        ),
        Row::info(label, &format!("calls {on} / off"), per_sec(l_on.rate())).vs(
            format!("{off}: {}", per_sec(l_off.rate())),
            ratio(l_on.rate(), l_off.rate()),
        ),
    ];
    rows.extend(switches_row(label, &format!("per call, {off}"), l_off));
    rows
}

//! S11: what tool-call approvals add to an allowed call (issue 39). Two in-process
//! gateways, alike but for `$TAP_HOME`: one with no `policy.json` and no `grants.json`,
//! one with 1,000 rules and 1,000 grants, none of which lets the call through by itself
//! (rules and grants of other tools, plus ten of each naming the called tool that do not
//! apply to this session, so they are evaluated on every call). The same in-process call
//! (S1a's) runs against both, interleaved in rounds, so the machine's drift hits them
//! alike. Target: the p50 difference ≤ 2 µs (within S1's noise). The ledger is off on
//! both: the decision's cost is on the call path; its span attributes are written off it.

use crate::options::Counts;
use crate::report::{Report, Row};
use crate::scenarios::{call_in_process, Rig};
use crate::stats::{micros, ratio, secs, Sampler};
use serde_json::{json, Value};
use std::path::Path;
use tap_gateway::History;

const SCENARIO: &str = "S11 approvals, 1,000 rules + 1,000 grants";
/// Rules and grants of the loaded gateway.
const RULES: usize = 1000;
const GRANTS: usize = 1000;
/// Of those, how many name the called tool (and do not apply).
const ON_THE_TOOL: usize = 10;

fn policy() -> Value {
    let mut rules = Vec::new();
    for i in 0..ON_THE_TOOL {
        rules.push(json!({"id": format!("echo-{i}"), "action": "deny",
            "match": {"tool": "echo", "client": format!("nobody-{i}"),
                      "args": [{"pointer": "/path", "regex": "^/etc/"}]}}));
    }
    let rest = RULES - ON_THE_TOOL;
    for i in 0..rest {
        let tool = if i % 2 == 0 {
            format!("tool_{i}")
        } else {
            format!("srv{i}__*")
        };
        rules.push(json!({"id": format!("r{i}"), "action": "ask", "match": {"tool": tool}}));
    }
    json!({ "rules": rules })
}

fn grants() -> Value {
    let mut grants = Vec::new();
    for i in 0..GRANTS {
        let (tool, session) = if i < ON_THE_TOOL {
            ("echo".to_string(), Some(format!("s-other-{i}")))
        } else {
            (format!("tool_{i}"), None)
        };
        let mut g = json!({"id": format!("g-{i:08x}"), "decision": "allow", "scope": "always",
            "tool": tool, "provider": "echo-provider",
            "createdAt": "2026-11-29T00:00:00.000Z"});
        if let Some(s) = session {
            g["scope"] = json!("session");
            g["session"] = json!(s);
        }
        grants.push(g);
    }
    json!({ "grants": grants })
}

fn prepare(home: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(home)?;
    std::fs::write(home.join("policy.json"), policy().to_string())?;
    std::fs::write(home.join("grants.json"), grants().to_string())
}

async fn rig(loaded: bool) -> Result<(Rig, String), String> {
    let mut rig = if loaded {
        Rig::start_prepared(History::Off, prepare).await?
    } else {
        Rig::start(History::Off).await?
    };
    let session = rig.session("bench-approvals").await?;
    rig.provider("echo-provider", &session, &["echo".to_string()])
        .await?;
    Ok((rig, session))
}

pub async fn rows(n: &Counts, out: &mut Report) {
    match run(n).await {
        Ok(rows) => out.rows.extend(rows),
        Err(e) => out.fail(SCENARIO, e),
    }
}

async fn run(n: &Counts) -> Result<Vec<Row>, String> {
    let (base, base_session) = rig(false).await?;
    let (loaded, loaded_session) = rig(true).await?;
    let policy = loaded.gateway().policy_list();
    if policy.rules.len() != RULES || policy.error.is_some() {
        return Err(format!("the loaded gateway's policy: {:?}", policy.error));
    }
    let grants = loaded.gateway().approvals_grants().grants.len();
    if grants != GRANTS {
        return Err(format!(
            "the loaded gateway kept {grants} grants of {GRANTS}"
        ));
    }
    let (bg, lg) = (base.gateway(), loaded.gateway());
    for _ in 0..n.warmup {
        call_in_process(&bg, &base_session, "echo").await?;
        call_in_process(&lg, &loaded_session, "echo").await?;
    }
    let (mut a, mut b) = (Sampler::new(n.sequential), Sampler::new(n.sequential));
    let per_round = n.sequential.div_ceil(n.rounds.max(1));
    let mut left = n.sequential;
    while left > 0 {
        let k = per_round.min(left);
        left -= k;
        a.begin();
        for _ in 0..k {
            a.time(call_in_process(&bg, &base_session, "echo")).await?;
        }
        a.end();
        b.begin();
        for _ in 0..k {
            b.time(call_in_process(&lg, &loaded_session, "echo"))
                .await?;
        }
        b.end();
    }
    let (a, b) = (a.finish(), b.finish());
    base.stop().await;
    loaded.stop().await;
    let added = b.p50().as_secs_f64() - a.p50().as_secs_f64();
    let added_us = added * 1e6;
    Ok(vec![
        Row::info(SCENARIO, "p50, no policy", micros(a.p50())),
        Row::info(SCENARIO, "p50", micros(b.p50()))
            .vs(micros(a.p50()), ratio(secs(b.p50()), secs(a.p50()))),
        Row::info(SCENARIO, "p99", micros(b.p99()))
            .vs(micros(a.p99()), ratio(secs(b.p99()), secs(a.p99()))),
        Row::info(SCENARIO, "p50 added per call", format!("{added_us:.2} us"))
            .target("<= 2 us", added_us <= 2.0),
    ])
}

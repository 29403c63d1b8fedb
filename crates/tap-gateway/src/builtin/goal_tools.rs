//! `tap_verify_goal_output` and `tap_audit_claims` (`docs/emitters.md`, "Goals"): the
//! agent checks what it set out to make, or what it (or another agent) says it made,
//! against evidence, instead of taking its own word. Nothing is run: a command's output is
//! the caller's to supply, and it is judged as given.
//!
//! A call is refused whole (`INVALID_JSON`, before anything is read) when an item is
//! malformed or its patterns are too large or too costly to compile; otherwise every item
//! gets an answer. Each call's results are kept as one event of the session's `goals`
//! stream (`goals@emitters`: in the history, found again with `tap_stream_history`).

use super::evidence::{Checked, Item, Ready, Scope, Verdict};
use super::{Answer, Args};
use crate::emitters::route::{self, StreamEvent, EMITTERS_PROVIDER};
use crate::error::Error;
use crate::limits::{MAX_GOAL_CHECKS, MAX_GOAL_EXCERPT_CHARS, MAX_GOAL_PATTERN_BYTES};
use crate::state::goal_defs::{AUDIT_CLAIMS, GOALS_STREAM, VERIFY_GOAL_OUTPUT};
use crate::state::Core;
use crate::text::cut;
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;
use tap_protocol::ledger::EventOutcome;
use tap_protocol::provider::PushLevel;
use tap_protocol::{ErrorCode, Json};

fn invalid(message: String) -> Error {
    Error::new(ErrorCode::InvalidJson, message)
}

/// `tap_verify_goal_output`: each expectation verified or failed; `met` when all hold.
pub(super) async fn verify(core: &Arc<Core>, session_id: &str, a: &Args<'_>) -> Answer {
    let goal = a.text(&["goal"]);
    let items = items(a.json.get("expectations"), "expectations")?;
    let checked = run(core, session_id, items).await?;
    let verified = checked
        .iter()
        .filter(|(_, c)| c.verdict == Verdict::Holds)
        .count();
    let results: Vec<Json> = checked
        .iter()
        .map(|(r, c)| {
            let status = match c.verdict {
                Verdict::Holds => "verified",
                _ => "failed",
            };
            result(&r.item, status, &c.reason)
        })
        .collect();
    let met = verified == checked.len();
    let mut text = format!(
        "goal {}: {verified} of {} expectations verified",
        if met { "met" } else { "not met" },
        checked.len()
    );
    if let Some(g) = &goal {
        text.push_str(&format!(" ({})", cut(g, 200)));
    }
    for r in &results {
        text.push_str(&format!(
            "\n{} {} {}: {}",
            r["status"].as_str().unwrap_or_default(),
            r["kind"].as_str().unwrap_or_default(),
            r["target"].as_str().unwrap_or_default(),
            r["reason"].as_str().unwrap_or_default()
        ));
    }
    let mut answer = json!({
        "goal": goal,
        "met": met,
        "verified": verified,
        "failed": checked.len() - verified,
        "expectations": results,
    });
    answer["recorded"] = record(core, session_id, VERIFY_GOAL_OUTPUT, text, &answer).await;
    Ok(answer)
}

/// `tap_audit_claims`: each claim verified (all its evidence holds), contradicted (some
/// says otherwise) or unverified (none cited, or some could not be checked).
pub(super) async fn audit(core: &Arc<Core>, session_id: &str, a: &Args<'_>) -> Answer {
    let claims = a
        .json
        .get("claims")
        .and_then(Json::as_array)
        .cloned()
        .unwrap_or_default();
    let mut all = Vec::new();
    let mut owner = Vec::new();
    for (i, c) in claims.iter().enumerate() {
        let cited = items(c.get("evidence"), &format!("claims[{i}].evidence"))?;
        owner.extend(std::iter::repeat_n(i, cited.len()));
        all.extend(cited);
        if all.len() > MAX_GOAL_CHECKS {
            return Err(invalid(format!(
                "The claims cite more than {MAX_GOAL_CHECKS} evidence items together; audit them in several calls"
            )));
        }
    }
    let checked = run(core, session_id, all).await?;
    let mut out = Vec::with_capacity(claims.len());
    let mut counts = [0usize; 3];
    let mut text = String::new();
    for (i, c) in claims.iter().enumerate() {
        let mine: Vec<&(Ready, Checked)> = checked
            .iter()
            .zip(&owner)
            .filter(|(_, o)| **o == i)
            .map(|(x, _)| x)
            .collect();
        let first = |v: Verdict| {
            mine.iter()
                .enumerate()
                .find(|(_, (_, c))| c.verdict == v)
                .map(|(j, (r, c))| {
                    format!(
                        "evidence {j} ({} {}): {}",
                        r.item.kind.as_str(),
                        r.item.target(),
                        c.reason
                    )
                })
        };
        let (status, reason) = if mine.is_empty() {
            ("unverified", "it cites no evidence".to_string())
        } else if let Some(why) = first(Verdict::Contradicts) {
            ("contradicted", why)
        } else if let Some(why) = first(Verdict::Unverified) {
            ("unverified", why)
        } else {
            (
                "verified",
                format!("all {} evidence items hold", mine.len()),
            )
        };
        counts[match status {
            "verified" => 0,
            "contradicted" => 1,
            _ => 2,
        }] += 1;
        let claim = c.get("claim").and_then(Json::as_str).unwrap_or_default();
        text.push_str(&format!("\n{status}: {} ({reason})", cut(claim, 200)));
        let evidence: Vec<Json> = mine
            .iter()
            .map(|(r, c)| {
                let status = match c.verdict {
                    Verdict::Holds => "verified",
                    Verdict::Contradicts => "contradicted",
                    Verdict::Unverified => "unverified",
                };
                result(&r.item, status, &c.reason)
            })
            .collect();
        out.push(json!({"claim": claim, "status": status, "reason": reason, "evidence": evidence}));
    }
    let [verified, contradicted, unverified] = counts;
    let text = format!(
        "claims audited: {verified} verified, {contradicted} contradicted, {unverified} unverified{text}"
    );
    let mut answer = json!({
        "verified": verified,
        "contradicted": contradicted,
        "unverified": unverified,
        "claims": out,
    });
    answer["recorded"] = record(core, session_id, AUDIT_CLAIMS, text, &answer).await;
    Ok(answer)
}

/// One item's answer.
fn result(item: &Item, status: &str, reason: &str) -> Json {
    let mut r = json!({
        "kind": item.kind.as_str(),
        "target": item.target(),
        "status": status,
        "reason": reason,
    });
    if let Some(id) = &item.id {
        r["id"] = json!(cut(id, MAX_GOAL_EXCERPT_CHARS));
    }
    r
}

/// The items of `list` (named `what` in errors), each well-formed.
fn items(list: Option<&Json>, what: &str) -> Result<Vec<(String, Item)>, Error> {
    let Some(list) = list.and_then(Json::as_array) else {
        return Ok(Vec::new());
    };
    list.iter()
        .enumerate()
        .map(|(i, v)| {
            let label = format!("{what}[{i}]");
            let item: Item =
                serde_json::from_value(v.clone()).map_err(|e| invalid(format!("{label}: {e}")))?;
            match item.shape_error() {
                Some(why) => Err(invalid(format!("{label}: {why}"))),
                None => Ok((label, item)),
            }
        })
        .collect()
}

/// Compiles the items' patterns within the call's bounds, then checks every item.
async fn run(
    core: &Arc<Core>,
    session_id: &str,
    items: Vec<(String, Item)>,
) -> Result<Vec<(Ready, Checked)>, Error> {
    let cwd = core.state().live_session(session_id)?.info.cwd.clone();
    let bytes: usize = items
        .iter()
        .flat_map(|(_, i)| i.patterns())
        .map(str::len)
        .sum();
    if bytes > MAX_GOAL_PATTERN_BYTES {
        return Err(invalid(format!(
            "The call's patterns are {bytes} bytes together; at most {MAX_GOAL_PATTERN_BYTES}"
        )));
    }
    let labelled: Vec<(usize, &str)> = items
        .iter()
        .enumerate()
        .flat_map(|(n, (_, i))| i.patterns().map(move |p| (n, p)))
        .collect();
    crate::patterns::rules::check_patterns("the call's patterns", labelled.into_iter())?;
    let compile = |label: &str, field: &str, p: Option<&String>| {
        p.map(|p| {
            crate::patterns::rules::compile_pattern(p)
                .map_err(|e| invalid(format!("{label}: '{field}' {}", e.message)))
        })
        .transpose()
    };
    let mut ready = Vec::with_capacity(items.len());
    for (label, item) in items {
        let pattern = compile(&label, "pattern", item.pattern.as_ref())?;
        let json_pattern = compile(
            &label,
            "json.pattern",
            item.json.as_ref().and_then(|j| j.pattern.as_ref()),
        )?;
        ready.push(Ready {
            item,
            pattern,
            json_pattern,
        });
    }
    let workspace = match cwd.filter(|c| !c.is_empty()) {
        None => Err("this session has no working directory (its host registered none), so no workspace file can be checked".to_string()),
        Some(c) => Path::new(&c)
            .canonicalize()
            .map_err(|e| format!("the session's working directory {c} cannot be used: {e}")),
    };
    if ready
        .iter()
        .any(|r| r.item.kind == super::evidence::Kind::Stream)
    {
        // What was kept before this call (a post, an emitter's line) is in the ledger.
        core.ledger.flush().await;
    }
    let core = core.clone();
    let session_id = session_id.to_string();
    tokio::task::spawn_blocking(move || {
        let scope = Scope {
            core: &core,
            session_id: &session_id,
            workspace,
        };
        ready
            .into_iter()
            .map(|r| {
                let c = scope.check(&r);
                (r, c)
            })
            .collect()
    })
    .await
    .map_err(|e| Error::new(ErrorCode::Internal, format!("the checks failed: {e}")))
}

/// Keeps `text` (with `answer` as its metadata) in the session's `goals` stream; the
/// stream's key, or null when the session has no room for another stream.
async fn record(core: &Core, session_id: &str, tool: &str, text: String, answer: &Json) -> Json {
    let injector = core.emitters.injector(session_id, GOALS_STREAM);
    let level = match injector.deliver_as(EventOutcome::Keep) {
        EventOutcome::Surface => PushLevel::Surface,
        _ => PushLevel::Keep,
    };
    let mut metadata = serde_json::Map::new();
    metadata.insert("source".into(), tool.into());
    metadata.insert("result".into(), answer.clone());
    let at = SystemTime::now();
    let event = StreamEvent {
        session_id,
        stream: GOALS_STREAM,
        text: text.clone(),
        level,
        metadata,
        at,
        trace_id: None,
    };
    let Ok(record) = route::keep(core, event) else {
        return Json::Null;
    };
    core.ledger.write(record).await;
    if level == PushLevel::Surface {
        route::deliver(core, session_id, GOALS_STREAM, level, &text, None, at);
    }
    json!(format!("{GOALS_STREAM}@{EMITTERS_PROVIDER}"))
}

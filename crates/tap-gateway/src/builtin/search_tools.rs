//! The search surface (`docs/clients.md`, "Search surface: what it costs"):
//! `tap_find_tools` answered here; `tap_call_tool` unwrapped by the call path
//! (`tools::call`), the hook precheck and the MCP facade, through
//! `state::search_defs::called`, so the called tool goes through everything a direct call
//! does.
//!
//! Only the session's tool map is searched: it holds what the profile lets through, so a
//! hidden tool is never found (and never called: it is not in the map).
//!
//! Relevance, kept simple so a user can predict it: the query and each tool's name and
//! description are cut into lowercase words (runs of letters and digits; a few English
//! filler words of the query are dropped). Each query word scores once per tool, its best
//! of: 8 when it is a word of the name, 4 when it and a name word of 3+ letters start the
//! same way (`issue` ~ `issues`), 2 when it is a word of the description, 1 when it and a
//! description word start the same way. A query that is a tool's whole name adds 100. Tools
//! scoring 0 are not matches; ties go by name.

use super::Args;
use crate::limits::{DEFAULT_FIND_RESULTS, MAX_FIND_RESULTS, MAX_FIND_RESULT_BYTES};
use crate::state::search_defs::CALL_TOOL;
use crate::state::Core;
use serde_json::json;
use std::collections::HashSet;
use tap_protocol::host::HostTool;
use tap_protocol::Json;

type Answer = Result<Json, crate::error::Error>;

/// Query words that say nothing about a tool.
const FILLER: &[&str] = &[
    "a", "an", "and", "for", "from", "i", "in", "into", "it", "me", "my", "of", "on", "or", "the",
    "this", "to", "with",
];

/// `tap_find_tools`: the session's tools (but the gateway's own, which are listed) that
/// match the query best.
pub(super) fn find(core: &Core, session_id: &str, a: &Args<'_>) -> Answer {
    let query = a.text(&["query"]).unwrap_or_default();
    let limit = a
        .uint(&["limit"])
        .map_or(DEFAULT_FIND_RESULTS, |n| n as usize)
        .clamp(1, MAX_FIND_RESULTS);
    let tools: Vec<HostTool> = {
        let state = core.state();
        let session = state.live_session(session_id)?;
        session
            .callable_tools(core.config.default_tool_timeout)
            .into_iter()
            .filter(|t| t.provider != crate::state::builtin_defs::PROVIDER)
            .collect()
    };
    // Ranked outside the state lock.
    let ranked = rank(&query, &tools);
    let mut found = Vec::new();
    let mut omitted = Vec::new();
    let mut bytes = 0;
    for &i in ranked.iter().take(limit) {
        let entry = entry(&tools[i]);
        let len = entry.to_string().len();
        if bytes + len > MAX_FIND_RESULT_BYTES {
            omitted.push(tools[i].name.clone());
            continue;
        }
        bytes += len;
        found.push(entry);
    }
    let mut answer = json!({"matched": ranked.len(), "tools": found});
    if !omitted.is_empty() {
        answer["omitted"] = json!(omitted);
        answer["note"] = json!(format!(
            "Matches too large to show together (over {MAX_FIND_RESULT_BYTES} bytes): search for one by its name (one larger than that alone can still be called with {CALL_TOOL})."
        ));
    }
    if ranked.is_empty() {
        answer["note"] = json!(format!(
            "No tool matched; {} tools can be searched. Try other words.",
            tools.len()
        ));
    }
    Ok(answer)
}

/// What a found tool shows: what its `tools/list` entry would.
fn entry(t: &HostTool) -> Json {
    let mut schema = match t.parameters.to_value() {
        Json::Object(o) => o,
        _ => Default::default(),
    };
    schema
        .entry("type")
        .or_insert_with(|| Json::String("object".into()));
    let description = match t.description.is_empty() {
        true => format!("({})", t.provider),
        false => t.description.clone(),
    };
    json!({"name": t.name, "description": description, "inputSchema": schema})
}

fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

/// Indices of `tools` that match `query`, best first (see the module's comment).
fn rank(query: &str, tools: &[HostTool]) -> Vec<usize> {
    let mut terms: Vec<String> = words(query)
        .filter(|w| !FILLER.contains(&w.as_str()))
        .collect();
    let mut seen = HashSet::new();
    terms.retain(|t| seen.insert(t.clone()));
    let whole = query.trim().to_lowercase();
    let mut scored: Vec<(u32, usize)> = tools
        .iter()
        .enumerate()
        .filter_map(|(i, t)| {
            let name: Vec<String> = words(&t.name).collect();
            let description: Vec<String> = words(&t.description).collect();
            let mut score: u32 = terms
                .iter()
                .map(|term| best(term, &name, 8, 4).max(best(term, &description, 2, 1)))
                .sum();
            if t.name.to_lowercase() == whole {
                score += 100;
            }
            (score > 0).then_some((score, i))
        })
        .collect();
    scored.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then_with(|| tools[a.1].name.cmp(&tools[b.1].name))
    });
    scored.into_iter().map(|(_, i)| i).collect()
}

/// `exact` when `term` is one of `words`, `alike` when it and one of 3+ letters start the
/// same way, else 0.
fn best(term: &str, words: &[String], exact: u32, alike: u32) -> u32 {
    let mut score = 0;
    for w in words {
        if w == term {
            return exact;
        }
        if w.len().min(term.len()) >= 3 && (w.starts_with(term) || term.starts_with(w.as_str())) {
            score = alike;
        }
    }
    score
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, description: &str) -> HostTool {
        HostTool {
            name: name.into(),
            description: description.into(),
            parameters: serde_json::from_value(json!({"type": "object"})).unwrap(),
            provider: "p".into(),
            provider_id: "p1".into(),
            timeout_ms: 1,
        }
    }

    #[test]
    fn ranks_by_name_then_description_and_drops_non_matches() {
        let tools = [
            tool(
                "github__create_issue",
                "Create a new issue in a repository.",
            ),
            tool("github__list_issues", "List issues of a repository."),
            tool("fs__read_file", "Read the complete contents of a file."),
            tool("time__get_current_time", "Current time in a timezone."),
        ];
        let names = |q: &str| -> Vec<&str> {
            rank(q, &tools)
                .into_iter()
                .map(|i| tools[i].name.as_str())
                .collect()
        };
        assert_eq!(
            names("create an issue"),
            ["github__create_issue", "github__list_issues"]
        );
        assert_eq!(names("read a file")[0], "fs__read_file");
        assert_eq!(names("What time is it?")[0], "time__get_current_time");
        assert!(
            names("the a of").is_empty(),
            "filler words alone match nothing"
        );
        assert!(names("kubernetes").is_empty());
        // A tool's whole name wins over word matches.
        assert_eq!(names("github__list_issues")[0], "github__list_issues");
        // A huge query of repeated words is one word.
        assert_eq!(names(&"file ".repeat(100))[0], "fs__read_file");
    }
}

//! `profiles.list`: every tool the gateway offers now, what each costs a client that lists
//! it, and what each profile lets through.
//!
//! "Offers now" is what bound providers (MCP servers included, a stopped lazy server's
//! last known tools too) declare for live sessions, before any profile filters them, and
//! the gateway's own tools: what a client without a profile lists in a session that every
//! provider binds to.

use super::context_cost as cost;
use crate::profiles::{file, Profile, Source, Surface, MCP_SERVER_PROVIDER_PREFIX};
use crate::state::Core;
use std::collections::BTreeMap;
use std::sync::Arc;
use tap_protocol::profiles::{ProfileInfo, ProfilesList, ToolCost};
use tap_protocol::provider::ToolDef;

/// A tool and where it comes from (`None`: the gateway).
type Offered = (Arc<ToolDef>, Option<String>);

/// The list, read now.
pub(crate) fn list(core: &Core) -> ProfilesList {
    let offered = offered(core);
    // Tokenizing happens outside the state lock: a few hundred tools take milliseconds.
    let tools: Vec<ToolCost> = offered
        .values()
        .map(|(def, provider)| {
            let (tokens, bytes) = cost::of(def);
            ToolCost {
                name: def.name.clone(),
                provider: provider
                    .clone()
                    .unwrap_or_else(|| crate::state::builtin_defs::PROVIDER.to_string()),
                server: provider
                    .as_deref()
                    .and_then(|p| p.strip_prefix(MCP_SERVER_PROVIDER_PREFIX))
                    .map(str::to_string),
                tokens,
                bytes,
            }
        })
        .collect();
    let search_tools: Vec<ToolCost> = crate::state::search_defs::tools()
        .iter()
        .map(|def| {
            let (tokens, bytes) = cost::of(def);
            ToolCost {
                name: def.name.clone(),
                provider: crate::state::builtin_defs::PROVIDER.to_string(),
                server: None,
                tokens,
                bytes,
            }
        })
        .collect();
    let (all, warnings) = file::read_all(&core.config.data_dir);
    let profiles = all
        .into_iter()
        .map(|(name, parsed)| match parsed {
            Ok(profile) => seen_by(&profile, &offered, &tools, &search_tools),
            Err(why) => ProfileInfo {
                name,
                def: None,
                error: Some(why),
                visible: Vec::new(),
                tokens: 0,
                bytes: 0,
                full_tokens: None,
                full_bytes: None,
            },
        })
        .collect();
    ProfilesList {
        profiles,
        tokens: tools.iter().map(|t| t.tokens).sum(),
        bytes: tools.iter().map(|t| t.bytes).sum(),
        tools,
        search_tools,
        tokenizer: cost::TOKENIZER.to_string(),
        path: file::path(&core.config.data_dir).display().to_string(),
        warnings,
    }
}

/// What `profile` lets through of `tools` (in `offered`'s order, which is theirs), and
/// what its clients' `tools/list` costs: every visible tool's entry, or with the search
/// surface the gateway's own visible tools' and `search`'s (the two search tools).
fn seen_by(
    profile: &Profile,
    offered: &BTreeMap<String, Offered>,
    tools: &[ToolCost],
    search: &[ToolCost],
) -> ProfileInfo {
    let mut info = ProfileInfo {
        name: profile.name.clone(),
        def: Some(file::def_of(profile)),
        error: None,
        visible: Vec::new(),
        tokens: 0,
        bytes: 0,
        full_tokens: None,
        full_bytes: None,
    };
    let (mut listed_tokens, mut listed_bytes) = (0, 0);
    for ((name, (_, provider)), cost) in offered.iter().zip(tools) {
        let source = match provider {
            Some(p) => Source::Provider(p),
            None => Source::Gateway,
        };
        if profile.sees(source, name) {
            info.visible.push(name.clone());
            info.tokens += cost.tokens;
            info.bytes += cost.bytes;
            if provider.is_none() {
                listed_tokens += cost.tokens;
                listed_bytes += cost.bytes;
            }
        }
    }
    if profile.surface == Surface::Search {
        info.full_tokens = Some(info.tokens);
        info.full_bytes = Some(info.bytes);
        info.tokens = listed_tokens + search.iter().map(|t| t.tokens).sum::<u32>();
        info.bytes = listed_bytes + search.iter().map(|t| t.bytes).sum::<u32>();
    }
    info
}

/// Every tool offered now, by name (the first provider to hold a name keeps it, as in a
/// session).
fn offered(core: &Core) -> BTreeMap<String, Offered> {
    let mut out: BTreeMap<String, Offered> = BTreeMap::new();
    for (def, _) in crate::state::builtin_defs::tools().with_schemas() {
        out.insert(def.name.clone(), (def.clone(), None));
    }
    let state = core.state();
    for session in state.sessions.values() {
        for pid in &session.bound {
            let Some(p) = state.providers.get(pid) else {
                continue;
            };
            let name = p.name.clone().unwrap_or_default();
            for (def, _) in p.tools_in(&session.info.id).with_schemas() {
                // A held definition (`crate::pins`) is offered to no client.
                let held = session.held.contains_key(&def.name);
                if held && !session.tools.contains_key(&def.name) {
                    continue;
                }
                out.entry(def.name.clone())
                    .or_insert_with(|| (def.clone(), Some(name.clone())));
            }
        }
    }
    out
}

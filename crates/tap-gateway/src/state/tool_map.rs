//! A session's tools: who holds each name and the set the host sees (a call is routed
//! from this map by `tools::route`).
//!
//! A name is held by one provider (spec: "Two providers CANNOT register the same tool name
//! in the same session"), except that the instances of a multi-instance provider (same
//! `name`, each with its own `hello.instance`) share their tools: the host sees one copy
//! with a `target` parameter, and the gateway adds `list_<name>_instances` (spec:
//! "Multi-instance providers"; see `instances`).

use super::instances;
use super::session::Session;
use super::tool_entry::{Bearer, Holder, ToolEntry, ToolKind};
use crate::error::Error;
use crate::profiles::Source;
use crate::state::provider_entry::ProviderEntry;
use std::borrow::Borrow;
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tap_protocol::host::HostTool;
use tap_protocol::provider::{Hello, ToolDef};
use tap_protocol::ErrorCode;

/// Who is registering tools, for the conflict check.
pub(crate) struct Claimant<'a> {
    pub id: &'a str,
    pub name: &'a str,
    /// A non-empty `hello.instance`: the provider shares tools with its other instances.
    pub instance: Option<&'a str>,
}

impl<'a> Claimant<'a> {
    /// The provider `id` registering what `h` declares.
    pub fn of_hello(id: &'a str, h: &'a Hello) -> Self {
        Self {
            id,
            name: &h.name,
            instance: h.instance.as_deref().filter(|i| !i.is_empty()),
        }
    }

    /// A bound provider changing its tools.
    pub fn of_entry(p: &'a ProviderEntry) -> Self {
        Self {
            id: &p.id,
            name: p.name.as_deref().unwrap_or_default(),
            instance: p.instance.as_deref().filter(|i| !i.is_empty()),
        }
    }
}

impl Session {
    /// `TOOL_CONFLICT` if one of `tools` is held by another provider in this session (spec:
    /// "Two providers CANNOT register the same tool name in the same session"; instances of
    /// one provider name share), or is a `list_` name reserved for another provider's
    /// generated tools (spec: "MUST NOT start with `list_` followed by another provider's
    /// name").
    pub fn check_conflicts(
        &self,
        tools: &[impl Borrow<ToolDef>],
        me: &Claimant<'_>,
        providers: &HashMap<String, ProviderEntry>,
    ) -> Result<(), Error> {
        let others: Vec<&str> = self
            .bound
            .iter()
            .filter_map(|id| providers.get(id)?.name.as_deref())
            .filter(|n| *n != me.name)
            .collect();
        for t in tools {
            let t = t.borrow();
            instances::check_reserved(&t.name, &others)?;
            let Some(owner) = self.tools.get(&t.name) else {
                continue;
            };
            let shares = match &owner.kind {
                ToolKind::Own(h) => h.by.provider_id == me.id,
                ToolKind::Shared(_) => me.instance.is_some() && *owner.provider_name == *me.name,
                ToolKind::ListInstances => false,
                ToolKind::Builtin => {
                    return Err(Error::new(
                        ErrorCode::ToolConflict,
                        format!(
                            "Tool '{}' is one of the gateway's built-in tools (reserved in every session); rename it",
                            t.name
                        ),
                    ))
                }
            };
            if shares {
                continue;
            }
            let why = match (&owner.kind, me.instance) {
                _ if *owner.provider_name != *me.name => "",
                (ToolKind::Own(_), Some(_)) => {
                    " without an instance; only instances (hello.instance) of a provider share tools"
                }
                (ToolKind::Shared(_), None) => {
                    " as a multi-instance provider; send 'instance' in hello to share its tools"
                }
                _ => "",
            };
            return Err(Error::new(
                ErrorCode::ToolConflict,
                format!(
                    "Tool '{}' already registered by provider '{}'{why} in session '{}'",
                    t.name, owner.provider_name, self.info.id
                ),
            ));
        }
        Ok(())
    }

    /// Rebuilds the tool map from the bound providers. Called on every bind, unbind and
    /// update; a session holds at most a few hundred tools, so rebuilding is cheap and
    /// cannot drift from the providers' own lists. Conflicts were refused at registration;
    /// should one slip through, the provider bound first keeps the name.
    pub fn rebuild_tools(&mut self, providers: &HashMap<String, ProviderEntry>) {
        self.install_builtins();
        self.held.clear();
        // Provider names with instances here, in bind order: each gets a list tool.
        let mut groups: Vec<Arc<str>> = Vec::new();
        for pid in &self.bound {
            let Some(p) = providers.get(pid) else {
                continue;
            };
            let name: Arc<str> = p.name.as_deref().unwrap_or_default().into();
            // A provider the session's profile leaves out adds nothing, not even its
            // instances' list tool.
            if self
                .profile
                .as_ref()
                .is_some_and(|pr| !pr.allows_provider(&name))
            {
                continue;
            }
            let shared = p.instance.as_deref().is_some_and(|i| !i.is_empty());
            if shared && !groups.contains(&name) {
                groups.push(name.clone());
            }
            let by = Bearer::of(p, name.clone(), shared);
            let tools = p.tools_in(&self.info.id);
            for (def, schema) in tools.with_schemas() {
                if !self.profile_sees(Source::Provider(&name), &def.name) {
                    continue;
                }
                // A definition that is not the pinned one is not offered (`crate::pins`);
                // an instance declaring the pinned one still serves the tool.
                if !self.pins.offers(&name, def) {
                    self.held.insert(def.name.clone(), name.clone());
                    continue;
                }
                let holder = Holder {
                    by: by.clone(),
                    def: def.clone(),
                    schema: schema.clone(),
                };
                match self.tools.entry(def.name.clone()) {
                    Entry::Vacant(v) => {
                        v.insert(ToolEntry {
                            def: def.clone(),
                            provider_name: name.clone(),
                            kind: match shared {
                                true => ToolKind::Shared(vec![holder]),
                                false => ToolKind::Own(holder),
                            },
                        });
                    }
                    Entry::Occupied(mut o) => {
                        let e = o.get_mut();
                        if let (ToolKind::Shared(holders), true) =
                            (&mut e.kind, shared && e.provider_name == name)
                        {
                            holders.push(holder);
                            e.def = def.clone();
                        }
                    }
                }
            }
        }
        for name in groups {
            let tool = instances::list_tool_name(&name);
            if !self.profile_sees(Source::Gateway, &tool) {
                continue;
            }
            if let Entry::Vacant(v) = self.tools.entry(tool.clone()) {
                v.insert(ToolEntry {
                    def: Arc::new(instances::list_tool_def(&tool, &name)),
                    provider_name: name,
                    kind: ToolKind::ListInstances,
                });
            }
        }
        self.toolset_changed.notify_one();
    }

    /// Rebuilds every live session's tool map (the pins changed); each session's host
    /// gets the new tool set if it differs.
    pub fn rebuild_all_tools(state: &mut super::State) {
        let super::State {
            sessions,
            providers,
            ..
        } = state;
        for s in sessions.values_mut().filter(|s| !s.is_ending()) {
            s.rebuild_tools(providers);
        }
    }

    /// Empties the tool map but for the gateway's built-in tools (every session has them
    /// from its start; they are never published as a change), and with a search profile
    /// the search surface's two tools.
    pub fn install_builtins(&mut self) {
        self.tools.clear();
        let builtin: Arc<str> = super::builtin_defs::PROVIDER.into();
        let search = match self.searches() {
            true => &super::search_defs::tools()[..],
            false => &[],
        };
        for def in super::builtin_defs::tools().iter().chain(search) {
            if !self.profile_sees(Source::Gateway, &def.name) {
                continue;
            }
            self.tools.insert(
                def.name.clone(),
                ToolEntry {
                    def: def.clone(),
                    provider_name: builtin.clone(),
                    kind: ToolKind::Builtin,
                },
            );
        }
    }

    /// What to add to "no such tool" when the session's profile may be why: `, which was
    /// opened with profile 'P' (…)`; empty without a profile.
    pub fn profile_note(&self) -> String {
        match &self.profile {
            Some(p) => format!(
                ", which was opened with profile '{}' (docs/clients.md, \"Profiles\")",
                p.name
            ),
            None => String::new(),
        }
    }

    /// Whether the session's profile (if any) lets the tool through.
    fn profile_sees(&self, source: Source<'_>, tool: &str) -> bool {
        self.profile.as_ref().is_none_or(|p| p.sees(source, tool))
    }

    /// Whether the session's profile offers its tools through the search surface.
    pub fn searches(&self) -> bool {
        self.profile
            .as_ref()
            .is_some_and(|p| p.surface == crate::profiles::Surface::Search)
    }

    /// The tool set as the host sees it (`session.tools`, MCP `tools/list`, the
    /// playground), sorted by name. With the search surface, only the gateway's own tools
    /// (the two search tools among them): the rest is found with `tap_find_tools` and
    /// called with `tap_call_tool`, or called by name by a client that knows it.
    pub fn host_tools(&self, default_timeout: Duration) -> Vec<HostTool> {
        let mut tools = self.callable_tools(default_timeout);
        if self.searches() {
            tools.retain(|t| t.provider == super::builtin_defs::PROVIDER);
        }
        tools
    }

    /// Every tool a call may name in this session (what its profile lets through), as
    /// [`Session::host_tools`] would list it, sorted by name.
    pub fn callable_tools(&self, default_timeout: Duration) -> Vec<HostTool> {
        let mut tools: Vec<HostTool> = self
            .tools
            .values()
            .map(|e| {
                let (parameters, provider_id) = match &e.kind {
                    ToolKind::Own(h) => (e.def.parameters.clone(), h.by.provider_id.clone()),
                    ToolKind::Shared(holders) => (
                        instances::with_target(
                            &e.def.parameters,
                            &e.provider_name,
                            &holders
                                .iter()
                                .filter_map(|h| {
                                    Some((h.by.instance.as_deref()?, h.by.label.as_deref()))
                                })
                                .collect::<Vec<_>>(),
                        ),
                        holders
                            .last()
                            .map(|h| h.by.provider_id.clone())
                            .unwrap_or_default(),
                    ),
                    // Generated by the gateway: no provider connection answers it.
                    ToolKind::ListInstances | ToolKind::Builtin => {
                        (e.def.parameters.clone(), String::new())
                    }
                };
                HostTool {
                    name: e.def.name.clone(),
                    description: e.def.description.clone(),
                    parameters,
                    provider: e.provider_name.to_string(),
                    provider_id,
                    timeout_ms: ProviderEntry::timeout_of(&e.def, default_timeout).as_millis()
                        as u64,
                }
            })
            .collect();
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        tools
    }
}

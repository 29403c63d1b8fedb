//! A session's tools: who holds each name, how a call is routed, and the set the host sees.
//!
//! A name is held by one provider (spec: "Two providers CANNOT register the same tool name
//! in the same session"), except that the instances of a multi-instance provider (same
//! `name`, each with its own `hello.instance`) share their tools: the host sees one copy
//! with a `target` parameter, and the gateway adds `list_<name>_instances` (spec:
//! "Multi-instance providers"; see `instances`).

use super::instances;
use super::Session;
use crate::providers::{ProviderEntry, ProviderLink};
use crate::tools::call::Route;
use crate::tools::CallError;
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::time::Duration;
use tap_protocol::host::HostTool;
use tap_protocol::provider::{Hello, ToolDef};
use tap_protocol::{ErrorCode, Json};

/// One tool name of a session.
pub(crate) struct ToolEntry {
    /// The definition the host sees. A shared tool shows the declaration of the most
    /// recently bound instance holding it (with `target` added when published).
    pub def: ToolDef,
    /// The provider name behind it (every holder has it).
    pub provider_name: String,
    pub kind: ToolKind,
}

pub(crate) enum ToolKind {
    /// One provider's own tool.
    Own(Holder),
    /// Declared by instances of one multi-instance provider, in bind order (never empty).
    Shared(Vec<Holder>),
    /// The generated `list_<name>_instances`, answered by the gateway itself.
    ListInstances,
}

/// A provider connection holding a tool.
pub(crate) struct Holder {
    pub provider_id: String,
    /// Its `hello.instance` (set exactly for shared tools).
    pub instance: Option<String>,
    /// A short label from its `hello.metadata`, for the `target` description.
    pub label: Option<String>,
    /// Its own declaration: its `timeout` applies to calls routed to it.
    pub def: ToolDef,
    pub link: ProviderLink,
}

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

/// What a call asks of the routing.
#[derive(Default, Clone, Copy)]
pub(crate) struct Want<'a> {
    /// The call's `args.target` (only shared tools read it).
    pub target: Option<&'a Json>,
    /// Instances not to route to (the one whose retryable failure is being retried).
    pub exclude: &'a [String],
    /// Keep this holder if it still has the tool (a call that waited for its slot).
    pub pin: Option<&'a str>,
}

/// Where a call goes.
pub(crate) enum Resolved {
    /// To a provider.
    Call(Route),
    /// The generated `list_<name>_instances` of this provider name.
    ListInstances(String),
}

impl Holder {
    fn of(p: &ProviderEntry, def: &ToolDef, shared: bool) -> Self {
        Self {
            provider_id: p.id.clone(),
            instance: p.instance.clone().filter(|_| shared),
            label: instances::label(p.metadata.as_ref()),
            def: def.clone(),
            link: p.link.clone(),
        }
    }

    fn route(&self, provider_name: &str, default_timeout: Duration, shared: bool) -> Route {
        Route {
            provider_id: self.provider_id.clone(),
            provider_name: provider_name.to_string(),
            instance: self.instance.clone(),
            link: self.link.clone(),
            timeout: ProviderEntry::timeout_of(&self.def, default_timeout),
            failover: false,
            strip_target: shared,
        }
    }
}

impl Session {
    pub fn route(
        &self,
        tool: &str,
        want: Want<'_>,
        default_timeout: Duration,
    ) -> Result<Resolved, CallError> {
        let entry = self.tools.get(tool).ok_or_else(|| {
            CallError::new(
                ErrorCode::NotFound,
                format!("No tool '{tool}' in session '{}'", self.info.id),
            )
        })?;
        let holders = match &entry.kind {
            ToolKind::Own(h) => {
                return Ok(Resolved::Call(h.route(
                    &entry.provider_name,
                    default_timeout,
                    false,
                )))
            }
            ToolKind::ListInstances => {
                return Ok(Resolved::ListInstances(entry.provider_name.clone()))
            }
            ToolKind::Shared(holders) => holders,
        };
        let name = &entry.provider_name;
        let live = || {
            holders
                .iter()
                .filter_map(|h| h.instance.as_deref())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match want.target {
            Some(Json::String(target)) => {
                match holders.iter().find(|h| h.instance.as_deref() == Some(target)) {
                    Some(h) => Ok(Resolved::Call(h.route(name, default_timeout, true))),
                    None => Err(CallError::new(
                        ErrorCode::NotFound,
                        format!(
                            "No instance '{target}' of provider '{name}' holds tool '{tool}' in session '{}'; live instances: {} (see {})",
                            self.info.id,
                            live(),
                            instances::list_tool_name(name)
                        ),
                    )),
                }
            }
            None | Some(Json::Null) => {
                let candidates = holders
                    .iter()
                    .filter(|h| !want.exclude.contains(&h.provider_id));
                let pinned = want
                    .pin
                    .and_then(|pin| candidates.clone().find(|h| h.provider_id == pin));
                // Spec: "If `target` is omitted, routes to the most recently active instance".
                match pinned.or_else(|| candidates.max_by_key(|h| h.link.activity.order())) {
                    Some(h) => {
                        let mut route = h.route(name, default_timeout, true);
                        route.failover = true;
                        Ok(Resolved::Call(route))
                    }
                    None => Err(CallError::new(
                        ErrorCode::NotFound,
                        format!("No other instance of provider '{name}' holds tool '{tool}'"),
                    )),
                }
            }
            Some(other) => Err(CallError::new(
                ErrorCode::InvalidJson,
                format!("'target' must be an instance id (a string), got {other}"),
            )),
        }
    }

    /// `TOOL_CONFLICT` if one of `tools` is held by another provider in this session (spec:
    /// "Two providers CANNOT register the same tool name in the same session"; instances of
    /// one provider name share), or is a `list_` name reserved for another provider's
    /// generated tools (spec: "MUST NOT start with `list_` followed by another provider's
    /// name").
    pub fn check_conflicts(
        &self,
        tools: &[ToolDef],
        me: &Claimant<'_>,
        providers: &HashMap<String, ProviderEntry>,
    ) -> Result<(), (ErrorCode, String)> {
        let others: Vec<&str> = self
            .bound
            .iter()
            .filter_map(|id| providers.get(id)?.name.as_deref())
            .filter(|n| *n != me.name)
            .collect();
        for t in tools {
            instances::check_reserved(&t.name, &others)?;
            let Some(owner) = self.tools.get(&t.name) else {
                continue;
            };
            let shares = match &owner.kind {
                ToolKind::Own(h) => h.provider_id == me.id,
                ToolKind::Shared(_) => me.instance.is_some() && owner.provider_name == me.name,
                ToolKind::ListInstances => false,
            };
            if shares {
                continue;
            }
            let why = match (&owner.kind, me.instance) {
                _ if owner.provider_name != me.name => "",
                (ToolKind::Own(_), Some(_)) => {
                    " without an instance; only instances (hello.instance) of a provider share tools"
                }
                (ToolKind::Shared(_), None) => {
                    " as a multi-instance provider; send 'instance' in hello to share its tools"
                }
                _ => "",
            };
            return Err((
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
        self.tools.clear();
        // Provider names with instances here, in bind order: each gets a list tool.
        let mut groups: Vec<String> = Vec::new();
        for pid in &self.bound {
            let Some(p) = providers.get(pid) else {
                continue;
            };
            let name = p.name.clone().unwrap_or_default();
            let shared = p.instance.as_deref().is_some_and(|i| !i.is_empty());
            if shared && !groups.contains(&name) {
                groups.push(name.clone());
            }
            for def in p.tools_in(&self.info.id).iter() {
                let holder = Holder::of(p, def, shared);
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
            if let Entry::Vacant(v) = self.tools.entry(tool.clone()) {
                v.insert(ToolEntry {
                    def: instances::list_tool_def(&tool, &name),
                    provider_name: name,
                    kind: ToolKind::ListInstances,
                });
            }
        }
        self.toolset_changed.notify_one();
    }

    /// The tool set as the host sees it, sorted by name.
    pub fn host_tools(&self, default_timeout: Duration) -> Vec<HostTool> {
        let mut tools: Vec<HostTool> = self
            .tools
            .values()
            .map(|e| {
                let (parameters, provider_id) = match &e.kind {
                    ToolKind::Own(h) => (e.def.parameters.clone(), h.provider_id.clone()),
                    ToolKind::Shared(holders) => (
                        instances::with_target(&e.def.parameters, &e.provider_name, holders),
                        holders
                            .last()
                            .map(|h| h.provider_id.clone())
                            .unwrap_or_default(),
                    ),
                    // Generated by the gateway: no provider connection answers it.
                    ToolKind::ListInstances => (e.def.parameters.clone(), String::new()),
                };
                HostTool {
                    name: e.def.name.clone(),
                    description: e.def.description.clone(),
                    parameters,
                    provider: e.provider_name.clone(),
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

//! Where a call goes: resolved from the session's tool map (`state::tool_map`, who
//! holds which tool) under the state lock, then used without it.

use crate::request::CallError;
use crate::state::instances;
use crate::state::provider_entry::ProviderEntry;
use crate::state::session::Session;
use crate::state::tool_entry::{Bearer, Holder, ToolKind};
use crate::state::Core;
use std::sync::Arc;
use std::time::Duration;
use tap_protocol::{ErrorCode, Json};

/// Where a call goes: resolved under the state lock, used without it.
pub(crate) struct Route {
    /// The provider connection: its id, name, instance (for a shared tool) and link.
    pub by: Arc<Bearer>,
    pub timeout: Duration,
    /// The gateway chose the instance (a shared tool called without `target`): a
    /// retryable failure may be retried on another one.
    pub failover: bool,
    /// `target` is the gateway's parameter here and is removed from the args sent.
    pub strip_target: bool,
    /// The holder's compiled `parameters` (see `crate::state::tool_schema`).
    pub schema: crate::state::tool_schema::Schema,
    /// The holder's definition (its annotations say whether approval is asked by default).
    pub def: Arc<tap_protocol::provider::ToolDef>,
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
    /// One of the gateway's built-in tools.
    Builtin,
}

/// Resolves where a call of `tool` in `session_id` goes, under the state lock.
pub(crate) fn resolve(
    core: &Core,
    session_id: &str,
    tool: &str,
    want: Want<'_>,
) -> Result<Resolved, CallError> {
    let state = core.state();
    let session = state.live_session(session_id)?;
    in_session(session, tool, want, core.config.default_tool_timeout)
}

fn in_session(
    session: &Session,
    tool: &str,
    want: Want<'_>,
    default_timeout: Duration,
) -> Result<Resolved, CallError> {
    let entry = session.tools.get(tool).ok_or_else(|| {
        if let Some(provider) = session.held.get(tool) {
            return held(tool, provider);
        }
        CallError::new(
            ErrorCode::NotFound,
            format!(
                "No tool '{tool}' in session '{}'{}",
                session.info.id,
                session.profile_note()
            ),
        )
    })?;
    let holders = match &entry.kind {
        ToolKind::Own(h) => return Ok(Resolved::Call(route_to(h, default_timeout, false))),
        ToolKind::ListInstances => {
            return Ok(Resolved::ListInstances(entry.provider_name.to_string()))
        }
        ToolKind::Builtin => return Ok(Resolved::Builtin),
        ToolKind::Shared(holders) => holders,
    };
    let name = &entry.provider_name;
    let live = || {
        holders
            .iter()
            .filter_map(|h| h.by.instance.as_deref())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match want.target {
        Some(Json::String(target)) => {
            match holders
                .iter()
                .find(|h| h.by.instance.as_deref() == Some(target))
            {
                Some(h) => Ok(Resolved::Call(route_to(h, default_timeout, true))),
                None => Err(CallError::new(
                    ErrorCode::NotFound,
                    format!(
                        "No instance '{target}' of provider '{name}' holds tool '{tool}' in session '{}'; live instances: {} (see {})",
                        session.info.id,
                        live(),
                        instances::list_tool_name(name)
                    ),
                )),
            }
        }
        None | Some(Json::Null) => {
            let candidates = holders
                .iter()
                .filter(|h| !want.exclude.contains(&h.by.provider_id));
            let pinned = want
                .pin
                .and_then(|pin| candidates.clone().find(|h| h.by.provider_id == pin));
            // Spec: "If `target` is omitted, routes to the most recently active instance".
            match pinned.or_else(|| candidates.max_by_key(|h| h.by.link.activity.order())) {
                Some(h) => {
                    let mut route = route_to(h, default_timeout, true);
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

/// A call of a tool whose changed definition waits for the user (`crate::pins`): refused
/// before anything reaches the provider. `DENIED`: the user has not allowed it (yet).
fn held(tool: &str, provider: &str) -> CallError {
    CallError::new(
        ErrorCode::Denied,
        format!(
            "Tool '{tool}' of provider '{provider}' is held: its definition changed since it was pinned, and it is not offered until the user accepts the change (`tap pins diff {provider} {tool}`, then `tap pins accept {provider} {tool}`)"
        ),
    )
}

fn route_to(h: &Holder, default_timeout: Duration, shared: bool) -> Route {
    Route {
        by: h.by.clone(),
        timeout: ProviderEntry::timeout_of(&h.def, default_timeout),
        failover: false,
        strip_target: shared,
        schema: h.schema.clone(),
        def: h.def.clone(),
    }
}

impl Route {
    /// Checks `args` against the holder's declared schema, as the provider would get them
    /// (without the gateway's `target` on a shared tool, so a schema with
    /// `additionalProperties: false` does not refuse it).
    pub fn check_args(&self, tool: &str, args: &Json) -> Result<(), CallError> {
        if self.schema.is_none() {
            return Ok(());
        }
        match args.as_object() {
            Some(o) if self.strip_target && o.contains_key("target") => {
                let mut sent = o.clone();
                sent.shift_remove("target");
                crate::state::tool_schema::check(tool, &self.schema, &Json::Object(sent))
            }
            // No arguments at all (an in-process caller's default) read as `{}`.
            _ if args.is_null() => crate::state::tool_schema::check(
                tool,
                &self.schema,
                &Json::Object(Default::default()),
            ),
            _ => crate::state::tool_schema::check(tool, &self.schema, args),
        }
    }
}

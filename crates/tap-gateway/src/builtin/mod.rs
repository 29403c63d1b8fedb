//! The gateway's built-in `tap_*` tools, offered in every session beside its providers'
//! (in `session.tools`, MCP `tools/list`, the playground): the agent reads and writes its
//! EventStreams, turns session injectors on and off, and runs emitters.
//!
//! They sit in the session's tool map like a provider's tools (`ToolKind::Builtin`, held
//! by the pseudo-provider [`PROVIDER`]) and are called through the same path: the hook
//! precheck, the `tool.call` span, argument checks against their schemas. The names are
//! reserved: a provider declaring one is refused with `TOOL_CONFLICT`.
//!
//! What the user owns (emitters from `tap.config.json` or started from the panel, user-owned
//! injectors) the agent changes only with `force`; a call from the panel or the CLI
//! (`Caller::User`) acts as the user.
//!
//! A session whose profile has the search surface also holds `tap_find_tools` (here,
//! `search_tools.rs`) and `tap_call_tool` (unwrapped by `tools::call`).

mod emitter_tools;
mod evidence;
mod goal_tools;
mod record_tools;
pub(crate) mod search_tools;
pub(crate) mod session_mode;
mod session_state;
mod stream_tools;

use crate::emitters::api::Origin;
use crate::error::Error;
use crate::request::{CallError, Caller};
use crate::state::tool_schema::Schema;
use crate::state::Core;
use std::sync::{Arc, OnceLock};
use tap_protocol::emitters::{Lifespan, Ownership};
use tap_protocol::{ErrorCode, Json};

// The definitions live with the state: every session's tool map holds them from its start.
use crate::state::builtin_defs as defs;
pub(crate) use crate::state::builtin_defs::{tools, PROVIDER};

fn schema(name: &str) -> Option<&'static Schema> {
    tools()
        .with_schemas()
        .chain(crate::state::search_defs::tools().with_schemas())
        .find(|(d, _)| d.name == name)
        .map(|(_, s)| s)
}

/// Checks `args` of the built-in tool `tool` against its schema (no arguments read as `{}`).
pub(crate) fn check_args(tool: &str, args: &Json) -> Result<(), CallError> {
    let Some(schema) = schema(tool) else {
        return Err(CallError::new(
            ErrorCode::NotFound,
            format!("No built-in tool named '{tool}'"),
        ));
    };
    let empty = Json::Object(Default::default());
    let args = if args.is_null() { &empty } else { args };
    crate::state::tool_schema::check(tool, schema, args)
}

/// Runs a built-in tool for `caller` in `session_id`.
pub(crate) async fn call(
    core: &Arc<Core>,
    session_id: &str,
    caller: Caller,
    tool: &str,
    args: &Json,
) -> Result<Json, CallError> {
    check_args(tool, args)?;
    // No arguments at all (an in-process caller's default) read as `{}`.
    let empty = Json::Object(Default::default());
    let args = if args.is_null() { &empty } else { args };
    let a = Args { json: args, caller };
    match tool {
        defs::LIST_STREAMS => stream_tools::list(core, session_id),
        defs::POST => stream_tools::post(core, session_id, &a).await,
        defs::STREAM_HISTORY => stream_tools::history(core, session_id, &a),
        defs::ENABLE_INJECTOR => stream_tools::set_injector(core, session_id, &a, true).await,
        defs::DISABLE_INJECTOR => stream_tools::set_injector(core, session_id, &a, false).await,
        defs::LIST_EMITTERS => emitter_tools::list(core, session_id),
        defs::START_EMITTER => emitter_tools::start(core, session_id, &a).await,
        defs::SET_EVENT_FILTER => emitter_tools::set_filter(core, session_id, &a).await,
        defs::STOP_EMITTER => emitter_tools::stop(core, session_id, &a).await,
        defs::STATUS => to_json(crate::status::snapshot(core)),
        crate::state::goal_defs::VERIFY_GOAL_OUTPUT => {
            goal_tools::verify(core, session_id, &a).await
        }
        crate::state::goal_defs::AUDIT_CLAIMS => goal_tools::audit(core, session_id, &a).await,
        crate::state::record_defs::QUERY_RECORDS => record_tools::query(core, session_id, &a).await,
        crate::state::record_defs::GET_SESSION_STATE => session_state::get(core, session_id),
        crate::state::mode_defs::SET_SESSION_MODE => session_mode::set(core, session_id, &a).await,
        crate::state::search_defs::FIND_TOOLS => search_tools::find(core, session_id, &a),
        // `tap_call_tool` is the call path's own (`tools::call`): it calls another tool.
        other => Err(Error::new(
            ErrorCode::NotFound,
            format!("No built-in tool named '{other}'"),
        )),
    }
}

type Answer = Result<Json, Error>;

fn to_json<T: serde::Serialize>(v: T) -> Answer {
    serde_json::to_value(v).map_err(|e| Error::new(ErrorCode::Internal, e.to_string()))
}

/// A call's arguments (checked against the schema already), read by either of their
/// names: the reference's and this gateway's.
struct Args<'a> {
    json: &'a Json,
    caller: Caller,
}

impl Args<'_> {
    fn text(&self, keys: &[&str]) -> Option<String> {
        keys.iter()
            .find_map(|k| self.json.get(*k)?.as_str())
            .map(str::to_string)
    }

    fn flag(&self, key: &str) -> Option<bool> {
        self.json.get(key).and_then(Json::as_bool)
    }

    fn uint(&self, keys: &[&str]) -> Option<u64> {
        keys.iter().find_map(|k| self.json.get(*k)?.as_u64())
    }

    fn object(&self) -> &serde_json::Map<String, Json> {
        static EMPTY: OnceLock<serde_json::Map<String, Json>> = OnceLock::new();
        self.json
            .as_object()
            .unwrap_or_else(|| EMPTY.get_or_init(Default::default))
    }

    /// The stream named by `channel` or `stream`.
    fn stream(&self) -> Option<String> {
        self.text(&["channel", "stream"])
    }

    /// The stream, normalised as emitter stream names are; an error when absent or empty.
    fn emitter_stream(&self) -> Result<String, Error> {
        let raw = self.stream().ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidJson,
                "'channel' (or 'stream') is required",
            )
        })?;
        let name = crate::state::emitters::spec::normalise(&raw);
        if name.is_empty() || name.len() > crate::limits::MAX_EMITTER_NAME_LEN {
            return Err(Error::new(
                ErrorCode::InvalidJson,
                format!(
                    "'channel' must have 1 to {} of a-z, 0-9, '.', '_', '-' (got '{raw}')",
                    crate::limits::MAX_EMITTER_NAME_LEN
                ),
            ));
        }
        Ok(name)
    }

    fn lifespan(&self) -> Lifespan {
        match self.text(&["lifespan", "scope"]).as_deref() {
            Some("persistent") => Lifespan::Persistent,
            _ => Lifespan::Temporary,
        }
    }

    /// Who acts: the agent, or the user (the panel, the CLI).
    fn origin(&self) -> Origin {
        match self.caller {
            Caller::Agent => Origin::Agent,
            Caller::User => Origin::User,
        }
    }

    /// Whose protection applies to what this call changes.
    fn by(&self) -> Ownership {
        self.origin().by()
    }

    /// Who will own what this call makes: as asked, else whoever acts.
    fn ownership(&self) -> Ownership {
        match self.text(&["ownership", "managedBy"]).as_deref() {
            Some("userOwned") => Ownership::UserOwned,
            Some("modelOwned") => Ownership::ModelOwned,
            _ => self.by(),
        }
    }

    fn force(&self) -> bool {
        self.flag("force") == Some(true)
    }
}

//! Provider connections (TAP Provider Interface v2 over WebSocket): the per-connection
//! state machine, the registry entry other parts of the gateway see, and validation.

pub(crate) mod activity;
mod all_binding;
pub(crate) mod binding;
mod connection;
mod file_result;
pub(crate) mod identity;
mod local;
pub(crate) mod project;
mod spawn;
mod updates;
mod validate;

pub use local::{LocalClosed, LocalProvider};
pub use project::RestartPolicy;
pub use spawn::SpawnSpec;

pub(crate) use connection::{serve, unbind_provider};
pub(crate) use updates::{abandon_acks, ack_published, PendingAck};

use crate::tools::CallTable;
use serde::Serialize;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tap_protocol::provider::ToolDef;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

/// Serializes a message into a text frame. Our own types always serialize.
pub(crate) fn frame<T: Serialize>(msg: &T) -> Message {
    Message::text(serde_json::to_string(msg).expect("protocol types serialize"))
}

/// What the rest of the gateway holds to talk to one provider connection.
#[derive(Clone)]
pub(crate) struct ProviderLink {
    /// Frames for the provider; the connection task writes them in order.
    pub out: mpsc::UnboundedSender<Message>,
    /// Calls in flight on this connection.
    pub calls: Arc<CallTable>,
    /// `gate.check`s awaiting this provider's `gate.result`.
    pub gates: Arc<crate::hooks::GateTable>,
    /// Cancelling this closes the connection (after its queued frames are written).
    pub kill: CancellationToken,
    /// When the provider last sent anything (multi-instance routing).
    pub activity: Arc<activity::Activity>,
}

/// Trust level of a provider (spec: "Trust levels").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trust {
    /// In-process, through [`LocalProvider`] (the spec's LocalProviderTransport): every
    /// capability, including binding to `"all"` and reading other providers' streams.
    Internal,
    /// Holds the gateway token or a per-provider token.
    Project,
    /// Paired by the user (`auth {mode: "pair"}`) and holding the issued `ext-…` token:
    /// tools, push and own streams only, in one session (see `crate::pairing`).
    External,
}

impl Trust {
    pub fn as_str(self) -> &'static str {
        match self {
            Trust::Internal => "internal",
            Trust::Project => "project",
            Trust::External => "external",
        }
    }
}

/// Where a connection stands after authentication.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Authenticated; `hello` expected.
    AwaitHello,
    /// Registered in a session.
    Bound,
    /// Was bound; its session ended or a rebind failed. `hello` or `goodbye` expected.
    Unbound,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::AwaitHello => "awaitHello",
            Phase::Bound => "bound",
            Phase::Unbound => "unbound",
        }
    }
}

/// The registry's view of an authenticated provider connection.
pub(crate) struct ProviderEntry {
    pub id: String,
    pub name: Option<String>,
    pub instance: Option<String>,
    /// `hello.metadata`: shown by `list_<name>_instances` and in a shared tool's `target`.
    pub metadata: Option<tap_protocol::JsonObject>,
    pub trust: Trust,
    pub phase: Phase,
    pub session: Option<String>,
    pub tools: Arc<Vec<ToolDef>>,
    /// `onPreToolUse` rules for the bound session, in registration order.
    pub hooks: Arc<Vec<crate::hooks::CompiledRule>>,
    /// Session event names from `hello.subscribe` (see `sessions::events`).
    pub subscribe: Vec<String>,
    pub link: ProviderLink,
    pub remote: SocketAddr,
    pub connected_at: SystemTime,
    /// The pairing whose token this connection authenticated with (trust external).
    pub pairing: Option<String>,
    /// The session whose project-provider token this connection authenticated with
    /// (`tap.config.json`): the only session it may see and bind to.
    pub scope: Option<String>,
    /// Set while bound to `"all"` (then `session` is `None`); see [`binding`].
    pub all: Option<binding::AllBinding>,
    /// Revision and in-flight updates per bound session.
    pub updates: binding::Updates,
}

impl ProviderEntry {
    /// The gateway-enforced timeout of one of this provider's tools.
    pub fn timeout_of(def: &ToolDef, default: Duration) -> Duration {
        def.timeout.map(Duration::from_millis).unwrap_or(default)
    }
}

//! What the panel's Diagnostics page shows (control method `diagnostics`): errors the
//! gateway sent to providers by code, every limit with how often it was hit, the
//! connections by state, and the newest failures.

use crate::ErrorCode;
use serde::{Deserialize, Serialize};

/// Counters since the gateway started, and the state of every connection now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Diagnostics {
    /// RFC 3339 time the counters started (the gateway's start).
    pub since: String,
    /// `error` messages sent to providers, by code, most frequent first.
    pub errors: Vec<ErrorCount>,
    /// Every limit the gateway enforces, in a fixed order, with how often it was hit.
    pub limits: Vec<LimitHits>,
    /// Open connections by kind and state.
    pub connections: Connections,
    /// The newest failures first (at most [`Diagnostics::failures_kept`]).
    pub recent_failures: Vec<Failure>,
    /// How many failures the gateway keeps.
    pub failures_kept: usize,
    /// The ledger (history and traces): durable or memory-only, its queue and counters.
    pub ledger: crate::ledger::LedgerState,
    /// The OTLP/HTTP span export, when an endpoint is configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub otlp: Option<OtlpExport>,
}

/// Spans exported over OTLP/HTTP (`OTEL_EXPORTER_OTLP_ENDPOINT`), counted since the start.
/// A span the export loses is still in the ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct OtlpExport {
    /// Where spans are POSTed: scheme, host, port and path (never user info or a query).
    pub endpoint: String,
    /// Spans the export queue holds; a span finished while it is full is not exported.
    pub queue_capacity: u32,
    /// Spans the receiver accepted.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub exported: u64,
    /// Spans not exported because the queue was full (or the gateway was stopping).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub dropped: u64,
    /// Spans given up on: the receiver refused their batch, or every retry failed.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub failed: u64,
    /// The last failure, while exports are failing; cleared by the next success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

/// How many `error` messages with one code went to providers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ErrorCount {
    /// The error code.
    pub code: ErrorCode,
    /// How many were sent.
    pub count: u64,
}

/// One limit and how often it was hit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct LimitHits {
    /// Stable id, e.g. `payloadSize`, `rebindRate`, `providerConnections`.
    pub id: String,
    /// What the limit is and what happens when it is hit, in a sentence.
    pub description: String,
    /// How often it was hit.
    pub hits: u64,
    /// RFC 3339 time of the last hit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_at: Option<String>,
}

/// Open connections by kind and state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Connections {
    /// Provider sockets (`/`).
    pub providers: ProviderConnections,
    /// Session-host sockets (`/session`).
    pub session_hosts: HostConnections,
    /// Control-plane sockets (`/control`: panels, the tray, `tap pairing`).
    pub control_clients: ControlConnections,
    /// Registered sessions.
    pub sessions: usize,
}

/// Provider sockets by state (`awaitAuth` → `awaitPairing` → `awaitHello` → `bound` ⇄ `unbound`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ProviderConnections {
    /// Open sockets (every state below).
    pub open: usize,
    /// At most this many at once; more get HTTP 503.
    pub max: usize,
    /// Connected, no `auth` yet.
    pub await_auth: usize,
    /// Asked to pair; the user has not confirmed the code yet.
    pub await_pairing: usize,
    /// Authenticated, no `hello` yet.
    pub await_hello: usize,
    /// Bound to a session.
    pub bound: usize,
    /// Was bound; its session ended or a rebind failed.
    pub unbound: usize,
    /// What is queued for these sockets and not yet written (slow consumers).
    #[serde(default)]
    pub queued: OutboundQueue,
}

/// Session-host sockets, and hosts whose socket dropped but whose sessions wait for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct HostConnections {
    /// Open sockets (authenticated or not).
    pub open: usize,
    /// At most this many at once.
    pub max: usize,
    /// Authenticated hosts with a socket.
    pub attached: usize,
    /// Hosts without a socket, within their resume grace.
    pub detached: usize,
    /// What is queued for these sockets and not yet written (slow consumers).
    #[serde(default)]
    pub queued: OutboundQueue,
}

/// Control-plane sockets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ControlConnections {
    /// Open sockets (authenticated or not).
    pub open: usize,
    /// At most this many at once.
    pub max: usize,
    /// What is queued for these sockets and not yet written (slow consumers).
    #[serde(default)]
    pub queued: OutboundQueue,
}

/// Frames queued for one kind of socket and not yet written. A peer that stops reading
/// is disconnected once its own queue would pass `maxBytes` or `maxMessages`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct OutboundQueue {
    /// Bytes queued now, over every socket of this kind.
    pub bytes: usize,
    /// Messages queued now, over every socket of this kind.
    pub messages: usize,
    /// The most bytes one socket of this kind ever had queued.
    pub peak_bytes: usize,
    /// One socket's limit in bytes.
    pub max_bytes: usize,
    /// One socket's limit in messages.
    pub max_messages: usize,
}

/// Something that went wrong: an `error` sent to a provider, or a limit that closed or
/// refused a connection without one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct Failure {
    /// RFC 3339 time.
    pub at: String,
    /// The error code sent, if an `error` was sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<ErrorCode>,
    /// The limit ([`LimitHits::id`]) that refused or closed a connection, when that was it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<String>,
    /// What happened.
    pub message: String,
    /// The message type the error answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<String>,
    /// The provider's id (`ProviderStatus.id`), once authenticated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The session the provider was bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

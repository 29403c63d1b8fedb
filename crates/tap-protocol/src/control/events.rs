//! What changed: the events a control connection receives, and the topics it follows.

use crate::logs::LogRecord;
use crate::pairing::PairingEntry;
use crate::provider::StreamEntry;
use crate::settings::Settings;
use serde::{Deserialize, Serialize};

/// What changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "kind")]
pub enum ControlEvent {
    /// A pairing request appeared, or a pairing changed (configured, confirmed,
    /// connected, disconnected). Carries the whole entry: replace by id.
    #[serde(rename = "pairing.changed")]
    PairingChanged {
        /// The entry as it is now.
        pairing: PairingEntry,
    },
    /// A pairing request or a paired provider is gone.
    #[serde(rename = "pairing.removed")]
    PairingRemoved {
        /// Its id.
        id: String,
        /// `denied`, `expired`, `revoked`, `failed`, …
        reason: String,
    },
    /// Sessions or providers changed: call `status` for the new state. Several of these
    /// may arrive in a burst; one `status` call after the burst is enough.
    #[serde(rename = "status.changed")]
    StatusChanged,
    /// This connection fell behind and events were dropped: call `snapshot` and start
    /// over from it.
    #[serde(rename = "resync")]
    Resync {
        /// Why, e.g. `lagged`.
        reason: String,
    },
    /// Counters or connection states changed (at most one every 250 ms): call
    /// `diagnostics`. Only after `diagnostics.follow`.
    #[serde(rename = "diagnostics.changed")]
    DiagnosticsChanged,
    /// An emitter started, stopped, ran, counted lines or changed its status, schedule or
    /// filter (at most one every 250 ms): call `emitters.list` (and `emitters.runs` for
    /// an emitter whose runs are shown). Only after `emitters.follow`.
    #[serde(rename = "emitters.changed")]
    EmittersChanged,
    /// Spans were recorded in the history (at most one every 250 ms, sent once they are
    /// committed): call `traces.list` (and `traces.get` for a trace being shown). Only
    /// after `traces.follow`.
    #[serde(rename = "traces.changed")]
    TracesChanged,
    /// A new record in the gateway's log. Only after `logs.follow`.
    #[serde(rename = "log")]
    Log {
        /// The record.
        record: LogRecord,
    },
    /// An event was stored in the followed session's streams. Only after `streams.follow`.
    #[serde(rename = "stream.entry")]
    StreamEntry {
        /// The session.
        #[serde(rename = "sessionId")]
        session_id: String,
        /// `stream@provider`.
        stream: String,
        /// The event.
        entry: StreamEntry,
    },
    /// The settings were changed (by any client).
    #[serde(rename = "settings.changed")]
    SettingsChanged {
        /// The settings as saved.
        settings: Settings,
    },
    /// A tool call waits for the user's approval (`approvals.approve`, `approvals.deny`
    /// answer it): everything a prompt shows.
    #[serde(rename = "approval.waiting")]
    ApprovalWaiting {
        /// The waiting call (boxed: it is the largest event by far).
        call: Box<crate::approvals::WaitingCall>,
    },
    /// A call stopped waiting for approval: remove it by id.
    #[serde(rename = "approval.resolved")]
    ApprovalResolved {
        /// Its approval id.
        id: String,
        /// How it ended.
        outcome: crate::approvals::ApprovalOutcome,
    },
    /// The approval policy changed: a rule of `policy.json` was set or removed
    /// (`policy.set`, `policy.remove`), or a remembered answer was made (an answer with a
    /// scope other than `call`) or revoked (`approvals.revoke`): call `policy.list` and
    /// `approvals.grants` for the new state. Hand edits of `policy.json` are not watched:
    /// `policy.list` reads the file again.
    #[serde(rename = "policy.changed")]
    PolicyChanged,
    /// A progress message of a `playground.call` this connection made, before its result.
    #[serde(rename = "playground.progress")]
    PlaygroundProgress {
        /// The call (`playground.call`'s `callId`).
        #[serde(rename = "callId")]
        call_id: String,
        /// Status text from the provider.
        message: String,
    },
    /// This connection fell behind a followed topic and `missed` of its events were
    /// dropped (the other events are unaffected): fetch it again (`logs.follow`,
    /// `streams.follow`) if the gap matters.
    #[serde(rename = "follow.lagged")]
    FollowLagged {
        /// `logs` or `streams`.
        topic: FollowTopic,
        /// How many events were dropped.
        missed: u64,
    },
}

/// What a `*.follow` method follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum FollowTopic {
    /// `diagnostics.follow`: `diagnostics.changed` events.
    Diagnostics,
    /// `emitters.follow`: `emitters.changed` events.
    Emitters,
    /// `traces.follow`: `traces.changed` events.
    Traces,
    /// `logs.follow`: `log` events.
    Logs,
    /// `streams.follow`: `stream.entry` events.
    Streams,
}

/// Params of `unfollow`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct UnfollowParams {
    /// What to stop following.
    pub topic: FollowTopic,
}

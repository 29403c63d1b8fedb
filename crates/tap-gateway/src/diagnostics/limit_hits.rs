//! Every limit the diagnostics count, with the sentence the panel shows for it. The
//! limits themselves live in `tap_protocol::limits` and are enforced where they apply;
//! this file only names them.

use tap_protocol::limits::{
    AUTH_TIMEOUT, HARD_FRAME_CAP_BYTES, MAX_CASE_FOLD_CODEPOINTS, MAX_CONTROL_CONNECTIONS,
    MAX_HOOK_RULES_PER_PROVIDER, MAX_HOST_CONNECTIONS, MAX_MESSAGE_BYTES,
    MAX_PAIRING_ATTEMPTS_PER_MINUTE, MAX_PENDING_PAIRINGS, MAX_PRE_AUTH_BYTES,
    MAX_PROVIDER_CONNECTIONS, MAX_PUSHES_PER_SECOND, MAX_QUEUED_CALLS, MAX_REBINDS_PER_MINUTE,
    MAX_STREAMS_PER_PROVIDER, MAX_STREAM_QUERY_LAST, MAX_TOOLS_PER_PROVIDER, MAX_TOOL_RESULT_BYTES,
};
use tap_protocol::limits::{
    CONTROL_WRITE_TIMEOUT, MAX_OUTBOUND_QUEUED_BYTES, MAX_OUTBOUND_QUEUED_MESSAGES,
    PEER_WRITE_TIMEOUT,
};

/// A limit a peer can hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Limit {
    PayloadSize,
    FrameCap,
    PreAuthBytes,
    AuthTimeout,
    ProviderConnections,
    HostConnections,
    ControlConnections,
    ToolCount,
    RuleCount,
    StreamCount,
    StreamQueryLast,
    RebindRate,
    PairingAttempts,
    PendingPairings,
    PushBudget,
    CallQueue,
    ControlLag,
    EmittersPerSession,
    SlowConsumer,
}

impl Limit {
    /// In the order the panel lists them.
    pub const ALL: [Limit; 19] = [
        Limit::PayloadSize,
        Limit::FrameCap,
        Limit::PreAuthBytes,
        Limit::AuthTimeout,
        Limit::ProviderConnections,
        Limit::HostConnections,
        Limit::ControlConnections,
        Limit::ToolCount,
        Limit::RuleCount,
        Limit::StreamCount,
        Limit::StreamQueryLast,
        Limit::RebindRate,
        Limit::PairingAttempts,
        Limit::PendingPairings,
        Limit::PushBudget,
        Limit::CallQueue,
        Limit::ControlLag,
        Limit::EmittersPerSession,
        Limit::SlowConsumer,
    ];

    pub fn index(self) -> usize {
        self as usize
    }

    /// The stable id on the wire (`LimitHits.id`).
    pub fn id(self) -> &'static str {
        match self {
            Limit::PayloadSize => "payloadSize",
            Limit::FrameCap => "frameCap",
            Limit::PreAuthBytes => "preAuthBytes",
            Limit::AuthTimeout => "authTimeout",
            Limit::ProviderConnections => "providerConnections",
            Limit::HostConnections => "hostConnections",
            Limit::ControlConnections => "controlConnections",
            Limit::ToolCount => "toolCount",
            Limit::RuleCount => "ruleCount",
            Limit::StreamCount => "streamCount",
            Limit::StreamQueryLast => "streamQueryLast",
            Limit::RebindRate => "rebindRate",
            Limit::PairingAttempts => "pairingAttempts",
            Limit::PendingPairings => "pendingPairings",
            Limit::PushBudget => "pushBudget",
            Limit::CallQueue => "callQueue",
            Limit::ControlLag => "controlLag",
            Limit::EmittersPerSession => "emittersPerSession",
            Limit::SlowConsumer => "slowConsumer",
        }
    }

    /// What the limit is and what happens when it is hit.
    pub fn description(self) -> String {
        const MB: usize = 1024 * 1024;
        match self {
            Limit::PayloadSize => format!(
                "A message over {} MB (a tool.result over {} MB): PAYLOAD_TOO_LARGE",
                MAX_MESSAGE_BYTES / MB,
                MAX_TOOL_RESULT_BYTES / MB
            ),
            Limit::FrameCap => format!(
                "A frame over {} MiB: the socket is closed",
                HARD_FRAME_CAP_BYTES / MB
            ),
            Limit::PreAuthBytes => format!(
                "More than {} KiB before authenticating: the socket is closed",
                MAX_PRE_AUTH_BYTES / 1024
            ),
            Limit::AuthTimeout => format!(
                "No auth within {} s: AUTH_FAILED, closed",
                AUTH_TIMEOUT.as_secs()
            ),
            Limit::ProviderConnections => format!(
                "More than {MAX_PROVIDER_CONNECTIONS} provider connections: HTTP 503"
            ),
            Limit::HostConnections => format!(
                "More than {MAX_HOST_CONNECTIONS} session-host connections: HTTP 503"
            ),
            Limit::ControlConnections => format!(
                "More than {MAX_CONTROL_CONNECTIONS} control connections: HTTP 503"
            ),
            Limit::ToolCount => format!(
                "More than {MAX_TOOLS_PER_PROVIDER} tools in one list: PAYLOAD_TOO_LARGE"
            ),
            Limit::RuleCount => format!(
                "More than {MAX_HOOK_RULES_PER_PROVIDER} hook rules, a stream filter too large, or patterns that would case-fold more than {MAX_CASE_FOLD_CODEPOINTS} codepoints: PAYLOAD_TOO_LARGE"
            ),
            Limit::StreamCount => format!(
                "More than {MAX_STREAMS_PER_PROVIDER} streams per provider and session: PAYLOAD_TOO_LARGE"
            ),
            Limit::StreamQueryLast => format!(
                "stream.query 'last' over {MAX_STREAM_QUERY_LAST}: PAYLOAD_TOO_LARGE"
            ),
            Limit::RebindRate => format!(
                "More than {MAX_REBINDS_PER_MINUTE} rebinds a minute: RATE_LIMITED"
            ),
            Limit::PairingAttempts => format!(
                "More than {MAX_PAIRING_ATTEMPTS_PER_MINUTE} pairing codes a minute (gateway-wide): RATE_LIMITED"
            ),
            Limit::PendingPairings => format!(
                "More than {MAX_PENDING_PAIRINGS} pending pairing requests: RATE_LIMITED, closed"
            ),
            Limit::PushBudget => format!(
                "A push budget ({MAX_PUSHES_PER_SECOND} surfaced or injected events a second, or the inject loop guard): RATE_LIMITED"
            ),
            Limit::CallQueue => format!(
                "A tool at its concurrency limit with {MAX_QUEUED_CALLS} calls queued: the call fails RATE_LIMITED"
            ),
            Limit::ControlLag => format!(
                "A control client more than {} events behind: told to resync",
                crate::limits::EVENT_BUFFER
            ),
            Limit::EmittersPerSession => format!(
                "{} emitters in one session: another is refused RATE_LIMITED",
                crate::limits::MAX_EMITTERS_PER_SESSION
            ),
            Limit::SlowConsumer => format!(
                "A peer that stops reading: more than {} MiB or {MAX_OUTBOUND_QUEUED_MESSAGES} messages queued for it, or a write not taken within {} s ({} s for control clients): disconnected",
                MAX_OUTBOUND_QUEUED_BYTES / MB,
                PEER_WRITE_TIMEOUT.as_secs(),
                CONTROL_WRITE_TIMEOUT.as_secs()
            ),
        }
    }

    /// Limits that refuse or close a connection without sending an `error` (which would
    /// be recorded as a failure itself): recorded as a failure of their own.
    pub fn is_silent(self) -> bool {
        matches!(
            self,
            Limit::FrameCap
                | Limit::PreAuthBytes
                | Limit::ProviderConnections
                | Limit::HostConnections
                | Limit::ControlConnections
                | Limit::ControlLag
                | Limit::SlowConsumer
        )
    }
}

#[cfg(test)]
mod tests {
    use super::Limit;

    #[test]
    fn all_lists_every_limit_once_in_index_order() {
        for (i, l) in Limit::ALL.iter().enumerate() {
            assert_eq!(l.index(), i, "{l:?}");
        }
        let mut ids: Vec<_> = Limit::ALL.iter().map(|l| l.id()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), Limit::ALL.len());
    }
}

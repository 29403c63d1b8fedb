//! What each control method does: a thin mapping onto the engine's API. The connection
//! task owns the socket and the event stream; this file only turns a call into a result.

use super::follow::Follows;
use crate::gateway::Gateway;
use crate::pairing::api::PairingError;
use crate::settings::SettingsError;
use serde::Serialize;
use tap_protocol::control::{
    ControlCall, ControlError, Empty, PairingConfigureResult, PairingDenyAllResult, PairingList,
    Snapshot,
};
use tap_protocol::logs::LogsRecent;
use tap_protocol::{ErrorCode, Json};

/// Runs one call for an authenticated client. `seq` is the last event seq sent on this
/// connection (for `snapshot`); `follows` is what it follows (for the `*.follow` methods).
pub(super) fn call(
    gw: &Gateway,
    call: ControlCall,
    seq: u64,
    follows: &mut Follows,
) -> Result<Json, ControlError> {
    match call {
        ControlCall::Auth(_) => Err(ControlError::new(
            ErrorCode::Unauthorized,
            "Already authenticated",
        )),
        ControlCall::Snapshot(Empty {}) => json(snapshot(gw, seq)),
        ControlCall::Status(Empty {}) => json(gw.status()),
        ControlCall::PairingList(Empty {}) => json(PairingList {
            pairings: gw.pairing_list(),
        }),
        ControlCall::PairingDeny(p) => {
            gw.pairing_deny(&p.id).map_err(refused)?;
            json(Empty {})
        }
        ControlCall::PairingDenyAll(Empty {}) => json(PairingDenyAllResult {
            denied: gw.pairing_deny_all(),
        }),
        ControlCall::PairingRevoke(p) => {
            gw.pairing_revoke(&p.id).map_err(refused)?;
            json(Empty {})
        }
        ControlCall::PairingConfigure(p) => {
            let pairing = gw
                .pairing_configure(&p.id, p.session, p.remember)
                .map_err(refused)?;
            json(PairingConfigureResult { pairing })
        }
        ControlCall::UiLogin(Empty {}) => json(gw.ui_login()),
        ControlCall::StreamsHistory(p) => {
            let history = gw
                .streams_history(&p.session_id, p.stream.as_deref(), p.last)
                .map_err(|(code, message)| ControlError::new(code, message))?;
            json(history)
        }
        ControlCall::ProviderDisconnect(p) => {
            if !gw.provider_disconnect(&p.id) {
                return Err(ControlError::new(
                    ErrorCode::NotFound,
                    format!("No provider '{}' is connected", p.id),
                ));
            }
            json(Empty {})
        }
        ControlCall::Diagnostics(Empty {}) => json(gw.diagnostics()),
        ControlCall::DiagnosticsFollow(Empty {}) => {
            follows.diagnostics = true;
            json(gw.diagnostics())
        }
        ControlCall::LogsRecent(p) => json(match gw.core().config.logs.as_ref() {
            Some(buffer) => LogsRecent {
                records: buffer.recent(p.limit, p.level),
                capacity: buffer.capacity(),
                enabled: true,
            },
            None => LogsRecent {
                records: Vec::new(),
                capacity: 0,
                enabled: false,
            },
        }),
        ControlCall::LogsFollow(p) => json(follows.logs(gw.core(), p)),
        ControlCall::StreamsFollow(p) => json(follows.streams(gw.core(), p.session_id)?),
        ControlCall::Unfollow(p) => {
            follows.stop(p.topic);
            json(Empty {})
        }
        ControlCall::SettingsGet(Empty {}) => json(gw.settings().map_err(settings_error)?),
        ControlCall::SettingsSet(patch) => json(gw.set_settings(&patch).map_err(settings_error)?),
    }
}

/// A value out of range is the client's mistake (`INVALID_JSON`, like a malformed
/// param); a file that cannot be read or written is the gateway's (`INTERNAL`).
fn settings_error(e: SettingsError) -> ControlError {
    let code = match e {
        SettingsError::Invalid(_) => ErrorCode::InvalidJson,
        _ => ErrorCode::Internal,
    };
    ControlError::new(code, e.to_string())
}

/// Everything the panel shows.
pub(super) fn snapshot(gw: &Gateway, seq: u64) -> Snapshot {
    Snapshot {
        status: gw.status(),
        pairings: gw.pairing_list(),
        files: gw.file_locations(),
        seq,
    }
}

fn refused(e: PairingError) -> ControlError {
    ControlError::new(e.code(), e.to_string())
}

fn json(value: impl Serialize) -> Result<Json, ControlError> {
    serde_json::to_value(value).map_err(|e| ControlError::new(ErrorCode::Internal, e.to_string()))
}

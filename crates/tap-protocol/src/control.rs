//! The control plane (`ws://127.0.0.1:9400/control`), spoken by the panel, the tray app
//! and `tap pairing`. `docs/control-protocol.md` is the prose version of this module.
//!
//! Three frames, in the style of a JSON-RPC-like request/response protocol with events:
//!
//! - client → gateway: [`ClientFrame::Request`] `{"type":"request","id","method","params"}`;
//! - gateway → client: [`ServerFrame::Response`] `{"type":"response","id","result"}` or
//!   `{"type":"response","id","error":{"code","message"}}`, and [`ServerFrame::Event`]
//!   `{"type":"event","seq","event":{"kind",…}}`.
//!
//! The first request must be `auth` with the control token; its result is a [`Snapshot`].
//! Events are numbered per connection (1, 2, 3, …) so a client can tell it missed one;
//! [`Snapshot::seq`] is the number of the last event sent before the snapshot was taken.
//!
//! These types are the one definition of the protocol: with the `ts` feature they derive
//! `ts_rs::TS`, and the panel's TypeScript (`ui/src/generated/`) is generated from them
//! (`tests/generated_typescript.rs` fails when the committed files are stale).

use crate::host::GatewayStatus;
use crate::logs::{LogRecord, LogsParams};
use crate::pairing::PairingEntry;
use crate::provider::StreamEntry;
use crate::settings::{Settings, SettingsPatch};
use crate::{ErrorCode, Json};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// The version of this protocol; bumped on an incompatible change.
pub const CONTROL_PROTOCOL_VERSION: u32 = 1;

/// How long a `ui.login` code may be exchanged for the control token (`POST /api/login`).
pub const UI_LOGIN_CODE_TTL: std::time::Duration = std::time::Duration::from_secs(120);

/// Declares every method once: its wire name, its params type and its result type. From
/// this one list come [`ControlCall`], [`ControlCall::METHODS`] and (feature `ts`) the
/// TypeScript `ControlMethods` map the panel's typed `rpc()` is built on.
macro_rules! control_methods {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident = $name:literal ($params:ty) -> $result:ty;
    )*) => {
        /// A method and its params, as one request carries them
        /// (`{"method": "…", "params": {…}}`).
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[cfg_attr(feature = "ts", derive(ts_rs::TS))]
        #[serde(tag = "method", content = "params")]
        pub enum ControlCall {
            $(
                $(#[doc = $doc])*
                #[serde(rename = $name)]
                $variant($params),
            )*
        }

        impl ControlCall {
            /// Every method name this gateway knows.
            pub const METHODS: &'static [&'static str] = &[$($name),*];

            /// The wire name of this call's method.
            pub fn method(&self) -> &'static str {
                match self {
                    $(Self::$variant(_) => $name,)*
                }
            }
        }

        /// The TypeScript `ControlMethods` type (each method's params and result type) and
        /// the types it imports. `visitor` is shown every params and result type, so a
        /// generator can export them too.
        #[cfg(feature = "ts")]
        pub fn typescript_method_map(
            cfg: &ts_rs::Config,
            visitor: &mut impl ts_rs::TypeVisitor,
        ) -> (String, Vec<ts_rs::Dependency>) {
            use ts_rs::TS;
            let mut body = String::new();
            let mut deps = Vec::new();
            $(
                body.push_str(&format!(
                    "  {:?}: {{ params: {}; result: {} }};\n",
                    $name,
                    <$params as TS>::name(cfg),
                    <$result as TS>::name(cfg),
                ));
                visitor.visit::<$params>();
                visitor.visit::<$result>();
                deps.extend(ts_rs::Dependency::from_ty::<$params>(cfg));
                deps.extend(ts_rs::Dependency::from_ty::<$result>(cfg));
            )*
            (format!("export type ControlMethods = {{\n{body}}};\n"), deps)
        }
    };
}

control_methods! {
    /// Authenticate with the control token. Must be the first request; the result is a
    /// snapshot, and events start flowing after it.
    Auth = "auth" (AuthParams) -> Snapshot;
    /// Everything the panel shows, with the seq of the last event sent before it.
    Snapshot = "snapshot" (Empty) -> Snapshot;
    /// The gateway status (sessions, providers), as `tap status --json` prints it.
    Status = "status" (Empty) -> GatewayStatus;
    /// Pending pairing requests (newest first), then paired providers (newest first).
    PairingList = "pairing.list" (Empty) -> PairingList;
    /// Deny a pending request: its provider gets `AUTH_FAILED` and is disconnected.
    PairingDeny = "pairing.deny" (PairingId) -> Empty;
    /// Deny every pending request.
    PairingDenyAll = "pairing.denyAll" (Empty) -> PairingDenyAllResult;
    /// Revoke a paired provider: its connection closes and its token stops working.
    PairingRevoke = "pairing.revoke" (PairingId) -> Empty;
    /// Change a pairing's session binding or whether it is remembered across restarts.
    PairingConfigure = "pairing.configure" (PairingConfigure) -> PairingConfigureResult;
    /// A one-time login link for the panel this gateway serves: `url` carries a single-use
    /// code (valid 120 s) in its fragment, which the page exchanges for the control token
    /// with `POST /api/login`.
    UiLogin = "ui.login" (Empty) -> UiLoginResult;
    /// A session's stored stream events, newest first.
    StreamsHistory = "streams.history" (StreamsHistoryParams) -> StreamsHistory;
    /// Close one provider's connection (its pending calls fail with `DISCONNECTED`).
    ProviderDisconnect = "provider.disconnect" (ProviderId) -> Empty;
    /// Errors sent to providers by code, limits hit, connection states, recent failures.
    Diagnostics = "diagnostics" (Empty) -> crate::diagnostics::Diagnostics;
    /// `diagnostics`, and from now on `diagnostics.changed` events on this connection.
    DiagnosticsFollow = "diagnostics.follow" (Empty) -> crate::diagnostics::Diagnostics;
    /// The newest records of the gateway's log, oldest first.
    LogsRecent = "logs.recent" (LogsParams) -> crate::logs::LogsRecent;
    /// `logs.recent`, and from now on a `log` event per new record on this connection.
    LogsFollow = "logs.follow" (LogsParams) -> crate::logs::LogsRecent;
    /// A session's stored stream events (as `streams.history`), and from now on a
    /// `stream.entry` event per event stored in that session. Replaces an earlier
    /// `streams.follow` of this connection.
    StreamsFollow = "streams.follow" (StreamsFollowParams) -> StreamsHistory;
    /// Stops the events a `*.follow` method started on this connection.
    Unfollow = "unfollow" (UnfollowParams) -> Empty;
    /// The user's settings (`$TAP_HOME/settings.json`).
    SettingsGet = "settings.get" (Empty) -> crate::settings::SettingsResult;
    /// Changes and saves settings; unknown keys are refused (`INVALID_JSON`).
    SettingsSet = "settings.set" (SettingsPatch) -> crate::settings::SettingsResult;
}

/// A frame a control client sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "type")]
pub enum ClientFrame {
    /// A method call; answered by exactly one [`ServerFrame::Response`] with the same id.
    #[serde(rename = "request")]
    Request(ControlRequest),
}

/// `{"id": "…", "method": "…", "params": {…}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ControlRequest {
    /// Chosen by the client; echoed in the response.
    pub id: String,
    /// The method and its params.
    #[serde(flatten)]
    pub call: ControlCall,
}

/// A frame the gateway sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "type")]
pub enum ServerFrame {
    /// The answer to one request.
    #[serde(rename = "response")]
    Response(ControlResponse),
    /// Something changed.
    #[serde(rename = "event")]
    Event(EventFrame),
}

/// `{"id": "…", "result": {…}}` or `{"id": "…", "error": {"code", "message"}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ControlResponse {
    /// The request's id; `null` only when the frame was too broken to carry one.
    pub id: Option<String>,
    /// The result or the error.
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// How a request ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Success; the shape is the method's result type (see [`ControlCall`]).
    Result(Json),
    /// Failure.
    Error(ControlError),
}

/// Why a request failed: a machine-readable code and a sentence for the user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ControlError {
    /// `AUTH_FAILED`, `INVALID_JSON`, `UNKNOWN_TYPE`, `NOT_FOUND`, `INVALID_SESSION`,
    /// `UNAUTHORIZED`, `RATE_LIMITED`, `INTERNAL`.
    pub code: ErrorCode,
    /// What went wrong.
    pub message: String,
}

impl ControlError {
    /// An error with `code` and `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

impl fmt::Display for ControlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

/// `{"seq": N, "event": {…}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct EventFrame {
    /// 1 for the first event on this connection, then +1 per event. A jump means events
    /// were lost: fetch a snapshot.
    pub seq: u64,
    /// What changed.
    pub event: ControlEvent,
}

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

/// Params of `streams.follow`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct StreamsFollowParams {
    /// The session whose streams to follow.
    pub session_id: String,
}

/// Params of methods that take none, and the result of methods that return nothing.
/// Sent as `{}` (or omitted, for params).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Empty {}

/// Params of `auth`.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AuthParams {
    /// The control token (`$TAP_HOME/control-token`, `ctk-…`).
    pub token: String,
}

/// Never prints the token, so a request can be logged safely.
impl fmt::Debug for AuthParams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthParams")
            .field("token", &"<redacted>")
            .finish()
    }
}

/// Params naming one pairing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PairingId {
    /// The pairing's id (`PairingEntry.id`).
    pub id: String,
}

/// Params of `pairing.configure`; absent fields are left as they are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(optional_fields))]
pub struct PairingConfigure {
    /// The pairing's id.
    pub id: String,
    /// The one session the provider may bind to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Keep the provider's token (its hash) across gateway restarts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remember: Option<bool>,
}

/// Result of `auth` and `snapshot`: everything the panel shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Snapshot {
    /// Sessions and providers.
    pub status: GatewayStatus,
    /// Pending requests, then paired providers.
    pub pairings: Vec<PairingEntry>,
    /// Where the gateway keeps its token and state files.
    pub files: FileLocations,
    /// The seq of the last event this connection sent before the snapshot (0: none yet).
    /// Events with a higher seq are newer than the snapshot.
    pub seq: u64,
}

/// Where the gateway keeps its files. Paths are not secrets; the files' contents are
/// (each is mode 0600).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct FileLocations {
    /// `TAP_HOME`.
    pub data_dir: String,
    /// The gateway token providers authenticate with.
    pub provider_token: String,
    /// The same token where the spec's providers look (`COPILOT_HOME`), when written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copilot_provider_token: Option<String>,
    /// The session-host token.
    pub host_token: String,
    /// The control-plane token; absent when the embedding app keeps it elsewhere (the
    /// desktop app: the OS keyring).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_token: Option<String>,
    /// `gateway.json`: address, pid and start time.
    pub state: String,
    /// `settings.json`.
    pub settings: String,
    /// `paired-providers.json`: hashes of remembered pairings' tokens.
    pub paired_providers: String,
}

/// Result of `pairing.list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PairingList {
    /// Pending requests (newest first), then paired providers (newest first).
    pub pairings: Vec<PairingEntry>,
}

/// Result of `pairing.denyAll`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PairingDenyAllResult {
    /// How many pending requests were denied.
    pub denied: usize,
}

/// Result of `pairing.configure`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PairingConfigureResult {
    /// The entry after the change.
    pub pairing: PairingEntry,
}

/// Result of `ui.login`.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct UiLoginResult {
    /// `http://127.0.0.1:PORT/#login=CODE`: open it in a browser. The code is in the
    /// fragment, which browsers never send to a server; it works once.
    pub url: String,
    /// RFC 3339 time after which the code no longer works.
    pub expires_at: String,
}

/// Never prints the URL (it carries a login code), so a result can be logged safely.
impl fmt::Debug for UiLoginResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UiLoginResult")
            .field("url", &"<redacted>")
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

/// Params of `streams.history`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct StreamsHistoryParams {
    /// The session.
    pub session_id: String,
    /// `stream` (that stream of every provider) or `stream@provider`; all when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
    /// Newest N events per stream (every kept event when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<usize>,
}

/// Result of `streams.history`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct StreamsHistory {
    /// The session.
    pub session_id: String,
    /// `stream@provider` → its events, newest first.
    pub streams: BTreeMap<String, Vec<StreamEntry>>,
}

/// Params naming one provider connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ProviderId {
    /// The provider's id (`ProviderStatus.id` in `status`).
    pub id: String,
}

/// Why a client frame could not become a [`ControlRequest`]; answered with an error
/// response carrying [`RequestError::id`] when the frame had one.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestError {
    /// The request's id, if it could be read.
    pub id: Option<String>,
    /// The error to answer with.
    pub error: ControlError,
}

impl ControlRequest {
    /// Decodes one client frame.
    ///
    /// Lenient where that helps old and new clients alike: unknown fields are ignored, and
    /// `params` may be omitted (or `null`) for methods that take none. Strict where a
    /// mistake would otherwise go unnoticed: a frame that is not a request, an unknown
    /// method (`UNKNOWN_TYPE`) and bad params (`INVALID_JSON`) are errors.
    pub fn decode(frame: &[u8]) -> Result<Self, RequestError> {
        let fail = |id: Option<String>, code, message: String| RequestError {
            id,
            error: ControlError::new(code, message),
        };
        let value: Json = serde_json::from_slice(frame).map_err(|e| {
            fail(
                None,
                ErrorCode::InvalidJson,
                format!("Malformed frame: {e}"),
            )
        })?;
        let Json::Object(mut obj) = value else {
            return Err(fail(
                None,
                ErrorCode::InvalidJson,
                "A frame must be a JSON object".into(),
            ));
        };
        let id = match obj.remove("id") {
            Some(Json::String(id)) => Some(id),
            _ => None,
        };
        match obj.get("type").and_then(Json::as_str) {
            Some("request") => {}
            Some(other) => {
                return Err(fail(
                    id,
                    ErrorCode::UnknownType,
                    format!("Unknown frame type '{other}'; clients send only 'request'"),
                ))
            }
            None => {
                return Err(fail(
                    id,
                    ErrorCode::InvalidJson,
                    "A frame needs a string 'type'".into(),
                ))
            }
        }
        let Some(id) = id else {
            return Err(fail(
                None,
                ErrorCode::InvalidJson,
                "A request needs a string 'id'".into(),
            ));
        };
        let method = match obj.remove("method") {
            Some(Json::String(m)) => m,
            _ => {
                return Err(fail(
                    Some(id),
                    ErrorCode::InvalidJson,
                    "A request needs a string 'method'".into(),
                ))
            }
        };
        if !ControlCall::METHODS.contains(&method.as_str()) {
            return Err(fail(
                Some(id),
                ErrorCode::UnknownType,
                format!("Unknown method '{method}'"),
            ));
        }
        let params = match obj.remove("params") {
            None | Some(Json::Null) => Json::Object(Default::default()),
            Some(p) => p,
        };
        let tagged = serde_json::json!({ "method": method, "params": params });
        match serde_json::from_value::<ControlCall>(tagged) {
            Ok(call) => Ok(Self { id, call }),
            Err(e) => Err(fail(
                Some(id),
                ErrorCode::InvalidJson,
                format!("Invalid params for '{method}': {e}"),
            )),
        }
    }
}

impl ServerFrame {
    /// A success response.
    pub fn result(id: impl Into<String>, result: impl Serialize) -> Self {
        Self::Response(ControlResponse {
            id: Some(id.into()),
            outcome: Outcome::Result(serde_json::to_value(result).expect("result serializes")),
        })
    }

    /// An error response.
    pub fn error(id: Option<String>, error: ControlError) -> Self {
        Self::Response(ControlResponse {
            id,
            outcome: Outcome::Error(error),
        })
    }

    /// This frame as JSON text.
    pub fn to_text(&self) -> String {
        serde_json::to_string(self).expect("server frames serialize")
    }
}

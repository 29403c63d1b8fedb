//! What every conformance module uses: the test kit (`tap-testkit`: the gateway, raw
//! providers, session hosts through `tap-client`, the internal transport, pairing as the
//! user does it) and the protocol types the rules talk about.

pub use serde_json::{json, Value};
pub use std::sync::Arc;
pub use std::time::Duration;
pub use tap_client::HostClient;
pub use tap_protocol::host::{
    BusyState, HostEvent, HostToolResult, PrecheckDecision, SessionRegister, SessionTools,
    ToolDecision,
};
pub use tap_protocol::provider::{PushLevel, SessionInfo};
pub use tap_testkit::*;

//! Client side of the Tap session-host protocol (`ws://127.0.0.1:9400/session`) and of
//! the control plane (`ws://127.0.0.1:9400/control`), and discovery of the running
//! gateway through `TAP_HOME`. Used by the `tap` CLI, the tests
//! and the benchmark; any Rust session host can use it too.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod control;
mod discovery;
mod host;
mod liveness;
mod mux;
mod outbox;

pub use control::{ControlClient, ControlClientError};
pub use discovery::{default_copilot_home, default_home, Discovery, DiscoveryError};
pub use host::{ClientError, HostClient};
pub use liveness::{is_tap_gateway, running_gateway};

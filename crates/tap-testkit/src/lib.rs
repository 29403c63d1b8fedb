//! The one test kit of the workspace: every integration test of the gateway and of the
//! `tap` command, and the benchmark's provider setup, use these pieces instead of their own.
//!
//! - [`TestGateway`]: a real gateway in this process on `127.0.0.1:0` with a temporary
//!   TAP_HOME, its tokens, and raw providers / session hosts / control clients on it.
//! - [`Provider`]: the raw provider socket, JSON text frames as a provider in any language
//!   would send them; [`wire`] is its fallible, allocation-light layer (the benchmark's).
//! - Session hosts through `tap-client`'s `HostClient` ([`host`] helpers), the control plane
//!   as raw frames ([`Control`]), the in-process provider transport ([`Internal`]).
//! - [`Proc`]: a child process killed on drop whose log is printed when a test fails.
//! - [`eventually`]: poll a condition with a deadline; nothing here sleeps for readiness.
//!
//! Everything is re-exported at the root, so a test writes `use tap_testkit::*;`.

pub mod control;
pub mod eventually;
pub mod gateway;
pub mod host;
pub mod local;
pub mod mcp;
pub mod process;
pub mod provider;
pub mod wire;

pub use control::*;
pub use eventually::*;
pub use gateway::*;
pub use host::*;
pub use local::*;
pub use mcp::*;
pub use process::*;
pub use provider::*;

use std::time::Duration;

/// How long a test waits for something that should happen promptly. Generous, so a
/// loaded CI machine does not fail tests; a hang still fails.
pub const PATIENCE: Duration = Duration::from_secs(10);

/// Far enough away that reaching it would fail the test by [`PATIENCE`] first.
pub const FAR: Duration = Duration::from_secs(60);

//! Project providers (spec: "Project providers"): the `providers` of the `tap.config.json`
//! nearest to a session's `cwd`, spawned by the gateway for that session.
//!
//! - Each process gets its own token in `TAP_PROVIDER_TOKEN` (`ptk-` + 256 random bits)
//!   and the gateway's address in `TAP_GATEWAY_URL`. The token authenticates with trust
//!   "project", scoped to that session: `sessions` lists only it, `hello` may bind only to
//!   it (a `hello` without `session` is stamped with it). The token lives while both its
//!   process and its session do: it is revoked when the process exits (a restart gets a
//!   fresh one) and when the session starts ending.
//! - Output goes to the log (target `tap::provider`), line by line, bounded.
//! - A process that exits with a failure is restarted with exponential backoff; one that
//!   keeps failing quickly is given up and reported (`session.warning`), as are an
//!   unusable config and a command that cannot start.
//! - At the session's teardown (after `shutdown.pending` and its deadline) every process
//!   group gets SIGTERM, and SIGKILL after a grace.

pub(crate) mod config;
pub(crate) mod start;
mod supervisor;
pub(crate) mod warn;

pub(crate) use warn::hello_refused;

use std::time::Duration;
use tap_protocol::limits;

/// How crashed project providers are restarted (`GatewayConfig::project_restart`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestartPolicy {
    /// Delay before the first restart; doubled after each quick failure.
    pub backoff: Duration,
    /// The longest delay.
    pub backoff_max: Duration,
    /// A run at least this long counts as stable: backoff and failure count start over.
    pub stable_run: Duration,
    /// Quick failures in a row after which the provider is given up and reported.
    pub max_quick_failures: u32,
}

impl Default for RestartPolicy {
    fn default() -> Self {
        Self {
            backoff: limits::PROJECT_RESTART_BACKOFF,
            backoff_max: limits::PROJECT_RESTART_BACKOFF_MAX,
            stable_run: limits::PROJECT_STABLE_RUN,
            max_quick_failures: limits::PROJECT_MAX_QUICK_FAILURES,
        }
    }
}

/// A token issued to one run of one project provider of a session.
pub(crate) struct ProjectToken {
    pub token: String,
    /// The provider's `name` in the config (for logs).
    pub provider: String,
}

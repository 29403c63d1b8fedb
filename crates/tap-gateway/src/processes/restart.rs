//! How a crashed child process is restarted: backoff, and when to give up.

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

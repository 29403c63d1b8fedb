//! The soak's MCP server: `tap-bench mcp-echo-server --delay-ms 100` (this binary again),
//! configured in the soaked gateway's `$TAP_HOME/mcp.json`, so the gateway runs it as a
//! stdio provider (issue 36). Its tool is called in turn with the providers' tools, and the
//! chaos SIGKILLs its process (the pid `mcpServers.list` gives) while calls to it are in
//! flight: each of those must end with one retryable `DISCONNECTED`, and the gateway's
//! supervisor must start the server again.

use crate::mcp_echo::DELAY_OPTION;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::json;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tap_client::ControlClient;
use tap_protocol::control::{ControlCall, Empty};
use tap_protocol::limits::{PROJECT_MAX_QUICK_FAILURES, PROJECT_STABLE_RUN};
use tap_protocol::mcp_servers::{McpServerInfo, McpServerState, McpServersList};

/// The server's name in `mcp.json`, and its tool as sessions see it (`<name>__echo`).
pub const SERVER: &str = "soakmcp";
pub const TOOL: &str = "soakmcp__echo";
/// How long the server takes to answer a call: long enough that calls overlap (about one
/// in flight in a debug run), short enough that it does not hold many of the 64 slots.
const DELAY_MS: &str = "100";
/// The shortest time between two kills: the server is started again 0.5 s after the first
/// kill in a row, doubling with each (the gateway's backoff), so this is a few kills a
/// second's worth of calls apart.
pub const KILL_EVERY: Duration = Duration::from_millis(1_500);
/// Up to this much more, at random, so the kill falls at a different point of the calls.
pub const KILL_JITTER_MS: u64 = 1_500;
/// How often the chaos looks again for a call in flight once a kill is due.
pub const KILL_POLL: Duration = Duration::from_millis(20);

/// Writes `$TAP_HOME/mcp.json` with the server, before the gateway starts.
pub fn configure(home: &Path, exe: &Path) -> Result<(), String> {
    let entry = json!({"command": exe, "args": [crate::s9::ECHO_MODE, DELAY_OPTION, DELAY_MS]});
    std::fs::create_dir_all(home).map_err(|e| format!("{}: {e}", home.display()))?;
    let path = home.join("mcp.json");
    std::fs::write(&path, json!({"mcpServers": {SERVER: entry}}).to_string())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// The server as the soak sees it: through a control connection of its own, and the
/// host's count of calls to it in flight.
pub struct McpServer {
    control: ControlClient,
    /// Calls to [`TOOL`] without a result yet (kept by the host).
    pub in_flight: Arc<AtomicUsize>,
    /// The kills that count toward parking it, as the gateway counts them. A std mutex:
    /// only the chaos task takes it, never across an `.await`.
    quick: Mutex<Quick>,
}

/// The gateway parks a server whose runs end `PROJECT_MAX_QUICK_FAILURES` times in a row
/// within `PROJECT_STABLE_RUN` of their start. The soak kills it at most one time fewer in
/// a row, then lets it run that long: it must always be started again, never parked.
#[derive(Default)]
struct Quick {
    /// Quick kills in a row.
    in_a_row: u32,
    /// When the soak first saw the current run ready (its start is a little earlier, so
    /// a run seen ready for `PROJECT_STABLE_RUN` has lasted at least that long).
    ready_seen: Option<Instant>,
}

impl Quick {
    /// What `in_a_row` would be after a kill now, if one may happen.
    fn next(&self) -> Option<u32> {
        let ready = self.ready_seen?;
        let next = match ready.elapsed() >= PROJECT_STABLE_RUN {
            true => 1,
            false => self.in_a_row + 1,
        };
        (next < PROJECT_MAX_QUICK_FAILURES).then_some(next)
    }
}

impl McpServer {
    pub async fn connect(address: &str, home: &Path) -> Result<Self, String> {
        let token = crate::rss::read_token(&home.join("control-token"))?;
        let (control, _) = ControlClient::connect(&format!("{address}/control"), &token)
            .await
            .map_err(|e| format!("control connect: {e}"))?;
        Ok(Self {
            control,
            in_flight: Arc::default(),
            quick: Mutex::default(),
        })
    }

    async fn entry(&self) -> Result<McpServerInfo, String> {
        let list: McpServersList = self
            .control
            .call(ControlCall::McpServersList(Empty {}))
            .await
            .map_err(|e| format!("mcpServers.list: {e}"))?;
        list.servers
            .into_iter()
            .find(|s| s.name == SERVER)
            .ok_or_else(|| format!("mcpServers.list has no '{SERVER}'"))
    }

    /// SIGKILLs the server's process if it is ready, a call to it is in flight and the kill
    /// cannot get it parked; whether it did.
    pub async fn kill_mid_call(&self) -> bool {
        let Ok(entry) = self.entry().await else {
            return false;
        };
        let (McpServerState::Ready, Some(pid)) = (entry.state, entry.pid) else {
            return false;
        };
        let mut quick = self.quick.lock().unwrap();
        quick.ready_seen.get_or_insert_with(Instant::now);
        let Some(next) = quick.next() else {
            return false;
        };
        if self.in_flight.load(Ordering::Relaxed) == 0 {
            return false;
        }
        if kill(Pid::from_raw(pid as i32), Signal::SIGKILL).is_err() {
            return false;
        }
        *quick = Quick {
            in_a_row: next,
            ready_seen: None,
        };
        true
    }

    /// Waits until the server is ready again; its entry then.
    pub async fn ready(&self, within: Duration) -> Result<McpServerInfo, String> {
        let deadline = Instant::now() + within;
        loop {
            let entry = self.entry().await?;
            if entry.state == McpServerState::Ready {
                return Ok(entry);
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "MCP server '{SERVER}' not ready after {} s: {:?} ({})",
                    within.as_secs(),
                    entry.state,
                    entry.last_error.unwrap_or_default()
                ));
            }
            tokio::time::sleep(KILL_POLL).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kills_stop_short_of_parking_until_a_run_counts_as_stable() {
        let mut quick = Quick::default();
        assert_eq!(quick.next(), None, "not seen ready yet");
        quick.ready_seen = Some(Instant::now());
        for n in 1..PROJECT_MAX_QUICK_FAILURES {
            assert_eq!(quick.next(), Some(n));
            quick.in_a_row = n;
        }
        assert_eq!(quick.next(), None, "one more would park it");
        quick.ready_seen = Instant::now().checked_sub(PROJECT_STABLE_RUN);
        assert_eq!(quick.next(), Some(1), "a stable run starts the count again");
    }
}

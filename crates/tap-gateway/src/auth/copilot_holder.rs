//! Who holds the Copilot token file (`<COPILOT_HOME>/extensions/tap/.provider-token`).
//!
//! Every gateway of the user shares that one file, so one gateway holds it at a time
//! ([`super::files::GatewayFiles::claim_copilot_token`]). A gateway that stops cleanly
//! removes it; one that is killed (SIGKILL, a crash, a power cut) leaves its token there,
//! and every spec provider that reads the file would fail with `AUTH_FAILED` until the
//! user deleted it. So the holder records itself beside the file
//! (`.provider-token.holder`: pid, process start time, address), and the next gateway takes
//! the file over once that process no longer runs.

use super::files::write_private;
use crate::error::GatewayError;
use crate::processes::alive;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The record's file name is the token file's with this appended.
const SUFFIX: &str = ".holder";

/// The gateway that wrote the token file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// Its process id.
    pub pid: u32,
    /// Its start time in clock ticks after boot: tells the holder from a process that got
    /// its pid later.
    pub start: u64,
    /// Where it listened (`127.0.0.1:19555`), for the log and `tap status`.
    pub address: String,
}

/// Who holds the token file at `token`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Holding {
    /// No token file.
    Free,
    /// The recorded holder still runs.
    Live(Holder),
    /// The recorded holder no longer runs: the file is stale.
    Gone(Holder),
    /// A token file without a record (a gateway before records, another tool): treated as
    /// held, since nothing says its writer is gone.
    Unknown,
}

/// The holder record's path for the token file `token`.
pub fn record_path(token: &Path) -> PathBuf {
    let mut name = token.file_name().unwrap_or_default().to_os_string();
    name.push(SUFFIX);
    token.with_file_name(name)
}

/// Who holds `token` now.
pub fn holding(token: &Path) -> Holding {
    if !token.exists() {
        return Holding::Free;
    }
    let record = std::fs::read_to_string(record_path(token))
        .ok()
        .and_then(|text| serde_json::from_str::<Holder>(&text).ok());
    match record {
        None => Holding::Unknown,
        Some(h) if alive::is_running(h.pid, h.start) => Holding::Live(h),
        Some(h) => Holding::Gone(h),
    }
}

/// Records this process, listening on `address`, as the holder of `token`.
pub(crate) fn record(token: &Path, address: std::net::SocketAddr) -> Result<(), GatewayError> {
    let me = std::process::id();
    let holder = Holder {
        pid: me,
        start: alive::start_time(me).unwrap_or_default(),
        address: address.to_string(),
    };
    let text = serde_json::to_string(&holder).expect("a holder serializes");
    write_private(&record_path(token), &format!("{text}\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_holder_that_no_longer_runs_leaves_a_stale_file() {
        let dir = tempfile::tempdir().unwrap();
        let token = dir.path().join(".provider-token");
        assert_eq!(holding(&token), Holding::Free);
        std::fs::write(&token, "t").unwrap();
        assert_eq!(holding(&token), Holding::Unknown, "no record: held");
        record(&token, "127.0.0.1:19555".parse().unwrap()).unwrap();
        assert!(matches!(holding(&token), Holding::Live(h) if h.pid == std::process::id()));
        // The same pid with another start time is another process: the holder is gone.
        let mut h: Holder =
            serde_json::from_str(&std::fs::read_to_string(record_path(&token)).unwrap()).unwrap();
        h.start += 1;
        std::fs::write(record_path(&token), serde_json::to_string(&h).unwrap()).unwrap();
        assert_eq!(holding(&token), Holding::Gone(h));
    }
}

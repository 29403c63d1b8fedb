//! A session's project config as last applied by its follower
//! (`sessions/project_follow.rs`): kept on the session, read by the MCP hub.

use serde_json::Value;
use std::path::PathBuf;

/// The config in force for a session, as the MCP hub applies it: a new `revision` each
/// time the follower applies a reading (the file removed is a reading with `json` null).
#[derive(Debug)]
pub(crate) struct Snapshot {
    pub revision: u64,
    pub path: Option<PathBuf>,
    pub json: Value,
}

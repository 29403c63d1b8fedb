//! Child processes the gateway starts: provider processes (`--spawn`, project providers),
//! command emitters and, next, MCP servers. One way to start a command in its own process
//! group with a scrubbed environment, forward its output line by line, stop the group
//! (SIGTERM, then SIGKILL after a grace), restart it with backoff, and clean up the groups a
//! gateway that died left behind; read how much memory one holds (`memory`). Nothing here
//! knows the gateway's state: callers hand in what a process needs (token, address,
//! cancellation).

pub(crate) mod alive;
pub(crate) mod command;
pub(crate) mod group;
pub(crate) mod memory;
pub(crate) mod orphans;
pub(crate) mod restart;
pub(crate) mod spawn;

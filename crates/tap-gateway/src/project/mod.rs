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
//! - The file is followed while the session lives (`sessions/project_follow.rs`): an edit starts added
//!   providers, restarts changed ones and stops removed ones.
//! - At the session's teardown (after `shutdown.pending` and its deadline) every process
//!   group gets SIGTERM, and SIGKILL after a grace.

pub(crate) mod config;
pub(crate) mod start;
pub(crate) mod supervisor;
pub(crate) mod warn;

pub(crate) use crate::state::session::ProjectToken;
pub(crate) use warn::hello_refused;

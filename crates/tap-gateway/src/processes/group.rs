//! The one way the gateway starts a child: in its own process group, so stopping it stops
//! whatever it started (a shell line like `npm start` runs the real program as a
//! grandchild), with stdin closed, stdout and stderr piped for its caller to read, and
//! killed if its handle is dropped. Provider processes (`spawn.rs`), command emitters
//! (`command.rs`) and their callers stop it through the same group functions.

use std::process::Stdio;
use tap_protocol::limits::PROVIDER_STOP_GRACE;
use tokio::process::{Child, Command};

/// `program`, set up as every child of the gateway is; the caller adds arguments,
/// environment and working directory, then spawns it.
pub(crate) fn command(program: &str) -> Command {
    let mut cmd = Command::new(program);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    cmd.process_group(0);
    cmd
}

/// SIGTERM to the child's process group; after [`PROVIDER_STOP_GRACE`] (or as soon as the child
/// exits), SIGKILL to whatever is left in the group.
#[cfg_attr(not(unix), allow(unused_variables))]
pub(crate) async fn stop_group(child: &mut Child, pid: Option<u32>) {
    #[cfg(unix)]
    if let Some(group) = pid
        .and_then(|p| i32::try_from(p).ok())
        .map(nix::unistd::Pid::from_raw)
    {
        use nix::sys::signal::{killpg, Signal};
        let _ = killpg(group, Signal::SIGTERM);
        let _ = tokio::time::timeout(PROVIDER_STOP_GRACE, child.wait()).await;
        let _ = killpg(group, Signal::SIGKILL);
    }
    let _ = child.kill().await;
}

/// Kills whatever is left in the group of a child that already exited (a background
/// grandchild must not outlive its run).
pub(crate) fn kill_group(pid: Option<u32>) {
    #[cfg(unix)]
    if let Some(group) = pid
        .and_then(|p| i32::try_from(p).ok())
        .map(nix::unistd::Pid::from_raw)
    {
        use nix::sys::signal::{killpg, Signal};
        let _ = killpg(group, Signal::SIGKILL);
    }
}

//! The `--spawn` provider processes: started once the gateway listens, their output
//! forwarded to the log, stopped with the gateway.

use crate::processes::group::stop_group;
use crate::processes::spawn::forward_lines;
use crate::state::Core;
use tokio::process::Child;

/// The log target users' `TAP_LOG` filters and the desktop app's provider-failure
/// detection name, kept when this module moved (`docs/configuration.md`, `TAP_LOG`).
const LOG_TARGET: &str = "tap_gateway::providers::processes";

/// Starts every configured provider process. A process that fails to start is logged
/// and skipped: one broken command must not keep the gateway from serving.
pub(crate) fn spawn_configured(core: &Core) {
    let url = format!("ws://{}", core.address);
    for spec in core.config.spawn.clone() {
        let label = spec.label();
        match spec.start(
            &core.secrets.gateway_token,
            &url,
            &core.config.child_env_remove,
        ) {
            Ok(child) => supervise(core, label, child),
            Err(e) => {
                tracing::error!(target: LOG_TARGET, command = %label, error = %e, "cannot start provider process")
            }
        }
    }
}

fn supervise(core: &Core, label: String, mut child: Child) {
    let pid = child.id();
    tracing::info!(target: LOG_TARGET, command = %label, ?pid, "provider process started");
    let tasks = &core.tasks;
    if let Some(out) = child.stdout.take() {
        let label = label.clone();
        tasks.spawn(forward_lines(
            out,
            move |line| tracing::info!(target: LOG_TARGET, command = %label, stream = "stdout", "{line}"),
        ));
    }
    if let Some(err) = child.stderr.take() {
        let label = label.clone();
        tasks.spawn(forward_lines(
            err,
            move |line| tracing::info!(target: LOG_TARGET, command = %label, stream = "stderr", "{line}"),
        ));
    }
    let stopping = core.stopping.clone();
    tasks.spawn(async move {
        tokio::select! {
            status = child.wait() => match status {
                Ok(s) => tracing::warn!(target: LOG_TARGET, command = %label, status = %s, "provider process exited"),
                Err(e) => tracing::warn!(target: LOG_TARGET, command = %label, error = %e, "provider process lost"),
            },
            _ = stopping.cancelled() => {
                // The provider already had its sessions' shutdown deadline; spec
                // providers reconnect forever, so they are stopped here.
                stop_group(&mut child, pid).await;
                tracing::info!(target: LOG_TARGET, command = %label, "provider process stopped");
            }
        }
    });
}

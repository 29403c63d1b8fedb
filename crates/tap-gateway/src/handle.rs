//! Starting and stopping a gateway: [`GatewayHandle`] and [`run`].

use crate::auth::copilot_holder;
use crate::auth::files::{write_private, CopilotClaim, GatewayFiles};
use crate::auth::tokens::Secrets;
use crate::config::GatewayConfig;
use crate::error::GatewayError;
use crate::gateway::Gateway;
use crate::limits::HISTORY_TRIM_EVERY;
use crate::state::Core;
use std::sync::Arc;
use tap_protocol::limits::{STOP_CONNECTIONS_WAIT, STOP_INVOCATIONS_WAIT};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// A started gateway: its handle, and the means to stop it.
pub struct GatewayHandle {
    gateway: Gateway,
    server: tokio::task::JoinHandle<()>,
}

impl GatewayHandle {
    /// Starts serving on `listener` (which must be bound to loopback): writes the token
    /// files, then accepts connections until [`GatewayHandle::stop`].
    pub async fn start(listener: TcpListener, config: GatewayConfig) -> Result<Self, GatewayError> {
        let address = listener.local_addr()?;
        if !address.ip().is_loopback() {
            return Err(GatewayError::NotLoopback(address));
        }
        let mut secrets = Secrets::generate();
        if let Some(token) = config.control_token.as_ref().filter(|t| !t.is_empty()) {
            secrets.control_token = token.clone();
        }
        let mut files = GatewayFiles::locate(&config.data_dir, config.copilot_home.as_deref());
        match files.claim_copilot_token(address.port()) {
            CopilotClaim::Held(holder) => tracing::info!(
                holder = holder.map(|h| h.address),
                "another gateway holds the Copilot token file; spec providers that read it reach that one"
            ),
            CopilotClaim::TookOver(h) => tracing::info!(
                pid = h.pid,
                address = %h.address,
                "took over the Copilot token file from a gateway that is no longer running"
            ),
            CopilotClaim::Claimed | CopilotClaim::NotConfigured => {}
        }
        write_files(&config, &secrets, &files, address)?;
        // Before anything new runs: what a gateway that died on this TAP_HOME left running.
        let orphans = crate::processes::orphans::reap_left_over(&config.data_dir);
        if orphans > 0 {
            tracing::warn!(
                groups = orphans,
                "stopped emitter commands a previous gateway left running"
            );
        }
        let core = Arc::new(Core::new(config, secrets, files, address));
        let gateway = Gateway::new(core.clone());
        let server = tokio::spawn(crate::server::serve(listener, gateway.clone()));
        tracing::info!(%address, "gateway listening");
        crate::providers::spawned::spawn_configured(&core);
        gateway.start_mcp_servers();
        spawn_retention(&core);
        spawn_policy_watch(&core);
        Ok(Self { gateway, server })
    }

    /// The running gateway.
    pub fn gateway(&self) -> &Gateway {
        &self.gateway
    }

    /// Stops gracefully: every session ends (providers get `shutdown.pending` and the
    /// deadline is honoured), in-flight calls get their terminal result, connections
    /// close, and the token files are removed.
    pub async fn stop(self) -> Result<(), GatewayError> {
        let core = self.gateway.core().clone();
        tracing::info!("gateway stopping");
        let ids: Vec<String> = core.state().session_order.clone();
        let endings = ids.into_iter().map(|id| {
            crate::sessions::lifecycle::end_session(&core, id, None, "gateway stopping".into())
        });
        futures_util::future::join_all(endings).await;
        // Every session has ended, so every call has its outcome; let the invocation tasks
        // hand those to the hosts before the host sockets close.
        core.invocations.close();
        if tokio::time::timeout(STOP_INVOCATIONS_WAIT, core.invocations.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                wait_ms = STOP_INVOCATIONS_WAIT.as_millis() as u64,
                "some tool invocations did not finish after the sessions ended"
            );
        }
        core.stopping.cancel();
        self.server.abort();
        core.tasks.close();
        if tokio::time::timeout(STOP_CONNECTIONS_WAIT, core.tasks.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                wait_ms = STOP_CONNECTIONS_WAIT.as_millis() as u64,
                "some connections did not close in time"
            );
        }
        // What the writer thread has not committed is lost when the process exits: the
        // run's last pushes and the connections' ends go to disk now, folded into the file
        // itself, so a later kill (or a damaged log) loses nothing of this run.
        core.ledger.checkpoint().await;
        for (path, e) in core.files.remove_all(&core.secrets.gateway_token) {
            tracing::warn!(path = %path.display(), error = %e, "could not remove file");
        }
        tracing::info!("gateway stopped");
        Ok(())
    }
}

/// Every [`HISTORY_TRIM_EVERY`] (and once at start), the ledger drops what the history settings
/// no longer keep. The settings are read each time, so a change applies within a minute.
fn spawn_retention(core: &Arc<Core>) {
    let core2 = core.clone();
    core.tasks.spawn(async move {
        let mut every = tokio::time::interval(HISTORY_TRIM_EVERY);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = core2.stopping.cancelled() => break,
                _ = every.tick() => {}
            }
            let trim = crate::settings::api::history_trim(&core2, std::time::SystemTime::now());
            core2.ledger.write(trim).await;
        }
    });
}

/// Follows `policy.json`, so a hand edit applies without a restart
/// (`approvals/policy_watch.rs`).
fn spawn_policy_watch(core: &Arc<Core>) {
    let core2 = core.clone();
    core.tasks.spawn(async move {
        // Clients read `policy.list` when they show the rules; a change event for them can
        // go here.
        let changed = || {};
        crate::approvals::policy_watch::follow(&core2.approvals, &core2.stopping, changed).await
    });
}

/// The token files and `gateway.json`, each 0600, written before the first connection.
fn write_files(
    config: &GatewayConfig,
    secrets: &Secrets,
    files: &GatewayFiles,
    address: std::net::SocketAddr,
) -> Result<(), GatewayError> {
    write_private(&files.provider_token, &secrets.gateway_token)?;
    if let Some(p) = &files.copilot_provider_token {
        write_private(p, &secrets.gateway_token)?;
        copilot_holder::record(p, address)?;
    }
    write_private(&files.host_token, &secrets.host_token)?;
    match &config.control_token_store {
        None => write_private(&files.control_token, &secrets.control_token)?,
        // The embedder keeps it; a file left by an earlier gateway would mislead `tap`.
        Some(_) => match std::fs::remove_file(&files.control_token) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(GatewayError::File {
                    path: files.control_token.clone(),
                    source,
                })
            }
        },
    }
    let state_json = serde_json::json!({
        "address": format!("ws://{address}"),
        "pid": std::process::id(),
        "startedAt": crate::time::rfc3339(std::time::SystemTime::now()),
        "version": env!("CARGO_PKG_VERSION"),
        "controlTokenStore": config.control_token_store.as_deref().unwrap_or("file"),
    });
    write_private(&files.state, &format!("{state_json:#}\n"))
}

/// Runs a gateway on `listener` until `shutdown` is cancelled, then stops it gracefully.
pub async fn run(
    listener: TcpListener,
    config: GatewayConfig,
    shutdown: CancellationToken,
) -> Result<(), GatewayError> {
    let handle = GatewayHandle::start(listener, config).await?;
    shutdown.cancelled().await;
    handle.stop().await
}

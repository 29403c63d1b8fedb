//! A server's life: start it, initialize it, offer its tools as a provider, restart it with
//! backoff when it fails, park it when it fails too often in a row, stop it (its whole
//! process group) when it is removed, its session ends or the gateway stops.

use super::bridge::{self, Ended};
use super::config::Startup;
use super::connect::LOG_TARGET;
use super::life_spans as lifecycle;
use super::registration::{Registration, Waited};
use super::server::Server;
use super::tool_cache;
use crate::state::Core;
use std::sync::Arc;
use std::time::Instant;
use tap_protocol::mcp_servers::McpServerState;
use tap_protocol::provider::ToolCall;

/// Supervises `server` until its `stop` token is cancelled.
pub(crate) async fn supervise(core: Arc<Core>, server: Arc<Server>, roots: Vec<String>) {
    let policy = core.config.project_restart.clone();
    let name = server.spec.name.clone();
    let mut quick_failures = 0u32;
    let mut backoff = policy.backoff;
    if !server.spec.enabled {
        server.update(|s| s.state = Some(McpServerState::Disabled));
        return;
    }
    // The provider carrying its tools, kept while a lazy or idle server's process is
    // stopped; and the call that is to start it.
    let mut reg: Option<Registration> = None;
    let mut first: Option<ToolCall> = None;
    if server.spec.startup == Startup::Lazy {
        // Known tools go into the sessions now; the first call starts the process. Never
        // run before: it starts now, to learn its tools.
        if let Some(catalog) = tool_cache::load(&core.config.data_dir, &server) {
            match Registration::register(&core, &server, catalog).await {
                Ok(r) => {
                    reg = Some(r);
                    match standby(&server, reg.as_mut().expect("registered")).await {
                        Waited::Call(call) => first = Some(call),
                        Waited::Stopped => return stopped(&server),
                        Waited::Restart => {}
                        Waited::Closed => reg = None,
                    }
                }
                Err(why) => {
                    tracing::warn!(target: LOG_TARGET, server = %name, error = %why, "could not offer the tools it had last time; starting it")
                }
            }
        }
    }
    loop {
        if server.stop.is_cancelled() {
            break;
        }
        server.update(|s| s.state = Some(McpServerState::Starting));
        let started = Instant::now();
        let mut span = Some(lifecycle::starting(&core, &server));
        let ended = bridge::run_once(
            &core,
            &server,
            roots.clone(),
            &mut span,
            &mut reg,
            first.take(),
        )
        .await;
        if let Some(span) = span {
            match &ended {
                Ended::Failed(why) => span.fail("MCP_SERVER_FAILED", why.as_str()),
                Ended::NeedsSignIn(c) => {
                    span.fail(super::bridge::NEEDS_SIGN_IN, c.reason(false).as_str())
                }
                _ => span.ok(),
            }
        }
        match ended {
            Ended::NeedsSignIn(challenge) => {
                // Not a failure: nothing is tried again until the user signs in (which
                // restarts it), so a server behind OAuth never loops or parks.
                lifecycle::exited(&core, &server, None, "needs sign-in");
                let signed_in = server.auth.vault.known(&server.spec.transport.target());
                tracing::warn!(target: LOG_TARGET, server = %name, "it needs you to sign in: `tap mcp login {name}` or the panel's Servers page");
                server.update(|s| {
                    s.state = Some(McpServerState::NeedsSignIn);
                    s.pid = None;
                    s.provider_id = None;
                    s.ready_since = None;
                    s.failures = 0;
                    if s.sign_in_reason.is_none() || challenge.more_scope {
                        s.sign_in_reason = Some(challenge.reason(signed_in));
                    }
                    s.challenge = Some(challenge);
                });
                quick_failures = 0;
                backoff = policy.backoff;
                core.events.emit(crate::events::GatewayEvent::StatusChanged);
                tokio::select! {
                    _ = server.stop.cancelled() => break,
                    _ = server.restart.notified() => continue,
                }
            }
            Ended::Idle => {
                lifecycle::exited(&core, &server, None, "idle");
                tracing::info!(target: LOG_TARGET, server = %name, "stopped after its idle timeout; the next call starts it");
                quick_failures = 0;
                backoff = policy.backoff;
                server.update(|s| s.failures = 0);
                let Some(r) = reg.as_mut() else { continue };
                match standby(&server, r).await {
                    Waited::Call(call) => first = Some(call),
                    Waited::Stopped => break,
                    Waited::Restart => {}
                    Waited::Closed => reg = None,
                }
                continue;
            }
            Ended::Stopped => {
                lifecycle::exited(&core, &server, None, "stopped");
                break;
            }
            Ended::Restart => {
                lifecycle::exited(&core, &server, None, "restart");
                quick_failures = 0;
                backoff = policy.backoff;
                server.update(|s| {
                    s.restarts += 1;
                    s.failures = 0;
                });
                tracing::info!(target: LOG_TARGET, server = %name, "restarting on request");
                continue;
            }
            Ended::Failed(why) => {
                tracing::warn!(target: LOG_TARGET, server = %name, error = %why, "MCP server failed");
                server.update(|s| {
                    s.last_error = Some(why.clone());
                    s.pid = None;
                    s.provider_id = None;
                    s.ready_since = None;
                });
                if started.elapsed() >= policy.stable_run {
                    quick_failures = 0;
                    backoff = policy.backoff;
                }
                quick_failures += 1;
                server.update(|s| s.failures = quick_failures);
            }
        }
        let parks = quick_failures >= policy.max_quick_failures;
        let why = server.status.lock().unwrap().last_error.clone();
        let next = if parks { "parked" } else { "restart" };
        lifecycle::exited(&core, &server, why.as_deref(), next);
        if parks {
            tracing::error!(target: LOG_TARGET, server = %name, failures = quick_failures, "MCP server parked: it failed too often in a row; `tap mcp restart {name}` starts it again");
            server.update(|s| s.state = Some(McpServerState::Parked));
            core.events.emit(crate::events::GatewayEvent::StatusChanged);
            tokio::select! {
                _ = server.stop.cancelled() => break,
                _ = server.restart.notified() => {
                    quick_failures = 0;
                    backoff = policy.backoff;
                    server.update(|s| {
                        s.restarts = 0;
                        s.failures = 0;
                    });
                    continue;
                }
            }
        }
        server.update(|s| {
            s.state = Some(McpServerState::Restarting);
            s.restarts += 1;
        });
        // The tray and the panel count failing servers from the list: tell them.
        core.events.emit(crate::events::GatewayEvent::StatusChanged);
        tokio::select! {
            _ = server.stop.cancelled() => break,
            _ = server.restart.notified() => {
                quick_failures = 0;
                backoff = policy.backoff;
                server.update(|s| s.failures = 0);
            }
            _ = tokio::time::sleep(backoff) => {
                backoff = (backoff * 2).min(policy.backoff_max);
            }
        }
    }
    stopped(&server);
}

/// Waits with the process stopped (state `stopped`, tools offered) for what comes next.
async fn standby(server: &Server, reg: &mut Registration) -> Waited {
    server.update(|s| {
        s.state = Some(McpServerState::Stopped);
        s.pid = None;
        s.provider_id = Some(reg.provider_id.clone());
        s.tools = reg.catalog.session_names();
        s.ready_since = None;
    });
    reg.wait_for_call(server).await
}

fn stopped(server: &Server) {
    server.update(|s| {
        s.state = Some(McpServerState::Stopped);
        s.pid = None;
        s.provider_id = None;
        s.ready_since = None;
    });
}

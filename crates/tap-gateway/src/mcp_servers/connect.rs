//! Reaching a server and initializing it: a stdio server is started as every child of the
//! gateway is (its own process group, recorded so a crashed gateway's next start kills
//! it), with its stderr kept and logged; a remote one is reached over Streamable HTTP or
//! the legacy HTTP+SSE transport (`legacy_sse.rs`).
//! `initialize` has a deadline either way.

use super::client::{Client, Note};
use super::config::Transport;
use super::in_flight::Router;
use super::legacy_sse;
use super::line_limit::{Cut, LineLimit};
use super::ordered_progress::Ordered;
use super::secrets;
use super::server::Server;
use super::streamable;
use crate::limits::{MCP_EXIT_STATUS_WAIT, MCP_SERVER_MESSAGE_BYTES};
use crate::oauth::challenge::{self, Challenge};
use crate::processes::{group, orphans, spawn::forward_lines};
use crate::state::Core;
use axum::http::{HeaderMap, HeaderName, HeaderValue};
use rmcp::service::RunningService;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{RoleClient, ServiceExt};
use std::path::Path;
use std::sync::Arc;
use tokio::process::Child;
use tokio::sync::mpsc;

/// The log target of a server's own lines and lifecycle (`TAP_LOG=tap_gateway::mcp_servers=debug`).
pub(crate) const LOG_TARGET: &str = "tap_gateway::mcp_servers";

/// An initialized connection to a server.
pub(crate) struct Connection {
    pub service: RunningService<RoleClient, Client>,
    /// A stdio server's process; stopped with its whole group.
    pub child: Option<Child>,
    pub pid: Option<u32>,
    /// Set when a stdio server's output was cut for a message over the limit.
    pub cut: Arc<Cut>,
    /// A legacy HTTP+SSE server's stream: says why it dropped (the run has failed then).
    pub dropped: Option<tokio::sync::oneshot::Receiver<String>>,
    /// Removes the orphan record when the run ends.
    _record: Option<orphans::GroupRecord>,
}

impl Connection {
    /// Closes the MCP session and stops the process group (SIGTERM, then SIGKILL).
    pub async fn close(mut self) {
        let _ = self.service.close().await;
        if let Some(child) = self.child.as_mut() {
            group::stop_group(child, self.pid).await;
        }
    }
}

/// Starts or reaches the server and runs `initialize`. `Err`: why, in words for the user.
pub(crate) async fn open(
    core: &Arc<Core>,
    server: &Arc<Server>,
    notes: mpsc::Sender<Note>,
    tools_changed: Arc<tokio::sync::Notify>,
    roots: Vec<String>,
    router: Router,
) -> Result<Connection, Refused> {
    // Progress and log entries leave the connection in the order the server sent them
    // (`ordered_progress.rs`).
    let callers = router.clone();
    let client = Client::new(notes, tools_changed, roots, router);
    match &server.spec.transport {
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let dir = match cwd {
                Some(c) => server.base_dir.join(c),
                None => server.base_dir.clone(),
            };
            let (home, keyring) = (&core.config.data_dir, core.config.secrets_keyring);
            let env = secrets::resolve(home, keyring, "env", env).await?;
            let mut cmd = group::command(command);
            cmd.stdin(std::process::Stdio::piped());
            for key in &core.config.child_env_remove {
                cmd.env_remove(key);
            }
            cmd.args(args).envs(env).current_dir(&dir);
            let mut child = cmd
                .spawn()
                .map_err(|e| Refused::Failed(spawn_error(command, &dir, &e)))?;
            let pid = child.id();
            let record = orphans::record(&core.config.data_dir, pid);
            server.update(|s| s.pid = pid);
            if let Some(stderr) = child.stderr.take() {
                let server = server.clone();
                core.tasks.spawn(async move {
                    forward_lines(stderr, |line| {
                        // Kept before it is logged: `tap mcp logs --follow` shows the
                        // tail, then follows the log (`stream` and `session` pick these
                        // lines out of it), and a line is better shown twice than lost.
                        server.stderr_line(line);
                        let session = server.session_id.as_deref();
                        tracing::info!(target: LOG_TARGET, server = %server.spec.name, session, stream = "stderr", "{line}");
                    })
                    .await;
                });
            }
            let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                group::stop_group(&mut child, pid).await;
                return Err(Refused::Failed(
                    "its standard input and output could not be opened".into(),
                ));
            };
            let cut = Cut::new(&server.spec.name);
            let stdout = LineLimit::new(stdout, MCP_SERVER_MESSAGE_BYTES, cut.clone());
            match initialize(
                core.config.mcp_initialize_timeout,
                client.serve(Ordered::new(
                    AsyncRwTransport::new_client(stdout, stdin),
                    server.clone(),
                    callers,
                )),
            )
            .await
            {
                Ok(service) => Ok(Connection {
                    service,
                    child: Some(child),
                    pid,
                    cut,
                    dropped: None,
                    _record: Some(record),
                }),
                // A deadline missed is the reason, whatever the process did after.
                Err((Missed::Deadline | Missed::SignIn(_), why)) => {
                    group::stop_group(&mut child, pid).await;
                    Err(Refused::Failed(why))
                }
                Err((Missed::Answer, _)) if cut.reason().is_some() => {
                    group::stop_group(&mut child, pid).await;
                    Err(Refused::Failed(cut.reason().unwrap_or_default()))
                }
                Err((Missed::Answer, why)) => {
                    // Say how it ended when it exited: that is what the user needs.
                    let exited = tokio::time::timeout(MCP_EXIT_STATUS_WAIT, child.wait())
                        .await
                        .ok()
                        .and_then(Result::ok);
                    group::stop_group(&mut child, pid).await;
                    Err(Refused::Failed(match exited {
                        Some(status) => format!("it exited ({status}) before it was initialized"),
                        None => why,
                    }))
                }
            }
        }
        Transport::Remote {
            sse: false,
            url,
            headers,
            oauth,
        } => {
            let headers = header_map(core, headers).await?;
            let transport =
                streamable::transport(core, server, url, headers, oauth.as_ref()).await?;
            let service = initialize(
                core.config.mcp_initialize_timeout,
                client.serve(Ordered::new(transport, server.clone(), callers)),
            )
            .await
            .map_err(|(missed, why)| match missed {
                Missed::SignIn(challenge) => Refused::SignIn(challenge),
                _ => Refused::Failed(why),
            })?;
            Ok(Connection {
                service,
                child: None,
                pid: None,
                cut: Cut::new(&server.spec.name),
                dropped: None,
                _record: None,
            })
        }
        Transport::Remote {
            sse: true,
            url,
            headers,
            ..
        } => {
            // Waiting for the stream's `endpoint` event is part of the initialize deadline.
            let started = tokio::time::Instant::now();
            let within = core.config.mcp_initialize_timeout;
            let headers = header_map(core, headers).await?;
            let cut = Cut::new(&server.spec.name);
            let (transport, mut dropped) =
                legacy_sse::connect(url, headers, within, cut.clone()).await?;
            let left = within.saturating_sub(started.elapsed());
            let service = match initialize(
                left,
                client.serve(Ordered::new(transport, server.clone(), callers)),
            )
            .await
            {
                Ok(service) => service,
                // Why its stream ended says more than "connection closed".
                Err((_, why)) => return Err(Refused::Failed(dropped.try_recv().unwrap_or(why))),
            };
            Ok(Connection {
                service,
                child: None,
                pid: None,
                cut,
                dropped: Some(dropped),
                _record: None,
            })
        }
    }
}

/// A remote server's headers, their secrets put in.
pub(super) async fn header_map(
    core: &Core,
    headers: &[(String, String)],
) -> Result<HeaderMap, String> {
    let (home, keyring) = (&core.config.data_dir, core.config.secrets_keyring);
    let mut map = HeaderMap::new();
    for (k, v) in secrets::resolve(home, keyring, "header", headers).await? {
        let name = HeaderName::try_from(k.as_str())
            .map_err(|_| format!("header name '{k}' is not valid"))?;
        let value = HeaderValue::try_from(v.as_str())
            .map_err(|_| format!("the value of header '{k}' is not valid"))?;
        map.append(name, value);
    }
    Ok(map)
}

/// Why a server could not be reached or initialized.
pub(crate) enum Refused {
    /// The reason, in words for the user.
    Failed(String),
    /// A remote server wants the user to sign in.
    SignIn(Challenge),
}

impl From<String> for Refused {
    fn from(why: String) -> Self {
        Refused::Failed(why)
    }
}

/// Why `initialize` did not succeed.
enum Missed {
    /// No answer in time.
    Deadline,
    /// An error, or the connection closed.
    Answer,
    /// The server answered `401` (or `403` for more scope).
    SignIn(Challenge),
}

async fn initialize(
    deadline: std::time::Duration,
    serving: impl std::future::Future<
        Output = Result<RunningService<RoleClient, Client>, rmcp::service::ClientInitializeError>,
    >,
) -> Result<RunningService<RoleClient, Client>, (Missed, String)> {
    match tokio::time::timeout(deadline, serving).await {
        Ok(Ok(service)) => Ok(service),
        Ok(Err(e)) => match challenge::of_initialize(&e) {
            Some(c) => Err((Missed::SignIn(c), format!("initialize failed: {e}"))),
            None => Err((Missed::Answer, format!("initialize failed: {e}"))),
        },
        Err(_) => Err((
            Missed::Deadline,
            format!(
                "it did not answer initialize within {} ms",
                deadline.as_millis()
            ),
        )),
    }
}

fn spawn_error(command: &str, dir: &Path, e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound if !dir.is_dir() => {
            format!(
                "cannot start '{command}': its directory {} does not exist",
                dir.display()
            )
        }
        std::io::ErrorKind::NotFound => {
            format!("cannot start '{command}': no such program (is it installed and on PATH?)")
        }
        _ => format!("cannot start '{command}': {e}"),
    }
}

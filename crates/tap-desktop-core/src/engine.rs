//! The gateway engine, hosted in-process: the same `GatewayHandle` `tap gateway` runs,
//! with the control token placed in the OS keyring when there is one. Tauri-free, so it
//! is tested with a real engine on port 0.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tap_client::{is_tap_gateway, running_gateway};
use tap_gateway::{Gateway, GatewayConfig, GatewayHandle};
use tap_secrets::{Placement, SecretBackend};
use tokio::net::TcpListener;

/// How long quitting the app waits for the gateway to stop gracefully and for the keyring
/// to forget the control token (both at once). A graceful stop is usually a few ms, but it
/// waits on peers: a bound provider has `SHUTDOWN_DEADLINE` (10 s) to acknowledge its
/// session's end, and a close handshake `CLOSE_HANDSHAKE_TIMEOUT` (2 s), so one stuck peer
/// made a quit take seconds. Past this, the app removes the gateway's files itself and exits;
/// the peers still waited on see their connection drop. Quit as a whole stays under ~200 ms.
pub const QUIT_WAIT: Duration = Duration::from_millis(120);

/// What [`Engine::quit`] did, for the log and the tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuitReport {
    /// The gateway stopped gracefully within [`QUIT_WAIT`].
    pub graceful: bool,
    /// The keyring forgot the control token within [`QUIT_WAIT`] (true when it was not there).
    pub keyring_done: bool,
    /// How long it took.
    pub took: Duration,
}

/// A running engine and where its control token lives.
pub struct Engine {
    handle: GatewayHandle,
    home: PathBuf,
    placement: Placement,
    backend: Arc<dyn SecretBackend>,
}

/// How to start the engine.
pub struct StartOptions {
    /// `TAP_HOME`.
    pub home: PathBuf,
    /// Where to listen (loopback).
    pub listen: SocketAddr,
    /// The keyring (or a stand-in in tests).
    pub backend: Arc<dyn SecretBackend>,
    /// False when `TAP_KEYRING=off`.
    pub keyring_allowed: bool,
    /// `COPILOT_HOME`, where spec providers look for the gateway token.
    pub copilot_home: Option<PathBuf>,
    /// `TAP_UI_DIR`: a panel on disk that replaces the built-in one for browsers (`tap ui`).
    pub ui_dir: Option<PathBuf>,
    /// The log ring the panel's Logs page reads (its layer is in the app's subscriber).
    pub logs: Option<tap_gateway::logs::LogBuffer>,
    /// Where spans are also exported over OTLP/HTTP (`OTEL_EXPORTER_OTLP_ENDPOINT`).
    pub otlp_endpoint: Option<String>,
    /// Variables the app set for itself, kept from the processes the engine starts.
    pub child_env_remove: Vec<String>,
}

impl StartOptions {
    /// For tests: `home` on 127.0.0.1:0 with `backend` as the keyring, nothing else.
    #[cfg(test)]
    pub(crate) fn for_tests(home: &std::path::Path, backend: Arc<dyn SecretBackend>) -> Self {
        Self {
            home: home.to_path_buf(),
            listen: "127.0.0.1:0".parse().unwrap(),
            backend,
            keyring_allowed: true,
            copilot_home: None,
            ui_dir: None,
            logs: None,
            otlp_endpoint: None,
            child_env_remove: Vec::new(),
        }
    }

    /// What the app runs with: the OS keyring (unless `TAP_KEYRING=off`), `COPILOT_HOME`,
    /// the built panel and the OTLP endpoint, as `tap gateway` finds them; what the app set
    /// for GTK ([`crate::gtk_env`]) stays out of its children's environment.
    pub fn desktop(home: PathBuf, listen: SocketAddr, logs: tap_gateway::logs::LogBuffer) -> Self {
        Self {
            home,
            listen,
            backend: Arc::new(tap_secrets::OsKeyring::default()),
            keyring_allowed: !tap_secrets::keyring_disabled_by_env(),
            copilot_home: tap_client::default_copilot_home(),
            ui_dir: ui_dir(),
            logs: Some(logs),
            otlp_endpoint: tap_gateway::otlp_endpoint_from_env(),
            child_env_remove: crate::gtk_env::applied(),
        }
    }
}

impl Engine {
    /// Starts the gateway: refuses when another gateway runs for the same `TAP_HOME` or
    /// the port is taken, places the control token, then starts serving.
    pub async fn start(o: StartOptions) -> Result<Self, String> {
        if let Some(running) = running_gateway(&o.home).await {
            return Err(format!(
                "another Tap gateway is already running for {} at {running}; stop it (or set TAP_HOME to another directory)",
                o.home.display()
            ));
        }
        let listener = match TcpListener::bind(o.listen).await {
            Ok(l) => l,
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
                return Err(if is_tap_gateway(o.listen).await {
                    format!("another Tap gateway is already running on {}", o.listen)
                } else {
                    format!(
                        "{} is in use by another program; choose another port in Settings or with --listen 127.0.0.1:PORT",
                        o.listen
                    )
                });
            }
            Err(e) => return Err(format!("cannot listen on {}: {e}", o.listen)),
        };
        let token = tap_secrets::generate_token("ctk-");
        let placement = {
            let (backend, home, token) = (o.backend.clone(), o.home.clone(), token.clone());
            tokio::task::spawn_blocking(move || {
                tap_secrets::place_control_token(&*backend, &home, &token, o.keyring_allowed)
            })
            .await
            .map_err(|e| format!("the keyring task failed: {e}"))?
        };
        match &placement {
            Placement::Keyring => tracing::info!("control token kept in the OS keyring"),
            Placement::File { reason } => tracing::warn!(
                %reason,
                file = %tap_secrets::control_token_file(&o.home).display(),
                "no usable OS keyring; the control token goes to a 0600 file"
            ),
        }
        let mut config = GatewayConfig::new(o.home.clone());
        config.copilot_home = o.copilot_home;
        config.tap_program = crate::tap_program::locate_from_env();
        config.ui_dir = o.ui_dir;
        config.embedded_panel = tap_gateway::EmbeddedPanel::built_in();
        config.logs = o.logs;
        config.otlp_endpoint = o.otlp_endpoint;
        config.child_env_remove = o.child_env_remove;
        config.control_token = Some(token);
        config.control_token_store = match placement {
            Placement::Keyring => Some(tap_secrets::STORE_KEYRING.to_string()),
            Placement::File { .. } => None,
        };
        let handle = GatewayHandle::start(listener, config)
            .await
            .map_err(|e| format!("cannot start the gateway: {e}"))?;
        Ok(Self {
            handle,
            home: o.home,
            placement,
            backend: o.backend,
        })
    }

    /// The running gateway.
    pub fn gateway(&self) -> &Gateway {
        self.handle.gateway()
    }

    /// Where the control token is.
    #[cfg(test)]
    pub fn placement(&self) -> &Placement {
        &self.placement
    }

    /// The panel's notice when the token is not in a keyring (`None` when it is).
    pub fn secret_notice(&self) -> Option<String> {
        self.placement.notice(&self.home)
    }

    /// Stops the gateway gracefully (token files removed) and takes the control token out
    /// of the keyring.
    pub async fn stop(self) {
        if let Err(e) = self.handle.stop().await {
            tracing::warn!(error = %e, "stopping the gateway failed");
        }
        if self.placement == Placement::Keyring {
            let (backend, home) = (self.backend, self.home);
            let forgotten = tokio::task::spawn_blocking(move || {
                tap_secrets::forget_control_token(&*backend, &home)
            })
            .await;
            if let Ok(Err(e)) = forgotten {
                tracing::warn!(error = %e, "could not remove the control token from the keyring");
            }
        }
    }
}

impl Engine {
    /// Stops the gateway for the app's Quit: like [`Engine::stop`], but waits at most `wait`
    /// ([`QUIT_WAIT`]) for it and for the keyring, at once. The gateway's files are removed
    /// either way; a keyring entry that took longer is left (the next start replaces it,
    /// and it opens nothing once this gateway is gone).
    pub async fn quit(self, wait: Duration) -> QuitReport {
        let started = Instant::now();
        let gateway = self.handle.gateway().clone();
        let keyring = self.placement == Placement::Keyring;
        let (backend, home) = (self.backend, self.home);
        let forget = async move {
            if !keyring {
                return true;
            }
            let task = tokio::task::spawn_blocking(move || {
                tap_secrets::forget_control_token(&*backend, &home)
            });
            match tokio::time::timeout(wait, task).await {
                Ok(Ok(Ok(()))) => true,
                Ok(Ok(Err(e))) => {
                    tracing::warn!(error = %e, "could not remove the control token from the keyring");
                    true
                }
                Ok(Err(_)) | Err(_) => false,
            }
        };
        let stop = tokio::time::timeout(wait, self.handle.stop());
        let (stopped, keyring_done) = tokio::join!(stop, forget);
        let graceful = match stopped {
            Ok(Ok(())) => true,
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "stopping the gateway failed");
                true
            }
            Err(_) => {
                for (path, e) in gateway.files().remove_all(gateway.provider_token()) {
                    tracing::warn!(path = %path.display(), error = %e, "could not remove file");
                }
                false
            }
        };
        let report = QuitReport {
            graceful,
            keyring_done,
            took: started.elapsed(),
        };
        if !graceful {
            tracing::warn!(
                wait_ms = wait.as_millis() as u64,
                "the gateway did not stop in time (a peer did not answer); quitting anyway"
            );
        }
        if !keyring_done {
            tracing::warn!(
                wait_ms = wait.as_millis() as u64,
                "the keyring did not answer in time; its control-token entry is left"
            );
        }
        tracing::info!(
            took_ms = report.took.as_millis() as u64,
            graceful,
            "gateway stopped for quit"
        );
        report
    }
}

/// `TAP_UI_DIR`, as for `tap gateway`: a panel on disk that replaces the built-in one
/// (the gateway serves the panel compiled into the app otherwise, so browsers and `tap ui`
/// reach the app's gateway too).
pub fn ui_dir() -> Option<PathBuf> {
    std::env::var_os("TAP_UI_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use tap_secrets::MemoryBackend;

    fn gateway_json(home: &Path) -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(home.join("gateway.json")).unwrap()).unwrap()
    }

    #[tokio::test]
    async fn with_a_keyring_the_token_lives_there_and_leaves_with_the_gateway() {
        let dir = tempfile::tempdir().unwrap();
        let backend = Arc::new(MemoryBackend::new());
        let engine = Engine::start(StartOptions::for_tests(dir.path(), backend.clone()))
            .await
            .unwrap();
        let token = engine.gateway().control_token().to_string();
        assert!(token.starts_with("ctk-"));
        let account = tap_secrets::control_token_account(dir.path());
        assert_eq!(backend.stored(&account), Some(token));
        assert_eq!(engine.placement(), &Placement::Keyring);
        assert_eq!(engine.secret_notice(), None);
        assert_eq!(gateway_json(dir.path())["controlTokenStore"], "keyring");
        assert!(!dir.path().join("control-token").exists());
        engine.stop().await;
        assert_eq!(backend.stored(&account), None);
        assert!(!dir.path().join("gateway.json").exists());
    }

    #[tokio::test]
    async fn without_a_keyring_the_token_goes_to_a_0600_file_and_the_panel_gets_a_notice() {
        let dir = tempfile::tempdir().unwrap();
        let backend = Arc::new(MemoryBackend::refusing("no keyring service: test"));
        let engine = Engine::start(StartOptions::for_tests(dir.path(), backend))
            .await
            .unwrap();
        let file = dir.path().join("control-token");
        assert_eq!(
            std::fs::read_to_string(&file).unwrap().trim(),
            engine.gateway().control_token()
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
                0o600
            );
        }
        assert_eq!(gateway_json(dir.path())["controlTokenStore"], "file");
        let notice = engine.secret_notice().unwrap();
        assert!(notice.contains("no keyring service: test"), "{notice}");
        engine.stop().await;
        assert!(!file.exists());
    }

    #[tokio::test]
    async fn a_second_gateway_for_the_same_home_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let backend: Arc<dyn SecretBackend> = Arc::new(MemoryBackend::new());
        let first = Engine::start(StartOptions::for_tests(dir.path(), backend.clone()))
            .await
            .unwrap();
        let err = Engine::start(StartOptions::for_tests(dir.path(), backend))
            .await
            .err()
            .unwrap();
        let addr = first.gateway().address();
        assert!(
            err.starts_with(&format!(
                "another Tap gateway is already running for {} at {addr}",
                dir.path().display()
            )),
            "{err}"
        );
        first.stop().await;
    }

    #[tokio::test]
    async fn quit_is_bounded_even_when_a_bound_provider_never_answers() {
        let dir = tempfile::tempdir().unwrap();
        let backend = Arc::new(MemoryBackend::new());
        let engine = Engine::start(StartOptions::for_tests(dir.path(), backend.clone()))
            .await
            .unwrap();
        let account = tap_secrets::control_token_account(dir.path());
        // A provider bound to a session that never acknowledges the session's end: a
        // graceful stop waits SHUTDOWN_DEADLINE (10 s) for it.
        let gateway = engine.gateway().clone();
        let (host, stuck) = stuck_provider_in_a_session(&gateway).await;
        let report = engine.quit(QUIT_WAIT).await;
        assert!(!report.graceful, "the stop was cut short");
        assert!(report.keyring_done);
        assert!(
            report.took < QUIT_WAIT + Duration::from_millis(200),
            "{report:?}"
        );
        assert!(!dir.path().join("gateway.json").exists(), "files removed");
        assert!(!dir.path().join("provider-token").exists());
        assert_eq!(backend.stored(&account), None, "keyring entry removed");
        drop((host, stuck));
    }

    /// A session (from a real session host over its socket) and an in-process provider
    /// bound to it that will never read another message.
    async fn stuck_provider_in_a_session(
        gateway: &tap_gateway::Gateway,
    ) -> (tap_client::HostClient, tap_gateway::LocalProvider) {
        let url = format!("ws://{}/session", gateway.address());
        let host = tap_client::HostClient::connect(&url, gateway.host_token(), "test", None)
            .await
            .unwrap();
        let session = host
            .register_session(tap_protocol::host::SessionRegister {
                label: Some("quit".into()),
                foreground: true,
                ..Default::default()
            })
            .await
            .unwrap();
        let mut provider = gateway.connect_local();
        let sessions = provider.recv_json().await.unwrap();
        assert_eq!(sessions["type"], "sessions");
        provider
            .send_json(&serde_json::json!({
                "type": "hello", "protocolVersion": 2, "name": "stuck",
                "session": session.id, "tools": []
            }))
            .unwrap();
        let ack = provider.recv_json().await.unwrap();
        assert_eq!(ack["type"], "hello.ack", "{ack}");
        (host, provider)
    }

    #[tokio::test]
    async fn an_idle_gateway_quits_gracefully() {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::start(StartOptions::for_tests(
            dir.path(),
            Arc::new(MemoryBackend::new()),
        ))
        .await
        .unwrap();
        let report = engine.quit(QUIT_WAIT).await;
        assert!(report.graceful && report.keyring_done, "{report:?}");
        assert!(!dir.path().join("gateway.json").exists());
    }

    #[tokio::test]
    async fn a_port_held_by_another_program_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let squatter = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut o = StartOptions::for_tests(dir.path(), Arc::new(MemoryBackend::new()));
        o.listen = squatter.local_addr().unwrap();
        let err = Engine::start(o).await.err().unwrap();
        assert_eq!(
            err,
            format!(
                "{} is in use by another program; choose another port in Settings or with --listen 127.0.0.1:PORT",
                squatter.local_addr().unwrap()
            )
        );
    }
}

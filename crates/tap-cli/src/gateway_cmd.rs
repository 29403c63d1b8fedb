use crate::idle_exit::wait_until_idle;
use crate::signals::shutdown_token;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use tap_client::{default_copilot_home, is_tap_gateway, running_gateway};
use tap_gateway::settings;
use tap_gateway::{EmbeddedPanel, GatewayConfig, GatewayHandle, SpawnSpec};
use tokio::net::TcpListener;

/// `listen`: `--listen`; `None` means 127.0.0.1 and the saved port (settings.json).
/// `exit_when_idle`: stop once no session has been registered for that long.
pub async fn run(
    listen: Option<SocketAddr>,
    spawn: Vec<String>,
    exit_when_idle: Option<Duration>,
    home: PathBuf,
) -> ExitCode {
    // Stderr and the ring the panel's Logs page reads (handed to the engine below).
    let logs = tap_gateway::logs::install();
    let listen = listen.unwrap_or_else(|| saved_address(&home));
    if !listen.ip().is_loopback() {
        eprintln!("tap: refusing to listen on {listen}: the gateway serves loopback only (use 127.0.0.1:PORT)");
        return ExitCode::from(2);
    }
    // One gateway per TAP_HOME: a second one would overwrite the first's token files, and
    // either's clean stop would delete both. A stale gateway.json (after a crash) is fine.
    if let Some(running) = running_gateway(&home).await {
        eprintln!(
            "tap: another Tap gateway is already running for {} at {running}; use it, or set TAP_HOME to another directory",
            home.display()
        );
        return ExitCode::from(2);
    }
    let listener = match TcpListener::bind(listen).await {
        Ok(l) => l,
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
            if is_tap_gateway(listen).await {
                eprintln!("tap: another Tap gateway is already running on {listen}. Use it (other `tap` commands find it through TAP_HOME), or stop it first.");
            } else {
                eprintln!("tap: {listen} is in use by another program; choose another address with --listen 127.0.0.1:PORT");
            }
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("tap: cannot listen on {listen}: {e}");
            return ExitCode::from(2);
        }
    };
    // Before any file is written: a SIGTERM that follows `gateway.json` at once must
    // still stop the gateway gracefully and remove the files.
    let stop = shutdown_token();
    let mut config = GatewayConfig::new(home);
    config.copilot_home = default_copilot_home();
    // Clients' entries (`clients.connect`) launch this very program, as `tap connect` does.
    config.tap_program =
        std::env::current_exe().map_err(|e| format!("cannot find the running tap: {e}"));
    config.spawn = spawn.iter().map(|c| SpawnSpec::shell(c)).collect();
    config.ui_dir = ui_dir();
    config.embedded_panel = EmbeddedPanel::built_in();
    config.logs = Some(logs);
    config.otlp_endpoint = tap_gateway::otlp_endpoint_from_env();
    let config_ui_dir = config.ui_dir.clone();
    let handle = match GatewayHandle::start(listener, config).await {
        Ok(h) => h,
        Err(e) => {
            eprintln!("tap: cannot start the gateway: {e}");
            return ExitCode::from(2);
        }
    };
    let files = handle.gateway().files().clone();
    tracing::info!(
        provider_token = %files.provider_token.display(),
        copilot_token = ?files.copilot_provider_token.as_ref().map(|p| p.display().to_string()),
        host_token = %files.host_token.display(),
        "token files written (mode 0600); Ctrl-C stops the gateway"
    );
    let panel = format!("http://{}/", handle.gateway().address());
    match (&config_ui_dir, handle.gateway().serves_panel()) {
        (Some(dir), true) => tracing::info!(
            %panel,
            dir = %dir.display(),
            "serving the panel from TAP_UI_DIR; `tap ui` prints a login link"
        ),
        (Some(dir), false) => tracing::warn!(
            dir = %dir.display(),
            "no panel to serve: no index.html in TAP_UI_DIR (build it with `npm run build` in ui/, or unset TAP_UI_DIR for the built-in panel)"
        ),
        (None, true) => tracing::info!(
            %panel,
            "serving the panel built into tap; `tap ui` prints a login link"
        ),
        (None, false) => tracing::warn!("no panel to serve: this tap was built without one"),
    }
    match exit_when_idle {
        Some(grace) => tokio::select! {
            () = stop.cancelled() => {}
            () = wait_until_idle(handle.gateway(), grace) => {
                tracing::info!(grace_secs = grace.as_secs(), "no session for the grace period (--exit-when-idle); stopping");
            }
        },
        None => stop.cancelled().await,
    }
    match handle.stop().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tap: stopping failed: {e}");
            ExitCode::FAILURE
        }
    }
}

/// 127.0.0.1 and the port saved in `home`'s settings.json (the default, 9400, without
/// one; also, with a warning, when the file cannot be read).
fn saved_address(home: &std::path::Path) -> SocketAddr {
    let port = match settings::load(home) {
        Ok(s) => s.port,
        Err(e) => {
            tracing::warn!(error = %e, "ignoring the saved settings; using port {}", settings::DEFAULT_PORT);
            settings::DEFAULT_PORT
        }
    };
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// `TAP_UI_DIR`: a built panel on disk that replaces the one built into `tap` (for
/// working on the panel). Empty means unset.
fn ui_dir() -> Option<PathBuf> {
    std::env::var_os("TAP_UI_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
}

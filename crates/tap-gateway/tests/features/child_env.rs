//! `child_env_remove`: what the embedder set for itself (the desktop app's `GDK_GL`) does
//! not reach the processes the gateway starts, and the rest of its environment does.
//!
//! The variable removed is `CARGO_MANIFEST_DIR`, which `cargo test` sets for the test
//! process, so no test changes its own environment (tests run in parallel threads).

use crate::emitters::{ended, runs_until, start};
use crate::spawn::wait_for_file;
use serde_json::json;
use tap_gateway::SpawnSpec;
use tap_testkit::*;

const REMOVED: &str = "CARGO_MANIFEST_DIR";
/// Also set by `cargo test`, and not removed: the rest of the environment still arrives.
const KEPT: &str = "CARGO_PKG_NAME";

/// Prints both variables, or `unset`.
fn shell_line() -> String {
    assert!(
        std::env::var_os(REMOVED).is_some() && std::env::var_os(KEPT).is_some(),
        "run under cargo test: it sets {REMOVED} and {KEPT}"
    );
    format!("echo \"${{{REMOVED}-unset}} ${{{KEPT}-unset}}\"")
}

#[tokio::test]
async fn a_spawned_provider_process_does_not_inherit_what_is_removed() {
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("env.txt");
    let line = format!(
        "{} > {1}.tmp && mv {1}.tmp {1}",
        shell_line(),
        file.display()
    );
    let _gw = TestGateway::start_with(|c| {
        c.spawn = vec![SpawnSpec::shell(&line)];
        c.child_env_remove = vec![REMOVED.into()];
    })
    .await;
    let seen = wait_for_file(&file).await;
    assert_eq!(seen.trim_end(), format!("unset {}", env!("CARGO_PKG_NAME")));
}

#[tokio::test]
async fn an_emitter_command_does_not_inherit_what_is_removed() {
    let gw = TestGateway::for_emitters_with(|c| c.child_env_remove = vec![REMOVED.into()]).await;
    let (host, s) = gw.host_with_session().await;
    let (mut c, _) = Control::authed(&gw).await;
    start(
        &mut c,
        &s.id,
        json!({"name": "env", "every": "1h", "stream": "envs", "command": shell_line()}),
    )
    .await;
    runs_until(&gw, &s.id, "env", "the run", ended).await;
    let lines = stored(&host, &s.id, "envs@emitters").await;
    assert_eq!(lines, [format!("unset {}", env!("CARGO_PKG_NAME"))]);
}

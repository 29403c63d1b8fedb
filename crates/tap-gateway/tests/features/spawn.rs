//! Provider processes the gateway starts get the gateway token and URL in their
//! environment and are stopped with the gateway.

use tap_gateway::SpawnSpec;
use tap_testkit::*;

/// Polls for a file with a deadline (the child writes it whenever it gets scheduled).
pub(crate) async fn wait_for_file(path: &std::path::Path) -> String {
    eventually(&format!("{} to appear", path.display()), || {
        std::future::ready(
            std::fs::read_to_string(path)
                .ok()
                .filter(|s| s.ends_with('\n')),
        )
    })
    .await
}

#[tokio::test]
async fn spawned_children_get_the_gateway_token_and_url() {
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("env.txt");
    let line = format!(
        "printf '%s %s\\n' \"$TAP_PROVIDER_TOKEN\" \"$TAP_GATEWAY_URL\" > {}.tmp && mv {0}.tmp {0}",
        file.display()
    );
    let gw = TestGateway::start_with(|c| c.spawn = vec![SpawnSpec::shell(&line)]).await;
    let seen = wait_for_file(&file).await;
    assert_eq!(seen.trim_end(), format!("{} {}", gw.token(), gw.url()));
}

#[tokio::test]
async fn spawned_children_are_stopped_with_the_gateway() {
    let out = tempfile::tempdir().unwrap();
    let pid_file = out.path().join("pid");
    let line = format!(
        "echo $$ > {}.tmp && mv {0}.tmp {0} && exec sleep 600",
        pid_file.display()
    );
    let gw = TestGateway::start_with(|c| c.spawn = vec![SpawnSpec::shell(&line)]).await;
    let pid = wait_for_file(&pid_file).await.trim().to_string();
    let proc_dir = std::path::PathBuf::from(format!("/proc/{pid}"));
    assert!(proc_dir.exists(), "child should be running");
    gw.handle.stop().await.unwrap();
    // kill() waits for the child, so it is gone (reaped) once stop returns.
    assert!(!proc_dir.exists(), "child {pid} still running after stop");
}

/// Whether a process is alive (a zombie waiting for its reaper counts as dead).
fn alive(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/status")) {
        Ok(status) => !status
            .lines()
            .any(|l| l.starts_with("State:") && l.contains('Z')),
        Err(_) => false,
    }
}

#[tokio::test]
async fn processes_a_spawned_command_started_are_stopped_too() {
    let out = tempfile::tempdir().unwrap();
    let pid_file = out.path().join("grandchild");
    // Not `exec`: the shell stays the child and the provider is its grandchild.
    let line = format!(
        "sleep 600 & echo $! > {}.tmp && mv {0}.tmp {0}; wait",
        pid_file.display()
    );
    let gw = TestGateway::start_with(|c| c.spawn = vec![SpawnSpec::shell(&line)]).await;
    let pid = wait_for_file(&pid_file).await.trim().to_string();
    assert!(alive(&pid), "grandchild should be running");
    gw.handle.stop().await.unwrap();
    wait_until(&format!("grandchild {pid} to go with the gateway"), || {
        std::future::ready(!alive(&pid))
    })
    .await;
}

#[tokio::test]
async fn a_command_that_cannot_start_does_not_stop_the_gateway() {
    let gw = TestGateway::start_with(|c| {
        c.spawn = vec![SpawnSpec {
            program: "/nonexistent/provider".into(),
            args: vec![],
            cwd: None,
            env: vec![],
        }]
    })
    .await;
    let (_p, sessions) = gw.authed().await;
    assert_eq!(sessions["type"], "sessions");
}

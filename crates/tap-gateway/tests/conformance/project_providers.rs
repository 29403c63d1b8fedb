//! Spec sections "Project providers" (Authentication and trust levels), "Session binding"
//! (internal row: "bound to the session that started it … gateway stamps it") and the
//! multi-session table (a new session's config providers are bound to it; an ending
//! session's are stopped): the `providers` of the session's `tap.config.json` run with
//! their own short-lived `TAP_PROVIDER_TOKEN`, scoped to that session. Spec decisions
//! P1–P7 (P8, P9 are about the session host and the logs). The spawned process
//! here is a shell line that records its token and waits; the test then speaks for it over
//! a raw socket with that token, as the process itself would.

use crate::common::*;
use std::path::{Path, PathBuf};

struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    /// A project whose one provider `probe` runs the shell line `script(dir)`, `dir`
    /// being the project directory (where the line may leave files for the test).
    fn new(script: impl FnOnce(&Path) -> String) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let config = json!({"providers": [
            {"name": "probe", "command": "sh", "args": ["-c", script(dir.path())]}]});
        std::fs::write(dir.path().join("tap.config.json"), config.to_string()).unwrap();
        Self { dir }
    }

    /// Records `$TAP_PROVIDER_TOKEN` and its pid in files, then waits.
    fn recording() -> Self {
        Self::new(|d| {
            let d = d.display();
            format!(
                r#"echo "$TAP_PROVIDER_TOKEN" >> "{d}/tokens"; echo $$ >> "{d}/pids"; exec sleep 600"#
            )
        })
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn lines(&self, name: &str) -> Vec<String> {
        std::fs::read_to_string(self.path(name))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// Waits until the provider has started `n` times; returns the tokens it got.
    async fn tokens(&self, n: usize) -> Vec<String> {
        wait_until("the project provider started", || async {
            self.lines("tokens").len() >= n
        })
        .await;
        self.lines("tokens")
    }

    async fn register(&self, host: &HostClient) -> SessionInfo {
        host.register_session(SessionRegister {
            label: Some("project".into()),
            cwd: Some(self.dir.path().display().to_string()),
            foreground: true,
            ..Default::default()
        })
        .await
        .unwrap()
    }
}

/// Whether process `pid` is alive (and not a zombie).
fn alive(pid: &str) -> bool {
    match std::fs::read_to_string(Path::new("/proc").join(pid).join("stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

async fn token_provider(gw: &TestGateway, token: &str) -> (Provider, Value) {
    let mut p = connect(gw).await;
    p.send(json!({"type": "auth", "token": token})).await;
    let sessions = p.expect("sessions").await;
    (p, sessions)
}

#[tokio::test]
async fn a_sessions_project_provider_is_spawned_with_its_own_token() {
    let gw = TestGateway::start().await;
    let host = gw.host().await;
    let project = Project::recording();
    project.register(&host).await;
    let tokens = project.tokens(1).await;
    assert!(tokens[0].starts_with("ptk-"), "{tokens:?}");
    assert_ne!(tokens[0], gw.token(), "its own token, not the gateway's");
}

#[tokio::test]
async fn a_project_token_gives_project_trust_in_the_spawning_session() {
    let gw = TestGateway::start().await;
    let host = gw.host().await;
    let project = Project::recording();
    let s = project.register(&host).await;
    let token = project.tokens(1).await.remove(0);
    let (mut p, sessions) = token_provider(&gw, &token).await;
    assert!(sessions.get("token").is_none(), "{sessions}");
    assert!(session_ids(&sessions).contains(&s.id), "{sessions}");
    p.send(hello(
        "probe",
        &s.id,
        json!({"tools": [tool("probe_tool")]}),
    ))
    .await;
    let ack = expect_bound(&mut p, &s.id).await;
    let status = host.status().await.unwrap();
    let me = status
        .providers
        .iter()
        .find(|x| x.id == ack["providerId"])
        .unwrap();
    assert_eq!(me.trust, "project");
}

#[tokio::test]
async fn a_project_token_cannot_reach_another_session() {
    let gw = TestGateway::start().await;
    let host = gw.host().await;
    let other = second_session(&host, "other").await;
    let project = Project::recording();
    let s = project.register(&host).await;
    let token = project.tokens(1).await.remove(0);
    let (mut p, sessions) = token_provider(&gw, &token).await;
    // Only its own session is offered (decision P5; so no other session's cwd either).
    assert_eq!(session_ids(&sessions), vec![s.id.clone()]);
    hello_refused(
        &mut p,
        hello("probe", &other.id, json!({})),
        "INVALID_SESSION",
    )
    .await;
    hello_refused(&mut p, hello("probe", "all", json!({})), "UNAUTHORIZED").await;
    p.send(hello("probe", &s.id, json!({}))).await;
    expect_bound(&mut p, &s.id).await;
}

#[tokio::test]
async fn a_hello_without_session_is_bound_to_the_spawning_session() {
    let gw = TestGateway::start().await;
    let host = gw.host().await;
    let _other = second_session(&host, "other").await;
    let project = Project::recording();
    let s = project.register(&host).await;
    let token = project.tokens(1).await.remove(0);
    let (mut p, _) = token_provider(&gw, &token).await;
    p.send(json!({"type": "hello", "name": "probe", "protocolVersion": 2}))
        .await;
    expect_bound(&mut p, &s.id).await;
}

#[tokio::test]
async fn project_providers_are_stopped_when_their_session_ends() {
    let gw = far_deadline_gateway().await;
    let host = gw.host().await;
    let project = Project::recording();
    let s = project.register(&host).await;
    let token = project.tokens(1).await.remove(0);
    wait_until("the pid is recorded", || async {
        !project.lines("pids").is_empty()
    })
    .await;
    let pid = project.lines("pids").remove(0);
    let (mut p, _) = token_provider(&gw, &token).await;
    p.send(hello("probe", &s.id, json!({}))).await;
    expect_bound(&mut p, &s.id).await;
    // Like every bound provider it gets shutdown.pending first (decision P7)…
    let host = Arc::new(host);
    let end = end_in_background(&host, &s.id);
    expect_shutdown(&mut p, &s.id).await;
    assert!(alive(&pid), "stopped only at teardown");
    p.send(json!({"type": "shutdown.ready", "sessionId": s.id}))
        .await;
    ended(end).await;
    // …then its process is stopped, and its token died with the session.
    wait_until("the provider process is stopped", || async { !alive(&pid) }).await;
    let mut again = connect(&gw).await;
    again.send(json!({"type": "auth", "token": token})).await;
    again.expect_error("AUTH_FAILED").await;
}

#[tokio::test]
async fn a_project_provider_that_exits_cleanly_is_not_restarted() {
    let gw = TestGateway::start().await;
    let host = gw.host().await;
    let project = Project::new(|d| {
        format!(
            r#"echo "$TAP_PROVIDER_TOKEN" >> "{}/tokens"; exit 0"#,
            d.display()
        )
    });
    let s = project.register(&host).await;
    let token = project.tokens(1).await.remove(0);
    // Its token is revoked when the process exits (decision P5)…
    wait_until("the token is revoked", || async {
        let mut p = connect(&gw).await;
        p.send(json!({"type": "auth", "token": token})).await;
        p.recv().await["type"] == "error"
    })
    .await;
    // …and no second run comes (decision P6), while the session lives on.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(project.lines("tokens").len(), 1);
    assert_eq!(session_tool_names(&host, &s.id).await, Vec::<String>::new());
}

#[tokio::test]
async fn a_crashed_project_provider_is_restarted_with_a_fresh_token() {
    let gw = TestGateway::start().await;
    let host = gw.host().await;
    // Fails on its first run, stays up on the second.
    let project = Project::new(|d| {
        let d = d.display();
        format!(
            r#"echo "$TAP_PROVIDER_TOKEN" >> "{d}/tokens"; [ $(wc -l < "{d}/tokens") -ge 2 ] && exec sleep 600; exit 1"#
        )
    });
    project.register(&host).await;
    let tokens = project.tokens(2).await;
    assert_ne!(tokens[0], tokens[1], "each run gets a fresh token");
    // The crashed run's token is dead, the new one works.
    let mut dead = connect(&gw).await;
    dead.send(json!({"type": "auth", "token": tokens[0]})).await;
    dead.expect_error("AUTH_FAILED").await;
    token_provider(&gw, &tokens[1]).await;
}

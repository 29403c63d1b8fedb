//! The Copilot token file (`<COPILOT_HOME>/extensions/tap/.provider-token`) after a gateway
//! crash (issue 43): one file for every gateway of the user, held by one at a time. A
//! gateway killed with SIGKILL cannot remove it; the next gateway, on the same port, takes
//! it over because its holder no longer runs, so a provider that reads only that file
//! authenticates. A live holder keeps it against a second gateway on another port.

use crate::common::*;
use serde_json::Value;
use tap_testkit::Provider;

/// A provider that knows only the Copilot token file: `auth` with what it holds now.
async fn auth_with_copilot_file(gw: &GatewayProcess) -> Value {
    let token = gw.copilot_token();
    let (_provider, sessions) = Provider::authed_at(&gw.url, &token).await;
    sessions
}

/// Another gateway, with a TAP_HOME of its own, on the Copilot home `shared`.
async fn sharing(shared: &std::path::Path) -> GatewayProcess {
    GatewayProcess::start_at(
        tempfile::tempdir().expect("tempdir"),
        "127.0.0.1:0",
        &[],
        |cmd, _| {
            cmd.env("COPILOT_HOME", shared);
        },
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_gateways_copilot_token_file_is_taken_over_on_the_same_port() {
    let first = GatewayProcess::start().await;
    let port = first.addr.clone();
    let stale = first.copilot_token();
    assert_eq!(stale, first.provider_token(), "it holds the file");
    let GatewayProcess { mut proc, dir, .. } = first;
    proc.signal("KILL");
    proc.wait().await;
    drop(proc);

    let second = GatewayProcess::start_at(dir, &port, &[], |_, _| {}).await;
    assert_eq!(second.addr, port, "the same port");
    let now = second.copilot_token();
    assert_ne!(now, stale, "the dead gateway's token is replaced");
    assert_eq!(now, second.provider_token());
    let sessions = auth_with_copilot_file(&second).await;
    assert_eq!(sessions["type"], "sessions", "{sessions}");
    let log = second.proc.log();
    assert!(
        log.contains("took over the Copilot token file from a gateway that is no longer running"),
        "the takeover is logged: {log}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_holder_keeps_the_copilot_token_file_against_another_port() {
    let holder = GatewayProcess::start().await;
    let held = holder.copilot_token();
    let shared = holder.copilot_home.clone();
    let mut other = sharing(&shared).await;
    assert_ne!(other.provider_token(), held);
    assert_eq!(holder.copilot_token(), held, "the live holder keeps it");
    let says = |out: CliOut| out.stdout;
    let mine = says(holder.run(&["status"]).await);
    assert!(mine.contains(": held by this gateway"), "{mine}");
    let mut status = tap_command(&other.home, &shared);
    status.arg("status");
    let theirs = says(run(status).await);
    let expected = format!("held by the gateway at {}", holder.addr);
    assert!(theirs.contains(&expected), "{theirs}");
    let sessions = auth_with_copilot_file(&holder).await;
    assert_eq!(sessions["type"], "sessions", "{sessions}");
    // The other gateway's clean stop leaves the holder's file alone.
    let exit = other.terminate().await;
    assert_eq!(exit.code(), Some(0), "{}", other.proc.log());
    assert_eq!(holder.copilot_token(), held);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tap_status_says_when_the_holder_of_the_copilot_token_file_died() {
    let holder = GatewayProcess::start().await;
    let shared = holder.copilot_home.clone();
    let other = sharing(&shared).await;
    let GatewayProcess { mut proc, .. } = holder;
    proc.signal("KILL");
    proc.wait().await;
    let mut status = tap_command(&other.home, &shared);
    status.arg("status");
    let out = run(status).await;
    assert!(
        out.stdout
            .contains(": STALE: left by a gateway that is no longer running"),
        "{}",
        out.stdout
    );
}

//! What a new user meets in the `tap` output: usage lines that name every way to call a
//! command, tables that line up, words for nothing, and `tap env` for providers started by
//! hand.

use crate::common::{run, tap_bin, GatewayProcess, SessionOpen};
use serde_json::json;
use tokio::process::Command;

#[tokio::test]
async fn pairing_deny_without_an_id_shows_the_all_flag_in_its_usage() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = crate::common::tap_command(&dir.path().join("h"), &dir.path().join("c"));
    cmd.args(["pairing", "deny"]);
    let out = run(cmd).await;
    assert_eq!(out.code(), Some(2), "{out:?}");
    let usage = out
        .stderr
        .lines()
        .find(|l| l.starts_with("Usage:"))
        .unwrap_or_else(|| panic!("no usage line: {out:?}"));
    assert!(usage.contains("--all"), "{usage}");
    assert!(usage.contains("<ID"), "{usage}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_history_says_when_there_is_nothing_and_counts_in_words() {
    let gw = GatewayProcess::start().await;
    let session = SessionOpen::open(&gw, &[]).await;
    let args = ["streams", "history", "--session", session.id.as_str()];
    let history = || gw.run(&args);
    let out = history().await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert_eq!(
        out.stdout.trim(),
        format!("No events in session {}.", session.id),
        "{out:?}"
    );

    let mut p = gw.bound("pusher", &session.id, json!([])).await;
    p.send(json!({"type": "push", "level": "keep", "stream": "s", "event": "one"}))
        .await;
    let out = crate::common::eventually("the pushed event", || async {
        let out = history().await;
        out.stdout.contains("one").then_some(out)
    })
    .await;
    let title = out.stdout.lines().next().unwrap_or_default();
    assert_eq!(
        title,
        format!("1 event in session {}, newest first:", session.id),
        "{out:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_columns_line_up_with_long_session_ids() {
    let gw = GatewayProcess::start().await;
    let long = "a-session-id-much-longer-than-the-usual-ones-0123456789";
    let _short = SessionOpen::open(&gw, &["--id", "s1", "--label", "short"]).await;
    let _long = SessionOpen::open(&gw, &["--id", long, "--label", "a rather long label"]).await;
    let _p1 = gw.bound("p", "s1", json!([])).await;
    let _p2 = gw.bound("another-provider", long, json!([])).await;
    let out = gw.run(&["status"]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    for title in ["Sessions", "Providers"] {
        let rows: Vec<&str> = out
            .stdout
            .split("\n\n")
            .find(|b| b.starts_with(title))
            .unwrap_or_else(|| panic!("no {title}: {}", out.stdout))
            .lines()
            .skip(1)
            .collect();
        assert_eq!(rows.len(), 2, "{title}: {}", out.stdout);
        for column in ["session:", "tools:"] {
            let at: Vec<Option<usize>> = rows.iter().map(|l| l.find(column)).collect();
            assert_eq!(at[0], at[1], "'{column}' misaligned:\n{}", out.stdout);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tap_env_gives_a_shell_the_address_and_the_token_file() {
    let gw = GatewayProcess::start().await;
    let mut cmd = Command::new("sh");
    cmd.args([
        "-c",
        r#"eval "$("$TAP" env)" && printf '%s\n' "$TAP_GATEWAY_URL" && cat "$TAP_PROVIDER_TOKEN_FILE""#,
    ])
    .env("TAP", tap_bin())
    .env("TAP_HOME", &gw.home)
    .env_remove("TAP_GATEWAY_URL")
    .env_remove("TAP_PROVIDER_TOKEN_FILE");
    let out = run(cmd).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines,
        [gw.url.as_str(), gw.provider_token().as_str()],
        "{out:?}"
    );

    // No gateway: a clear failure, nothing to eval.
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = crate::common::tap_command(&dir.path().join("h"), &dir.path().join("c"));
    cmd.arg("env");
    let out = run(cmd).await;
    assert_eq!(out.code(), Some(1), "{out:?}");
    assert_eq!(out.json()["errorCode"], "DISCONNECTED", "{out:?}");
}

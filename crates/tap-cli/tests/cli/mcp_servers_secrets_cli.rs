//! `tap mcp add -e KEY=@secret` and `-H 'Name: @secret'` (docs/mcp-servers.md, "Secrets"):
//! the value is read from standard input, kept out of the file (a `${secret:…}` reference
//! is written instead) and out of every output; `remove` forgets it; a running gateway gives
//! it to the server. `TAP_KEYRING=off`
//! keeps the tests off the machine's keyring: the secrets go to `$TAP_HOME/secrets.json`.

use crate::common::{repo_root, tap_command, GatewayProcess};
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;
use tap_testkit::{test_python, CliOut};
use tokio::io::AsyncWriteExt;

/// `tap ARGS` with `input` on its standard input, the keyring off.
async fn tap_with_input(dir: &Path, args: &[&str], input: &str) -> CliOut {
    let mut cmd = tap_command(&dir.join("home"), &dir.join("copilot"));
    cmd.env("TAP_KEYRING", "off")
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn tap");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).await.unwrap();
    drop(stdin);
    let out = tokio::time::timeout(tap_testkit::CHILD_PATIENCE, child.wait_with_output())
        .await
        .expect("tap finished")
        .unwrap();
    CliOut {
        status: out.status,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_secret_values_are_stored_referenced_never_printed_and_forgotten_on_remove() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let mut printed = Vec::new();

    let add = [
        "mcp",
        "add",
        "-e",
        "TOKEN=@secret",
        "-e",
        "PLAIN=p",
        "-e",
        "OTHER=@secret",
        "gh",
        "--",
        "srv",
    ];
    let out = tap_with_input(dir.path(), &add, "s3cret-one\ns3cret-two\n").await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert!(out.stdout.contains("'gh.TOKEN'"), "{out:?}");
    printed.push(format!("{out:?}"));
    let entry = &read(&home.join("mcp.json"))["mcpServers"]["gh"];
    assert_eq!(entry["env"]["TOKEN"], "${secret:gh.TOKEN}");
    assert_eq!(entry["env"]["OTHER"], "${secret:gh.OTHER}");
    assert_eq!(entry["env"]["PLAIN"], "p");
    let store = read(&home.join("secrets.json"));
    assert_eq!(store["gh.TOKEN"], "s3cret-one");
    assert_eq!(store["gh.OTHER"], "s3cret-two");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(home.join("secrets.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    // A header; then input that ends too early writes nothing.
    let out = tap_with_input(
        dir.path(),
        &[
            "mcp",
            "add",
            "-H",
            "Authorization: @secret",
            "lin",
            "https://h/mcp",
        ],
        "Bearer s3cret-three\n",
    )
    .await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    printed.push(format!("{out:?}"));
    assert_eq!(
        read(&home.join("mcp.json"))["mcpServers"]["lin"]["headers"]["Authorization"],
        "${secret:lin.Authorization}"
    );
    let out = tap_with_input(
        dir.path(),
        &["mcp", "add", "-e", "K=@secret", "short", "--", "srv"],
        "",
    )
    .await;
    assert_eq!(out.code(), Some(1), "{out:?}");
    assert!(read(&home.join("mcp.json"))["mcpServers"]
        .get("short")
        .is_none());

    for args in [&["mcp", "get", "gh"][..], &["mcp", "list", "--json"]] {
        let out = tap_with_input(dir.path(), args, "").await;
        printed.push(format!("{out:?}"));
    }
    // remove forgets the server's own secrets, and only those.
    let out = tap_with_input(dir.path(), &["mcp", "remove", "gh"], "").await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert!(
        out.stdout.contains("Forgot the secret 'gh.TOKEN'"),
        "{out:?}"
    );
    printed.push(format!("{out:?}"));
    let store = read(&home.join("secrets.json"));
    assert!(store.get("gh.TOKEN").is_none() && store.get("gh.OTHER").is_none());
    assert_eq!(store["lin.Authorization"], "Bearer s3cret-three");

    let all = printed.join("\n");
    assert!(!all.contains("s3cret"), "a secret was printed:\n{all}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_gateway_gives_the_stored_secret_to_the_server() {
    let gw = GatewayProcess::start_in_with(tempfile::tempdir().unwrap(), &[], |cmd, _| {
        cmd.env("TAP_KEYRING", "off");
    })
    .await;
    let python = test_python();
    let good = repo_root().join("tests/mcp/servers/good.py");
    let good = good.display().to_string();
    // The server compares TOKEN (the secret) with EXPECTED and says on stderr if they match.
    let script = r#"if [ "$TOKEN" = "$EXPECTED" ]; then echo "token: matches" >&2; else echo "token: differs" >&2; fi; exec "$0" "$@""#;
    let args = [
        "mcp",
        "add",
        "-e",
        "TOKEN=@secret",
        "-e",
        "EXPECTED=s3cret-e2e",
        "good",
        "--",
        "sh",
        "-c",
        script,
        &python,
        &good,
    ];
    let out = tap_with_input(gw.dir.path(), &args, "s3cret-e2e\n").await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert!(out.stdout.contains("good is ready"), "{out:?}");
    let logs = tap_with_input(gw.dir.path(), &["mcp", "logs", "good"], "").await;
    assert!(logs.stdout.contains("token: matches"), "{logs:?}");
    let all = format!("{out:?}\n{logs:?}");
    assert!(!all.contains("s3cret"), "a secret was printed:\n{all}");
}

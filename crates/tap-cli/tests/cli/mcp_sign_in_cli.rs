//! `tap mcp login` / `logout` and `tap mcp remove` against a real `tap gateway` child and a
//! remote server behind OAuth (`tests/mcp/servers/oauth_server.py`: the PyPI `mcp` SDK's
//! authorization server and protected MCP server). `login` prints the page, waits for the
//! browser (here an HTTP client following the page to the gateway's callback, as the
//! authorization server redirects at once) and says where the server landed; `remove`
//! revokes the tokens before dropping the entry. `TAP_KEYRING=off` everywhere: the tokens
//! go to `$TAP_HOME/secrets.json`, never the machine's keyring.

use crate::common::{GatewayProcess, Proc, PATIENCE};
use crate::mcp_servers_cli::{listed_when, live, live_ok};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};

async fn oauth_server() -> (tokio::process::Child, String) {
    let (child, port) = tap_testkit::mcp::fixture_server("oauth_server.py", &[]).await;
    (child, format!("http://127.0.0.1:{port}"))
}

async fn stats(base: &str) -> Value {
    reqwest::get(format!("{base}/admin/stats"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_waits_for_the_browser_and_remove_revokes() {
    let (_as, base) = oauth_server().await;
    let dir = tempfile::tempdir().unwrap();
    let gw = GatewayProcess::start_in_with(dir, &[], |cmd, _| {
        cmd.env("TAP_KEYRING", "off");
    })
    .await;
    let url = format!("{base}/mcp");
    let added = live_ok(&gw, &["mcp", "add", "--oauth-scope", "mcp", "secure", &url]).await;
    assert!(added.stdout.contains("needsSignIn"), "{added:?}");
    let entry = listed_when(&gw, "secure", |s| s["state"] == "needsSignIn").await;
    assert_eq!(
        entry["signIn"]["reason"], "it needs you to sign in",
        "{entry}"
    );

    // `login` prints the page, then waits; the "browser" follows it to the callback.
    let mut cmd = gw.tap();
    cmd.env("TAP_KEYRING", "off")
        .args(["mcp", "login", "secure", "--no-open"]);
    let mut login = Proc::spawn("login", cmd, gw.log_dir(), true);
    let mut lines = BufReader::new(login.child.stdout.take().unwrap()).lines();
    let page = loop {
        let line = tokio::time::timeout(PATIENCE, lines.next_line())
            .await
            .expect("login printed the page in time")
            .unwrap()
            .unwrap_or_else(|| panic!("login ended early: {}", login.log()));
        if line.starts_with("http") {
            break line;
        }
    };
    assert!(
        page.contains("scope=mcp") && page.contains("code_challenge="),
        "{page}"
    );
    let back = reqwest::get(&page).await.unwrap();
    assert!(
        back.url().path().ends_with("/oauth/callback"),
        "{}",
        back.url()
    );
    assert_eq!(back.status(), 200);
    let status = login.wait().await;
    let mut rest = String::new();
    while let Ok(Some(line)) = lines.next_line().await {
        rest.push_str(&line);
        rest.push('\n');
    }
    assert!(status.success(), "{rest} {}", login.log());
    assert!(
        rest.contains("Signed in to MCP server 'secure': ready"),
        "{rest}"
    );
    let entry = listed_when(&gw, "secure", |s| s["state"] == "ready").await;
    assert_eq!(entry["signIn"]["signedIn"], true, "{entry}");

    // Removing it revokes at the authorization server, then forgets.
    assert_eq!(stats(&base).await["revoked"], 0);
    live_ok(&gw, &["mcp", "remove", "secure"]).await;
    assert_eq!(stats(&base).await["revoked"], 1);
    let secrets = std::fs::read_to_string(gw.home.join("secrets.json")).unwrap_or_default();
    for token in stats(&base).await["issued"].as_array().unwrap() {
        assert!(!secrets.contains(token.as_str().unwrap()), "{secrets}");
    }

    // Nothing to sign in to: said, with the contract's code.
    let out = live(&gw, &["mcp", "login", "secure", "--no-open"]).await;
    assert_eq!(out.code(), Some(1), "{out:?}");
    assert!(out.stdout.contains("\"NOT_FOUND\""), "{out:?}");
}

//! A remote server behind OAuth (`tests/mcp/servers/oauth_server.py`: the PyPI `mcp` SDK's
//! own authorization server and protected MCP server): it waits in `needsSignIn` without
//! restarting, a sign-in through the gateway's `/oauth/callback` makes it ready, its token
//! is refreshed without the user when the server refuses it, a revoked refresh token puts it back in `needsSignIn`
//! and its calls fail with `NEEDS_SIGN_IN`, a forged or replayed callback is refused, and
//! signing out revokes the tokens at the authorization server. No token value appears in
//! any file but the 0600 secrets file, nor in `mcpServers.list`.

use super::super::mcp::{client, text_of, wait_listed};
use super::{gateway_with, server_in, server_when};
use serde_json::{json, Value};
use tap_protocol::mcp_servers::McpServerRef;
use tap_testkit::TestGateway;

/// The fixture, its access tokens living `access_ttl` seconds: its base URL.
async fn oauth_server(access_ttl: u32) -> (tokio::process::Child, String) {
    let ttl = access_ttl.to_string();
    let (child, port) =
        tap_testkit::mcp::fixture_server("oauth_server.py", &["--access-ttl", &ttl]).await;
    (child, format!("http://127.0.0.1:{port}"))
}

fn secure() -> McpServerRef {
    McpServerRef {
        name: "secure".into(),
        session_id: None,
    }
}

/// The page the authorization server sends the browser to, followed as a browser would:
/// its redirect lands on the gateway's callback. The callback's URL and its answer.
async fn follow(url: &str) -> (String, u16, String) {
    let response = reqwest::get(url).await.unwrap();
    let landed = response.url().to_string();
    let status = response.status().as_u16();
    (landed, status, response.text().await.unwrap())
}

async fn stats(base: &str) -> Value {
    reqwest::get(format!("{base}/admin/stats"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

async fn refreshes(base: &str) -> u64 {
    stats(base).await["grants"]["refresh_token"]
        .as_u64()
        .unwrap()
}

async fn admin(base: &str, what: &str) {
    let r = reqwest::Client::new()
        .post(format!("{base}/admin/{what}"))
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success());
}

async fn sign_in(gw: &TestGateway) -> String {
    let start = gw
        .handle
        .gateway()
        .mcp_servers_sign_in(&secure())
        .await
        .unwrap();
    assert!(
        start.url.contains("code_challenge_method=S256") && start.url.contains("resource="),
        "{}",
        start.url
    );
    let (landed, status, page) = follow(&start.url).await;
    assert_eq!(status, 200, "{page}");
    assert!(landed.contains("/oauth/callback?"), "{landed}");
    assert!(page.contains("Signed in"), "{page}");
    landed
}

#[tokio::test]
async fn a_server_behind_oauth_is_signed_in_once_refreshed_and_signed_out() {
    let (_as, base) = oauth_server(3600).await;
    let gw = gateway_with(
        json!({"secure": {"type": "http", "url": format!("{base}/mcp")}}),
        |c| c.secrets_keyring = false,
    )
    .await;

    // It asked for a sign-in: it waits, neither failing nor restarting.
    let waiting = server_in(&gw, "secure", "needsSignIn").await;
    assert_eq!(waiting["restarts"], 0, "{waiting}");
    assert_eq!(waiting["failing"], false, "{waiting}");
    assert_eq!(waiting["signIn"]["signedIn"], false, "{waiting}");
    assert_eq!(waiting["signIn"]["reason"], "it needs you to sign in");

    // A forged answer changes nothing.
    let forged = format!(
        "{}/oauth/callback?code=x&state=forged",
        gw.url().replace("ws://", "http://")
    );
    let (_, status, page) = follow(&forged).await;
    assert_eq!(status, 400, "{page}");
    assert!(page.contains("no sign-in is waiting"), "{page}");

    let callback = sign_in(&gw).await;
    let ready = server_in(&gw, "secure", "ready").await;
    assert_eq!(ready["signIn"]["signedIn"], true, "{ready}");
    assert_eq!(ready["signIn"]["scopes"], json!(["mcp"]), "{ready}");
    assert_eq!(ready["signIn"]["issuer"], base, "{ready}");
    // The same answer again is refused: a state is good once.
    let (_, status, page) = follow(&callback).await;
    assert_eq!(status, 400, "{page}");

    let mut c = client(&gw, "work", "legacy").await;
    wait_listed(&mut c, "secure__whoami").await;
    let who = c.call("1", "secure__whoami", json!({})).await;
    assert!(text_of(&who).contains("scopes mcp"), "{who}");
    // The access token expires: the server refuses it, the gateway refreshes it and the
    // call goes through, without the user.
    admin(&base, "expire-access").await;
    let before = refreshes(&base).await;
    let who = c.call("1b", "secure__whoami", json!({})).await;
    assert!(text_of(&who).contains("scopes mcp"), "{who}");
    assert_eq!(refreshes(&base).await, before + 1, "refreshed once");
    let ready = server_in(&gw, "secure", "ready").await;
    assert_eq!(ready["restarts"], 0, "{ready}");

    // The user revokes the app at the authorization server: the next refresh is refused,
    // the call says how to sign in again, and the server waits for it.
    admin(&base, "revoke-refresh").await;
    let refused = c.call("2", "secure__whoami", json!({})).await;
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(
        text_of(&refused).contains("tap mcp login secure"),
        "{refused}"
    );
    let again = server_in(&gw, "secure", "needsSignIn").await;
    assert_eq!(
        again["signIn"]["reason"], "its sign-in expired or was revoked: sign in again",
        "{again}"
    );
    assert_eq!(again["failing"], false, "{again}");

    sign_in(&gw).await;
    server_in(&gw, "secure", "ready").await;
    wait_listed(&mut c, "secure__echo").await;
    let echo = c
        .call("3", "secure__echo", json!({"message": "back"}))
        .await;
    assert_eq!(text_of(&echo), "back", "{echo}");

    // Every token the authorization server issued: in the 0600 secrets file at most.
    let issued: Vec<String> = stats(&base).await["issued"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    assert!(issued.len() >= 4, "{issued:?}");
    let home = gw.dir.path().join("home");
    let list = serde_json::to_string(&gw.handle.gateway().mcp_servers_list()).unwrap();
    for token in &issued {
        assert!(!list.contains(token), "a token in mcpServers.list");
    }
    for file in files(&home) {
        if file.file_name().is_some_and(|n| n == "secrets.json") {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&file).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{}", file.display());
            continue;
        }
        let bytes = std::fs::read(&file).unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes);
        for token in &issued {
            assert!(
                !text.contains(token.as_str()),
                "a token in {}",
                file.display()
            );
        }
    }

    // Signing out revokes at the authorization server and forgets.
    let revoked = stats(&base).await["revoked"].as_u64().unwrap();
    let out = gw
        .handle
        .gateway()
        .mcp_servers_sign_out(&secure())
        .await
        .unwrap();
    assert_eq!(out.sign_in.unwrap().reason.as_deref(), Some("signed out"));
    assert_eq!(stats(&base).await["revoked"].as_u64().unwrap(), revoked + 1);
    let secrets = std::fs::read_to_string(home.join("secrets.json")).unwrap_or_default();
    for token in &issued {
        assert!(!secrets.contains(token.as_str()), "forgotten");
    }
    server_when(&gw, "secure", |s| {
        s["state"] == "needsSignIn" && s["signIn"]["signedIn"] == false
    })
    .await;
}

#[tokio::test]
async fn only_remote_http_servers_are_signed_in_to() {
    let gw = gateway_with(json!({"local": super::fixture("good.py", &[])}), |_| {}).await;
    let gateway = gw.handle.gateway();
    let local = McpServerRef {
        name: "local".into(),
        session_id: None,
    };
    let e = gateway.mcp_servers_sign_in(&local).await.unwrap_err();
    assert!(e.message.contains("local (stdio) server"), "{}", e.message);
    let e = gateway.mcp_servers_sign_in(&secure()).await.unwrap_err();
    assert_eq!(e.code, tap_protocol::ErrorCode::NotFound, "{}", e.message);
    // No sign-in waits: an answer is refused and says so.
    let (_, status, page) = follow(&format!(
        "{}/oauth/callback?code=x",
        gw.url().replace("ws://", "http://")
    ))
    .await;
    assert_eq!(status, 400);
    assert!(page.contains("no &#39;state&#39;"), "{page}");
}

/// Every file under `dir`.
fn files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files(&path));
        } else {
            out.push(path);
        }
    }
    out
}

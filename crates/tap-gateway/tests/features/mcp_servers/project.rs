//! A workspace's own servers (`tap.config.json` `mcpServers`): started for a session opened
//! there, rooted at its directory, seen by that session only, stopped when it ends.

use super::server_when;
use serde_json::{json, Value};
use tap_protocol::host::SessionRegister;
use tap_testkit::mcp::workspace_root;
use tap_testkit::TestGateway;

fn filesystem() -> Value {
    let path = workspace_root()
        .join("tests/mcp/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    // No directory argument: it takes its allowed directories from the client's roots,
    // which the gateway answers with the session's directory.
    json!({"command": "node", "args": [path.display().to_string()]})
}

#[tokio::test]
async fn a_project_server_runs_for_its_session_rooted_at_its_directory() {
    let gw = TestGateway::start().await;
    let project = tempfile::tempdir().unwrap();
    let dir = project.path().canonicalize().unwrap();
    std::fs::write(dir.join("notes.txt"), "inside the project").unwrap();
    std::fs::write(
        dir.join("tap.config.json"),
        json!({"mcpServers": {"fs": filesystem()}}).to_string(),
    )
    .unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "outside").unwrap();

    let host = gw.host().await;
    let register = |label: &str, cwd: Option<String>| SessionRegister {
        request_id: label.into(),
        session_id: None,
        label: Some(label.into()),
        cwd,
        foreground: false,
        ..SessionRegister::default()
    };
    let session = host
        .register_session(register("proj", Some(dir.display().to_string())))
        .await
        .unwrap();
    let other = host
        .register_session(register("elsewhere", None))
        .await
        .unwrap();
    let entry = server_when(&gw, "fs", |s| s["state"] == "ready").await;
    assert_eq!(entry["scope"], "project");
    assert_eq!(entry["sessionId"], session.id.as_str());

    let inside = tap_testkit::eventually("fs__read_text_file in the session", || {
        let host = &host;
        let id = session.id.clone();
        let path = dir.join("notes.txt").display().to_string();
        async move {
            let r = host
                .invoke(&id, "fs__read_text_file", json!({"path": path}))
                .await
                .ok()?;
            r.error.is_none().then_some(r)
        }
    })
    .await;
    assert!(inside
        .data
        .unwrap()
        .to_string()
        .contains("inside the project"));
    let refused = host
        .invoke(
            &session.id,
            "fs__read_text_file",
            json!({"path": outside.path().join("secret.txt").display().to_string()}),
        )
        .await
        .unwrap();
    let text = refused.data.map(|d| d.to_string()).unwrap_or_default();
    assert!(!text.contains("\"outside\""), "{text}");
    assert!(
        text.contains("isError") || refused.error.is_some(),
        "{text}"
    );
    // The other session does not see it.
    let elsewhere = host
        .invoke(&other.id, "fs__list_allowed_directories", json!({}))
        .await
        .unwrap();
    assert!(elsewhere.error.is_some(), "{elsewhere:?}");

    host.end_session(&session.id).await.unwrap();
    tap_testkit::eventually("the project server gone", || {
        let list = gw.handle.gateway().mcp_servers_list();
        async move { list.servers.is_empty().then_some(()) }
    })
    .await;
}

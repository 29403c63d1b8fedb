//! `clients.list`, `clients.connect`, `clients.disconnect` (docs/clients.md, "The panel"):
//! the `tap` entry in MCP clients' files under the gateway's `HOME` (here a temporary one,
//! `GatewayConfig::client_dirs`), written keeping every other byte and removed again to the
//! same bytes; drift and repair; each client's sessions; and bad input refused with nothing
//! written. Only an authenticated control connection reaches these methods.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use tap_testkit::*;

const CURSOR: &str = r#"{
  "mcpServers": {
    "github": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": { "GITHUB_TOKEN": "ghp_x" } }
  }
}
"#;

const VSCODE: &str = r#"// VS Code user MCP servers
{
  "servers": {
    /* a server the user added by hand */
    "fetch": { "type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"] },
  },
  "inputs": [],
}
"#;

pub(super) struct Home {
    pub(super) gw: TestGateway,
    pub(super) user: PathBuf,
    tap: PathBuf,
    /// Holds `user` and `tap`; removed when the test ends.
    _scratch: tempfile::TempDir,
}

impl Home {
    fn cursor(&self) -> PathBuf {
        self.user.join(".cursor/mcp.json")
    }
    fn vscode(&self) -> PathBuf {
        self.user.join(".config/Code/User/mcp.json")
    }
}

pub(super) fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

pub(super) fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

/// A gateway whose clients' files are under a temporary home holding Cursor's and VS Code's
/// files, with `tap_program` a `tap` there (or none).
pub(super) async fn start(with_tap: bool) -> Home {
    let scratch = tempfile::tempdir().unwrap();
    let user = scratch.path().join("user");
    let tap = scratch.path().join("bin/tap");
    write(&tap, "#!/bin/sh\n");
    let (u, t) = (user.clone(), tap.clone());
    let gw = TestGateway::start_with(move |c| {
        c.client_dirs = Some(tap_connect::Dirs {
            home: u.clone(),
            config: u.join(".config"),
            codex: u.join(".codex"),
            copilot: u.join(".copilot"),
            cwd: u.clone(),
        });
        c.tap_program = if with_tap {
            Ok(t)
        } else {
            Err("no tap here".into())
        };
    })
    .await;
    let home = Home {
        gw,
        user,
        tap,
        _scratch: scratch,
    };
    write(&home.cursor(), CURSOR);
    write(&home.vscode(), VSCODE);
    std::fs::write(
        home.gw.dir.path().join("home/profiles.json"),
        r#"{"profiles": {"review": {"servers": ["github"]}}}"#,
    )
    .unwrap();
    home
}

pub(super) fn row<'a>(list: &'a Value, id: &str) -> &'a Value {
    list["clients"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no {id} in {list}"))
}

fn backups(file: &Path) -> Vec<PathBuf> {
    let name = file.file_name().unwrap().to_str().unwrap().to_string();
    std::fs::read_dir(file.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with(&format!("{name}.tap-backup-"))
        })
        .collect()
}

#[tokio::test]
async fn connect_keeps_every_other_byte_and_disconnect_gives_them_back() {
    let h = start(true).await;
    let tap = std::fs::canonicalize(&h.tap).unwrap().display().to_string();
    let (mut c, _) = Control::authed(&h.gw).await;
    let list = c.ok("clients.list", json!({})).await;
    assert_eq!(list["tap"], tap, "{list}");
    assert_eq!(row(&list, "cursor")["state"], "installed", "{list}");
    assert_eq!(row(&list, "vscode")["state"], "installed");
    assert_eq!(row(&list, "zed")["state"], "not-installed");
    assert_eq!(row(&list, "copilot")["editable"], true);
    assert_eq!(row(&list, "cursor")["command"], "tap connect cursor");
    assert_eq!(
        row(&list, "cursor")["file"],
        h.cursor().display().to_string()
    );

    // A dry run: the diff, nothing written.
    let dry = c
        .ok(
            "clients.connect",
            json!({"client": "cursor", "dryRun": true}),
        )
        .await;
    assert_eq!(dry["written"], false);
    let diff = dry["diff"].as_str().unwrap();
    assert!(diff.contains("+    \"tap\": {"), "{diff}");
    assert!(diff.contains(&format!("\"command\": \"{tap}\"")), "{diff}");
    assert_eq!(read(&h.cursor()), CURSOR);
    assert_eq!(dry["client"]["state"], "installed");

    let done = c.ok("clients.connect", json!({"client": "cursor"})).await;
    assert_eq!(done["written"], true, "{done}");
    assert_eq!(done["client"]["state"], "connected", "{done}");
    let on_disk: Value = serde_json::from_str(&read(&h.cursor())).unwrap();
    assert_eq!(
        on_disk["mcpServers"]["tap"],
        json!({"command": tap, "args": ["mcp", "--session", "cursor"]})
    );
    assert_eq!(
        on_disk["mcpServers"]["github"]["env"]["GITHUB_TOKEN"],
        "ghp_x"
    );
    let kept = backups(&h.cursor());
    assert_eq!(kept.len(), 1);
    assert_eq!(read(&kept[0]), CURSOR);
    assert_eq!(done["backup"], kept[0].display().to_string());

    // VS Code's JSONC with a profile: comments and trailing commas stay.
    let done = c
        .ok(
            "clients.connect",
            json!({"client": "vscode", "profile": "review"}),
        )
        .await;
    assert_eq!(done["client"]["profile"], "review", "{done}");
    let text = read(&h.vscode());
    assert!(text.starts_with("// VS Code user MCP servers"), "{text}");
    assert!(
        text.contains("/* a server the user added by hand */"),
        "{text}"
    );
    assert!(text.contains("\"--profile\""), "{text}");

    // Connecting again changes nothing.
    let again = c.ok("clients.connect", json!({"client": "cursor"})).await;
    assert_eq!(
        (again["written"].clone(), again["diff"].clone()),
        (json!(false), json!(""))
    );

    let dry = c
        .ok(
            "clients.disconnect",
            json!({"client": "vscode", "dryRun": true}),
        )
        .await;
    assert!(
        dry["diff"].as_str().unwrap().contains("-    \"tap\""),
        "{dry}"
    );
    assert!(read(&h.vscode()).contains("\"tap\""));
    for (id, file, before) in [
        ("cursor", h.cursor(), CURSOR),
        ("vscode", h.vscode(), VSCODE),
    ] {
        let done = c.ok("clients.disconnect", json!({"client": id})).await;
        assert_eq!(done["written"], true, "{done}");
        assert_eq!(done["client"]["state"], "installed", "{done}");
        assert_eq!(read(&file), before, "{id}");
    }
    let none = c
        .ok("clients.disconnect", json!({"client": "cursor"}))
        .await;
    assert_eq!(none["written"], false);
}

#[tokio::test]
async fn a_drifted_entry_is_shown_and_repaired() {
    let h = start(true).await;
    write(
        &h.cursor(),
        r#"{"mcpServers": {"tap": {"command": "/opt/old/tap", "args": ["mcp", "--session", "cursor"]}, "x": {"command": "y"}}}"#,
    );
    let (mut c, _) = Control::authed(&h.gw).await;
    let list = c.ok("clients.list", json!({})).await;
    let cursor = row(&list, "cursor");
    assert_eq!(cursor["state"], "drifted", "{cursor}");
    assert_eq!(cursor["detail"], "it launches /opt/old/tap, not this tap");
    let done = c.ok("clients.connect", json!({"client": "cursor"})).await;
    assert_eq!(done["client"]["state"], "connected", "{done}");
    let v: Value = serde_json::from_str(&read(&h.cursor())).unwrap();
    assert_eq!(v["mcpServers"]["x"], json!({"command": "y"}));
}

#[tokio::test]
async fn a_clients_sessions_are_its_live_one_then_its_history() {
    let h = start(true).await;
    let host = h.gw.host().await;
    let mut ended = Vec::new();
    for _ in 0..6 {
        let s = tap_testkit::host::second_session(&host, "cursor").await;
        host.end_session(&s.id).await.unwrap();
        ended.push(s.id);
    }
    let live = tap_testkit::host::second_session(&host, "cursor").await;
    let _other = tap_testkit::host::second_session(&host, "zed").await;
    h.gw.handle.gateway().flush_history().await;
    let (mut c, _) = Control::authed(&h.gw).await;
    let list = c.ok("clients.list", json!({})).await;
    let sessions = row(&list, "cursor")["sessions"].as_array().unwrap().clone();
    assert_eq!(sessions.len(), 5, "CLIENT_RECENT_SESSIONS: {sessions:?}");
    assert_eq!(sessions[0]["id"], live.id.as_str());
    assert_eq!(sessions[0]["live"], true);
    assert!(sessions[0]["startedAt"].is_string(), "{sessions:?}");
    // Then the ended ones, newest first.
    let rest: Vec<&str> = sessions[1..]
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    let newest: Vec<&str> = ended.iter().rev().take(4).map(String::as_str).collect();
    assert_eq!(rest, newest);
    assert!(sessions[1..]
        .iter()
        .all(|s| s["live"] == false && s["endedAt"].is_string()));
    assert_eq!(row(&list, "zed")["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(row(&list, "vscode")["sessions"], json!([]));
}

#[tokio::test]
async fn bad_input_is_refused_and_nothing_is_written() {
    let h = start(true).await;
    let (mut c, _) = Control::authed(&h.gw).await;
    let e = c
        .err("clients.connect", json!({"client": "notepad"}), "NOT_FOUND")
        .await;
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("the clients are claude-desktop"),
        "{e}"
    );
    c.err(
        "clients.disconnect",
        json!({"client": "notepad"}),
        "NOT_FOUND",
    )
    .await;
    let e = c
        .err(
            "clients.connect",
            json!({"client": "cursor", "profile": "nope"}),
            "NOT_FOUND",
        )
        .await;
    assert!(e["message"].as_str().unwrap().contains("nope"), "{e}");
    c.err(
        "clients.connect",
        json!({"client": "cursor", "profile": "a b"}),
        "NOT_FOUND",
    )
    .await;
    c.err("clients.connect", json!({}), "INVALID_JSON").await;
    assert_eq!(read(&h.cursor()), CURSOR);

    // A file that does not parse: named by line and column, never quoted, left alone.
    let broken = "{\n  \"mcpServers\": {\"a\": \"s3cret\" oops}\n}\n";
    write(&h.cursor(), broken);
    let e = c
        .err(
            "clients.connect",
            json!({"client": "cursor"}),
            "INVALID_JSON",
        )
        .await;
    let msg = e["message"].as_str().unwrap();
    assert!(
        msg.contains("line 2") && msg.contains("left as it is"),
        "{msg}"
    );
    assert!(!msg.contains("s3cret"), "{msg}");
    c.err(
        "clients.disconnect",
        json!({"client": "cursor"}),
        "INVALID_JSON",
    )
    .await;
    assert_eq!(read(&h.cursor()), broken);
    assert!(backups(&h.cursor()).is_empty());
    let list = c.ok("clients.list", json!({})).await;
    assert_eq!(row(&list, "cursor")["state"], "invalid");

    let codex = h.user.join(".codex/config.toml");
    write(&codex, "model = \"o3\"\n[mcp_servers\n");
    c.err(
        "clients.connect",
        json!({"client": "codex"}),
        "INVALID_TOML",
    )
    .await;
    assert_eq!(read(&codex), "model = \"o3\"\n[mcp_servers\n");
}

#[tokio::test]
async fn without_a_tap_program_connecting_says_why_and_writes_nothing() {
    let h = start(false).await;
    let (mut c, _) = Control::authed(&h.gw).await;
    let list = c.ok("clients.list", json!({})).await;
    assert_eq!(list["tapMissing"], "no tap here", "{list}");
    assert!(list.get("tap").is_none());
    let e = c
        .err("clients.connect", json!({"client": "cursor"}), "NOT_FOUND")
        .await;
    assert_eq!(e["message"], "no tap here");
    assert_eq!(read(&h.cursor()), CURSOR);
}

#[tokio::test]
async fn before_auth_the_methods_are_refused_and_nothing_is_written() {
    let h = start(true).await;
    let mut c = Control::open(&h.gw, None).await.unwrap();
    c.send(json!({"type": "request", "id": "1", "method": "clients.connect", "params": {"client": "cursor"}}))
        .await;
    let seen = c.closed().await;
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0]["error"]["code"], "AUTH_FAILED", "{seen:?}");
    assert_eq!(read(&h.cursor()), CURSOR);
}

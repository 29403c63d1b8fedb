//! `tap connect` beyond one client's round trip: the tap binary really moving, profiles,
//! files that do not exist yet or do not parse, symlinked files, usage errors, and the Copilot
//! CLI (whose connection is `tap install copilot`'s extension).

use crate::connect_support::{parse, tap_path, Home, Syntax};
use serde_json::{json, Value};
use std::path::Path;

/// A copy of the tap under test in another directory (a hard link when it can be: the debug
/// binary is large), as after an upgrade that moved it.
fn moved_tap(h: &Home) -> std::path::PathBuf {
    let dir = h.dir.path().join("moved");
    std::fs::create_dir_all(&dir).unwrap();
    let to = dir.join("tap");
    let from = std::fs::canonicalize(crate::common::tap_bin()).unwrap();
    if std::fs::hard_link(&from, &to).is_err() {
        std::fs::copy(&from, &to).unwrap();
    }
    to
}

#[tokio::test]
async fn connect_notices_the_tap_binary_moving() {
    let h = Home::new();
    let moved = moved_tap(&h);
    let file = h.write(".cursor/mcp.json", "{\n  \"mcpServers\": {}\n}\n");
    let out = h.tap_at(&moved, &["connect", "cursor"]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    let data = parse(Syntax::Json, &std::fs::read_to_string(&file).unwrap());
    assert_eq!(
        data["mcpServers"]["tap"]["command"],
        moved.display().to_string()
    );
    // The moved copy sees itself connected; the tap under test sees another tap's path.
    let mine = h.tap_at(&moved, &["connect", "--json"]).await.json();
    assert_eq!(mine[2]["client"], "cursor");
    assert_eq!(mine[2]["state"], "connected");
    let state = h.state_of("cursor").await;
    assert_eq!(state["state"], "drifted", "{state}");
    assert!(
        state["detail"]
            .as_str()
            .unwrap()
            .contains(&moved.display().to_string()),
        "{state}"
    );
    let doctor = h.tap(&["doctor", "--json"]).await;
    assert_eq!(doctor.code(), Some(1), "{doctor:?}");
    let report = doctor.json();
    assert_eq!(report["ok"], false);
    assert_eq!(report["checks"][0]["check"], "clients");
    assert_eq!(
        report["checks"][0]["findings"][0]["fix"],
        "tap connect cursor"
    );
    assert_eq!(h.tap(&["connect", "cursor"]).await.code(), Some(0));
    assert_eq!(h.tap(&["doctor"]).await.code(), Some(0));
}

#[tokio::test]
async fn connect_with_a_profile_records_it_and_notices_another() {
    let h = Home::new();
    let tap = tap_path();
    let file = h.write(".gemini/settings.json", "{\"theme\": \"Default\"}");
    let out = h.tap(&["connect", "gemini", "--profile", "web"]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        parse(Syntax::Json, &text)["mcpServers"]["tap"],
        json!({"command": tap, "args": ["mcp", "--session", "gemini", "--profile", "web"]})
    );
    let state = h.state_of("gemini").await;
    assert_eq!(
        (state["state"].as_str(), state["profile"].as_str()),
        (Some("connected"), Some("web"))
    );
    // Someone changes the profile behind tap's back: drifted.
    std::fs::write(&file, text.replace("\"web\"", "\"other\"")).unwrap();
    let state = h.state_of("gemini").await;
    assert_eq!(state["state"], "drifted", "{state}");
    assert_eq!(state["detail"], "it has profile other, not profile web");
    // Connecting without a profile is a change too.
    assert_eq!(h.tap(&["connect", "gemini"]).await.code(), Some(0));
    let data = parse(Syntax::Json, &std::fs::read_to_string(&file).unwrap());
    assert_eq!(
        data["mcpServers"]["tap"]["args"],
        json!(["mcp", "--session", "gemini"])
    );
    assert_eq!(h.state_of("gemini").await["state"], "connected");
}

#[tokio::test]
async fn connect_creates_a_missing_file_and_its_directory() {
    let h = Home::new();
    let file = h.file(".config/opencode/opencode.json");
    assert_eq!(h.state_of("opencode").await["state"], "not-installed");
    let dry = h.tap(&["connect", "opencode", "--dry-run"]).await;
    assert_eq!(dry.code(), Some(0), "{dry:?}");
    assert!(dry.stdout.starts_with("--- /dev/null\n"), "{dry:?}");
    assert!(!file.exists());
    let out = h.tap(&["connect", "opencode"]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    let data = parse(Syntax::Json, &std::fs::read_to_string(&file).unwrap());
    assert_eq!(data["mcp"]["tap"]["type"], "local");
    assert!(h.backups(&file).is_empty(), "nothing to back up");
    assert_eq!(h.state_of("opencode").await["state"], "connected");
    assert_eq!(h.tap(&["disconnect", "opencode"]).await.code(), Some(0));
    assert_eq!(
        parse(Syntax::Json, &std::fs::read_to_string(&file).unwrap()),
        json!({})
    );
}

#[tokio::test]
async fn connect_never_writes_a_file_that_does_not_parse() {
    let h = Home::new();
    let bad_json =
        "{\n  \"mcpServers\": {\n    \"a\": { \"env\": { \"K\": \"s3cret\" } }\n  } oops\n}\n";
    let file = h.write(".cursor/mcp.json", bad_json);
    let out = h.tap(&["connect", "cursor"]).await;
    assert_eq!(out.code(), Some(1), "{out:?}");
    let err: Value = out.json();
    assert_eq!(err["errorCode"], "INVALID_JSON");
    let msg = err["error"].as_str().unwrap();
    assert!(
        msg.contains(&file.display().to_string()) && msg.contains("line 4, column"),
        "{msg}"
    );
    assert!(
        !msg.contains("s3cret") && !out.stderr.contains("s3cret"),
        "{out:?}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), bad_json);
    assert!(h.backups(&file).is_empty());
    assert_eq!(h.tap(&["disconnect", "cursor"]).await.code(), Some(1));
    assert_eq!(h.state_of("cursor").await["state"], "invalid");
    assert_eq!(h.tap(&["doctor"]).await.code(), Some(1));

    let bad_toml = "model = \"x\"\n[mcp_servers.a]\ntoken = \"s3cret\" nope\n";
    let file = h.write(".codex/config.toml", bad_toml);
    let out = h.tap(&["connect", "codex"]).await;
    assert_eq!(out.code(), Some(1), "{out:?}");
    let err: Value = out.json();
    assert_eq!(err["errorCode"], "INVALID_TOML");
    let msg = err["error"].as_str().unwrap();
    assert!(
        msg.contains("line 3, column") && !msg.contains("s3cret"),
        "{msg}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), bad_toml);
}

#[tokio::test]
async fn connect_writes_through_a_symlinked_file() {
    let h = Home::new();
    let real = h.write("dotfiles/vscode-mcp.json", "{\n\t\"servers\": {},\n}\n");
    let link = h.file(".config/Code/User/mcp.json");
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&real, &link).unwrap();
    assert_eq!(h.tap(&["connect", "vscode"]).await.code(), Some(0));
    assert!(link.is_symlink(), "the link stays a link");
    let data = parse(Syntax::Jsonc, &std::fs::read_to_string(&real).unwrap());
    assert_eq!(data["servers"]["tap"]["type"], "stdio");
    assert_eq!(h.backups(&real).len(), 1);
    assert_eq!(h.tap(&["disconnect", "vscode"]).await.code(), Some(0));
    assert_eq!(
        std::fs::read_to_string(&real).unwrap(),
        "{\n\t\"servers\": {},\n}\n"
    );
}

#[tokio::test]
async fn connect_usage_errors_exit_2() {
    let h = Home::new();
    for args in [
        &["connect", "notepad"][..],
        &["connect", "--profile", "web"],
        &["connect", "cursor", "--profile", "a b"],
        &["connect", "cursor", "--json"],
        &["disconnect"],
    ] {
        let out = h.tap(args).await;
        assert_eq!(out.code(), Some(2), "{args:?}: {out:?}");
    }
}

#[tokio::test]
async fn connect_copilot_is_tap_install_copilot() {
    let h = Home::new();
    let settings = h.write(".copilot/settings.json", "{\n  \"theme\": \"dark\"\n}\n");
    let extension = h.file(".copilot/extensions/tap/extension.mjs");
    let dry = h.tap(&["connect", "copilot", "--dry-run"]).await;
    assert_eq!(dry.code(), Some(0), "{dry:?}");
    assert!(!extension.exists());
    assert_eq!(h.state_of("copilot").await["state"], "installed");
    let out = h.tap(&["connect", "copilot"]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert!(extension.exists());
    assert_eq!(h.state_of("copilot").await["state"], "connected");
    let alias = h.tap(&["install", "copilot"]).await;
    assert!(alias.stdout.contains("already installed"), "{alias:?}");
    // An extension another tap wrote: drifted until connected again.
    let text = std::fs::read_to_string(&extension).unwrap();
    std::fs::write(&extension, format!("{text}\n// older\n")).unwrap();
    assert_eq!(h.state_of("copilot").await["state"], "drifted");
    assert_eq!(h.tap(&["doctor"]).await.code(), Some(1));
    assert_eq!(h.tap(&["connect", "copilot"]).await.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&extension).unwrap(), text);
    let out = h.tap(&["disconnect", "copilot"]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert!(!extension.exists());
    assert!(!std::fs::read_to_string(&settings)
        .unwrap()
        .contains("\"EXTENSIONS\": true"));
    assert!(Path::new(&settings).exists());
}

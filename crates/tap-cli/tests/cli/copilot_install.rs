//! `tap install copilot` / `tap uninstall copilot` on a throwaway COPILOT_HOME: idempotent,
//! never overwrites a file it did not write, and undoes only its own feature-flag change.
//! The extension itself is tested with the real Copilot CLI in tests/copilot/.

use crate::common::{run, tap_command};
use std::path::Path;

async fn tap(dir: &Path, args: &[&str]) -> crate::common::CliOut {
    let mut cmd = tap_command(&dir.join("tap"), &dir.join("copilot"));
    cmd.args(args);
    run(cmd).await
}

#[tokio::test]
async fn install_twice_then_uninstall_restores_the_settings() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("copilot");
    std::fs::create_dir_all(&home).unwrap();
    let settings = home.join("settings.json");
    std::fs::write(&settings, "{\n  \"theme\": \"dark\"\n}\n").unwrap();
    let first = tap(dir.path(), &["install", "copilot"]).await;
    assert_eq!(first.code(), Some(0), "{first:?}");
    let file = home.join("extensions/tap/extension.mjs");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.starts_with("// tap-gateway copilot extension "),
        "marked"
    );
    let on = std::fs::read_to_string(&settings).unwrap();
    assert_eq!(
        on,
        "{\n  \"enabledFeatureFlags\": { \"EXTENSIONS\": true },\n  \"theme\": \"dark\"\n}\n"
    );
    let second = tap(dir.path(), &["install", "copilot"]).await;
    assert_eq!(second.code(), Some(0), "{second:?}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), on, "unchanged");
    // The user changes a setting while the extension is installed: uninstall keeps it.
    std::fs::write(
        &settings,
        on.replace("\"dark\"\n", "\"dark\",\n  \"model\": \"gpt-x\"\n"),
    )
    .unwrap();
    let out = tap(dir.path(), &["uninstall", "copilot"]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert!(!file.exists());
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        "{\n  \"enabledFeatureFlags\": { \"EXTENSIONS\": false },\n  \"theme\": \"dark\",\n  \"model\": \"gpt-x\"\n}\n",
        "only the flag install turned on changed"
    );
    assert!(!home.join("extensions/tap").exists(), "nothing left behind");
    let again = tap(dir.path(), &["uninstall", "copilot"]).await;
    assert_eq!(again.code(), Some(0), "{again:?}");
}

/// Install finds the feature on already (the flag itself, or `"experimental": true`, which
/// turns on every experimental feature): it changes nothing, and uninstall must not turn off
/// what the user turned on.
#[tokio::test]
async fn uninstall_leaves_the_feature_on_when_it_was_on_before_install() {
    for before in [
        r#"{"enabledFeatureFlags":{"EXTENSIONS":true},"theme":"dark"}"#,
        "{\n  \"experimental\": true,\n  \"theme\": \"dark\"\n}\n",
        "{\n  \"experimental\": true,\n  \"enabledFeatureFlags\": { \"OTHER\": true }\n}",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("copilot");
        std::fs::create_dir_all(&home).unwrap();
        let settings = home.join("settings.json");
        std::fs::write(&settings, before).unwrap();
        let installed = tap(dir.path(), &["install", "copilot"]).await;
        assert_eq!(installed.code(), Some(0), "{installed:?}");
        assert!(
            installed
                .stdout
                .contains("Copilot extensions are already enabled"),
            "{before}: {}",
            installed.stdout
        );
        assert_eq!(std::fs::read_to_string(&settings).unwrap(), before);
        assert!(!home.join("extensions/tap/.tap-install.json").exists());
        let removed = tap(dir.path(), &["uninstall", "copilot"]).await;
        assert_eq!(removed.code(), Some(0), "{removed:?}");
        assert!(
            !removed.stdout.contains("Turned"),
            "{before}: {}",
            removed.stdout
        );
        assert_eq!(
            std::fs::read_to_string(&settings).unwrap(),
            before,
            "uninstall left the settings as the user had them"
        );
        assert!(!home.join("extensions/tap").exists());
    }
}

#[tokio::test]
async fn a_foreign_extension_is_left_alone_unless_forced_with_a_backup() {
    let dir = tempfile::tempdir().unwrap();
    let ext = dir.path().join("copilot/extensions/tap");
    std::fs::create_dir_all(&ext).unwrap();
    std::fs::write(ext.join("extension.mjs"), "// copilot-tap-extension\n").unwrap();
    let refused = tap(dir.path(), &["install", "copilot"]).await;
    assert_eq!(refused.code(), Some(1), "{refused:?}");
    assert_eq!(refused.json()["errorCode"], "CONFLICT");
    let kept = tap(dir.path(), &["uninstall", "copilot"]).await;
    assert_eq!(kept.code(), Some(1), "{kept:?}");
    assert_eq!(
        std::fs::read_to_string(ext.join("extension.mjs")).unwrap(),
        "// copilot-tap-extension\n"
    );
    let forced = tap(dir.path(), &["install", "copilot", "--force"]).await;
    assert_eq!(forced.code(), Some(0), "{forced:?}");
    let backups: Vec<_> = std::fs::read_dir(&ext)
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("extension.mjs.bak-")
        })
        .collect();
    assert_eq!(backups.len(), 1);
    assert_eq!(
        std::fs::read_to_string(backups[0].path()).unwrap(),
        "// copilot-tap-extension\n"
    );
}

#[tokio::test]
async fn check_reports_flag_off_and_no_gateway() {
    let dir = tempfile::tempdir().unwrap();
    let out = tap(dir.path(), &["install", "copilot", "--check"]).await;
    assert_eq!(out.code(), Some(1), "{out:?}");
    assert!(
        out.stdout.contains("FAIL  no extension at"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("FAIL  extensions are off"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("FAIL  gateway not reachable"),
        "{}",
        out.stdout
    );
}

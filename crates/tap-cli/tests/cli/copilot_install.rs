//! `tap install copilot` / `tap uninstall copilot` on a throwaway COPILOT_HOME: idempotent,
//! never overwrites a file it did not write, and undoes only its own feature-flag change.
//! The extension itself is tested with the real Copilot CLI in tests/copilot/.

use crate::common::{run, tap_command, GatewayProcess};
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
        // The record names the tap that installed (for the extension to start a gateway
        // with), and says the flag was not install's doing.
        let record: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(home.join("extensions/tap/.tap-install.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(record["enabledExtensionsFlag"], false, "{record}");
        let tap_path = std::path::PathBuf::from(record["tap"].as_str().unwrap());
        assert_eq!(tap_path.file_name().unwrap(), "tap", "{record}");
        assert!(tap_path.is_file(), "{record}");
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

/// The `--check` line for `text`: `ok    text` or `FAIL  text`.
fn line<'a>(out: &'a crate::common::CliOut, prefix: &str) -> &'a str {
    out.stdout
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line starting {prefix:?} in:\n{}", out.stdout))
}

#[tokio::test]
async fn check_passes_with_the_extension_installed_and_a_live_gateway() {
    let gw = GatewayProcess::start().await;
    let installed = gw.run(&["install", "copilot"]).await;
    assert_eq!(installed.code(), Some(0), "{installed:?}");
    let out = gw.run(&["install", "copilot", "--check"]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    let lines: Vec<_> = out.stdout.lines().collect();
    // The extension, four skills, the instructions, the flag, the gateway.
    assert_eq!(lines.len(), 8, "{}", out.stdout);
    assert!(
        lines.iter().all(|l| l.starts_with("ok    ")),
        "{}",
        out.stdout
    );
    let file = gw.copilot_home.join("extensions/tap/extension.mjs");
    line(
        &out,
        &format!(
            "ok    extension {} (tap {})",
            file.display(),
            env!("CARGO_PKG_VERSION")
        ),
    );
    line(&out, "ok    extensions enabled in");
    assert!(
        line(&out, "ok    gateway reachable at").ends_with(&gw.addr),
        "{}",
        out.stdout
    );
    // The check's own connection leaves no session behind.
    assert_eq!(gw.status().await["sessions"], serde_json::json!([]));
}

#[tokio::test]
async fn check_reports_a_foreign_file_and_unreadable_settings_and_accepts_experimental() {
    let dir = tempfile::tempdir().unwrap();
    let ext = dir.path().join("copilot/extensions/tap");
    std::fs::create_dir_all(&ext).unwrap();
    let file = ext.join("extension.mjs");
    std::fs::write(&file, "// copilot-tap-extension\n").unwrap();
    let settings = dir.path().join("copilot/settings.json");
    std::fs::write(&settings, "{ // a comment\n}\n").unwrap();
    let out = tap(dir.path(), &["install", "copilot", "--check"]).await;
    assert_eq!(out.code(), Some(1), "{out:?}");
    line(
        &out,
        &format!(
            "FAIL  {} was not written by tap: `tap install copilot --force` replaces it",
            file.display()
        ),
    );
    line(
        &out,
        &format!(
            "FAIL  {} cannot be read: it is not valid JSON",
            settings.display()
        ),
    );
    std::fs::write(&settings, r#"{"experimental": true}"#).unwrap();
    let out = tap(dir.path(), &["install", "copilot", "--check"]).await;
    line(
        &out,
        &format!("ok    extensions enabled in {}", settings.display()),
    );
}

#[tokio::test]
async fn check_reports_an_extension_from_another_tap_or_edited() {
    let dir = tempfile::tempdir().unwrap();
    let installed = tap(dir.path(), &["install", "copilot"]).await;
    assert_eq!(installed.code(), Some(0), "{installed:?}");
    let file = dir.path().join("copilot/extensions/tap/extension.mjs");
    let text = std::fs::read_to_string(&file).unwrap();
    let version = env!("CARGO_PKG_VERSION");
    let marker = format!("// tap-gateway copilot extension {version}");
    std::fs::write(
        &file,
        text.replacen(&marker, "// tap-gateway copilot extension 0.0.1", 1),
    )
    .unwrap();
    let out = tap(dir.path(), &["install", "copilot", "--check"]).await;
    assert_eq!(out.code(), Some(1), "{out:?}");
    line(
        &out,
        &format!(
            "FAIL  extension {} is from tap 0.0.1, not this tap {version}: run `tap install copilot`",
            file.display()
        ),
    );
    // This tap's version, other text: not "from tap X, not this tap X".
    std::fs::write(&file, format!("{text}// edited\n")).unwrap();
    let out = tap(dir.path(), &["install", "copilot", "--check"]).await;
    assert_eq!(out.code(), Some(1), "{out:?}");
    line(
        &out,
        &format!(
            "FAIL  extension {} differs from the one this tap {version} installs",
            file.display()
        ),
    );
    // `tap install copilot` puts it right.
    let again = tap(dir.path(), &["install", "copilot"]).await;
    assert!(
        again.stdout.contains("Updated the Tap extension"),
        "{again:?}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
}

#[tokio::test]
async fn check_reports_a_second_copy_and_a_clash_in_the_newest_log_only() {
    let dir = tempfile::tempdir().unwrap();
    let installed = tap(dir.path(), &["install", "copilot"]).await;
    assert_eq!(installed.code(), Some(0), "{installed:?}");
    let home = dir.path().join("copilot");
    let copy = home.join("extensions/tap-old/extension.mjs");
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    std::fs::copy(home.join("extensions/tap/extension.mjs"), &copy).unwrap();
    // Someone else's extension elsewhere is no concern of the check.
    let unrelated = home.join("extensions/other/extension.mjs");
    std::fs::create_dir_all(unrelated.parent().unwrap()).unwrap();
    std::fs::write(&unrelated, "// another extension\n").unwrap();
    let logs = home.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let clash =
        "2026-11-25T10:00:00Z [ERROR] Failed to load extension: External tool name clash: weather";
    std::fs::write(
        logs.join("process-2.log"),
        format!("starting\n{clash}\nstill going\n"),
    )
    .unwrap();
    let out = tap(dir.path(), &["install", "copilot", "--check"]).await;
    assert_eq!(out.code(), Some(1), "{out:?}");
    line(
        &out,
        &format!(
            "FAIL  {} is another copy of the Tap extension: its tools clash",
            copy.display()
        ),
    );
    assert!(
        !out.stdout.contains("other/extension.mjs"),
        "{}",
        out.stdout
    );
    assert!(
        line(&out, "FAIL  Copilot's log reports a tool name clash").ends_with(clash),
        "{}",
        out.stdout
    );
    // A newer run's log without the clash: it was fixed since, nothing to report.
    let older = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(logs.join("process-2.log"))
        .unwrap()
        .set_modified(older)
        .unwrap();
    std::fs::write(logs.join("process-3.log"), "starting\nall fine\n").unwrap();
    std::fs::remove_dir_all(copy.parent().unwrap()).unwrap();
    let out = tap(dir.path(), &["install", "copilot", "--check"]).await;
    assert!(!out.stdout.contains("clash"), "{}", out.stdout);
    // Only the gateway is missing now.
    let failures: Vec<_> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("FAIL"))
        .collect();
    assert_eq!(failures.len(), 1, "{}", out.stdout);
    assert!(failures[0].starts_with("FAIL  gateway not reachable"));
}

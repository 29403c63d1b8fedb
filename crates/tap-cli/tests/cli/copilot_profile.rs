//! `tap connect copilot --profile NAME` (and `tap install copilot --profile NAME`): the profile
//! is written into the extension, `tap connect` shows it, `--check` says whether the gateway
//! knows it, and installing again without `--profile` removes it. That every session then
//! registers with it is tested with the real Copilot CLI (tests/copilot/profile.test.mjs).

use crate::connect_support::Home;

const LINE_OF: &str = "const INSTALLED_PROFILE = ";

/// The extension's profile line.
fn profile_line(h: &Home) -> String {
    let text = std::fs::read_to_string(h.file(".copilot/extensions/tap/extension.mjs")).unwrap();
    let found: Vec<&str> = text.lines().filter(|l| l.starts_with(LINE_OF)).collect();
    assert_eq!(found.len(), 1, "one profile line");
    found[0].to_string()
}

#[tokio::test]
async fn a_profile_is_written_shown_checked_and_removed_by_a_plain_install() {
    let h = Home::new();
    let out = h.tap(&["connect", "copilot", "--profile", "web"]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert!(
        out.stdout
            .contains("every Copilot session uses profile web"),
        "{out:?}"
    );
    assert_eq!(profile_line(&h), r#"const INSTALLED_PROFILE = "web";"#);
    let listed = h.state_of("copilot").await;
    assert_eq!(listed["state"], "connected", "{listed}");
    assert_eq!(listed["profile"], "web", "{listed}");
    let table = h.tap(&["connect"]).await;
    let row = table.stdout.lines().find(|l| l.starts_with("copilot "));
    assert!(
        row.is_some_and(|r| r.ends_with("profile web")),
        "{}",
        table.stdout
    );

    // Again with the same profile: nothing to change; a dry run without it would change it.
    let same = h.tap(&["install", "copilot", "--profile", "web"]).await;
    assert!(same.stdout.contains("already installed"), "{same:?}");
    let dry = h.tap(&["connect", "copilot", "--dry-run"]).await;
    assert_eq!(dry.code(), Some(0), "{dry:?}");
    assert!(dry.stdout.contains("would get the new profile"), "{dry:?}");
    assert_eq!(profile_line(&h), r#"const INSTALLED_PROFILE = "web";"#);

    // `--check`: the gateway refuses a session with a profile it does not know.
    let check = h.tap(&["install", "copilot", "--check"]).await;
    assert_eq!(check.code(), Some(1), "{check:?}");
    assert!(
        check
            .stdout
            .lines()
            .any(|l| l.starts_with("FAIL  the extension's profile web is not in")),
        "{}",
        check.stdout
    );
    std::fs::create_dir_all(h.dir.path().join("tap-home")).unwrap();
    std::fs::write(
        h.dir.path().join("tap-home/profiles.json"),
        r#"{"profiles": {"web": {"hideTools": ["x"]}}}"#,
    )
    .unwrap();
    let check = h.tap(&["install", "copilot", "--check"]).await;
    assert!(
        check
            .stdout
            .lines()
            .any(|l| l.starts_with("ok    profile web (in ")),
        "{}",
        check.stdout
    );

    // Another profile replaces it; installing without one removes it.
    let other = h.tap(&["install", "copilot", "--profile", "other.1"]).await;
    assert_eq!(other.code(), Some(0), "{other:?}");
    assert!(
        other.stdout.contains("Updated the Tap extension"),
        "{other:?}"
    );
    assert_eq!(h.state_of("copilot").await["profile"], "other.1");
    let plain = h.tap(&["connect", "copilot"]).await;
    assert_eq!(plain.code(), Some(0), "{plain:?}");
    assert!(
        plain
            .stdout
            .contains("no profile: Copilot sessions see every tool"),
        "{plain:?}"
    );
    assert_eq!(profile_line(&h), "const INSTALLED_PROFILE = null;");
    let listed = h.state_of("copilot").await;
    assert_eq!(listed["state"], "connected", "{listed}");
    assert!(listed.get("profile").is_none(), "{listed}");
}

#[tokio::test]
async fn a_profile_name_is_checked_like_every_client_s() {
    let h = Home::new();
    for bad in ["a b", "x\"y", ""] {
        let out = h.tap(&["install", "copilot", "--profile", bad]).await;
        assert_eq!(out.code(), Some(2), "{bad:?}: {out:?}");
        let out = h.tap(&["connect", "copilot", "--profile", bad]).await;
        assert_eq!(out.code(), Some(2), "{bad:?}: {out:?}");
    }
    assert!(!h.file(".copilot/extensions/tap/extension.mjs").exists());
    // `--check` installs nothing, so it takes no profile.
    let out = h
        .tap(&["install", "copilot", "--check", "--profile", "web"])
        .await;
    assert_eq!(out.code(), Some(2), "{out:?}");
}

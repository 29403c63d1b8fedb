//! `tap install copilot --check`: the failures that Copilot itself reports only in
//! `<COPILOT_HOME>/logs/` or not at all (extension missing or stale, skills or instructions
//! missing or shadowed, feature flag off, a second copy of the extension whose tools clash, the
//! gateway unreachable).

use super::{owner, settings, skills, Layout, Owner, EXTENSION_DIR, MARKER};
use std::path::Path;
use std::process::ExitCode;

/// What Copilot writes to its log when two extensions offer the same tool name.
const CLASH_TEXT: &str = "External tool name clash";

/// One line per check (`ok` / `FAIL` + what to do); exit 1 when any failed.
pub async fn run(home: &Path, l: &Layout) -> ExitCode {
    let mut failed = 0;
    let mut report = |ok: bool, text: String| {
        println!("{}  {text}", if ok { "ok  " } else { "FAIL" });
        failed += usize::from(!ok);
    };
    match owner(&l.file) {
        Some(Owner::Tap { current: true, version }) => {
            report(true, format!("extension {} (tap {version})", l.file.display()))
        }
        // Same version, other text: edited by hand, or a build of this version with another
        // extension. "from tap X, not this tap X" would read as nonsense.
        Some(Owner::Tap { version, .. }) if version == env!("CARGO_PKG_VERSION") => report(
            false,
            format!(
                "extension {} differs from the one this tap {version} installs (edited?): run `tap install copilot` to replace it",
                l.file.display()
            ),
        ),
        Some(Owner::Tap { version, .. }) => report(
            false,
            format!(
                "extension {} is from tap {version}, not this tap {}: run `tap install copilot`",
                l.file.display(),
                env!("CARGO_PKG_VERSION")
            ),
        ),
        Some(Owner::Other) => report(
            false,
            format!(
                "{} was not written by tap: `tap install copilot --force` replaces it (keeping a backup)",
                l.file.display()
            ),
        ),
        None => report(
            false,
            format!("no extension at {}: run `tap install copilot`", l.file.display()),
        ),
    }
    if let Some(name) = super::installed_profile(&l.file) {
        let file = home.join("profiles.json");
        let known = std::fs::read_to_string(&file)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .is_some_and(|v| v["profiles"].get(&name).is_some());
        let text = if known {
            format!("profile {name} (in {})", file.display())
        } else {
            // The gateway refuses to register a session with an unknown profile, so every
            // Copilot session would run without Tap tools.
            format!(
                "the extension's profile {name} is not in {}: Copilot sessions get no Tap tools until it is (`tap profiles set {name} ...`, or `tap install copilot --profile OTHER`)",
                file.display()
            )
        };
        report(known, text);
    }
    for item in skills::items(l) {
        let what = match item.name {
            "instructions" => "session-start instructions".to_string(),
            skill => format!("skill {skill}"),
        };
        match skills::state(&item) {
            Ok(skills::State::Current) => {
                report(true, format!("{what} {}", item.path.display()))
            }
            Ok(skills::State::Missing) => report(
                false,
                format!(
                    "no {what} at {}: run `tap install copilot`",
                    item.path.display()
                ),
            ),
            Ok(skills::State::Stale) => report(
                false,
                format!(
                    "{what} {} is another tap's or edited: run `tap install copilot` to replace it",
                    item.path.display()
                ),
            ),
            Ok(skills::State::Other) => report(
                false,
                format!(
                    "{} was not written by tap, so the agent gets it instead of Tap's {what}: `tap install copilot --force` replaces it (keeping a backup)",
                    item.path.display()
                ),
            ),
            Err(e) => report(false, e.to_string()),
        }
    }
    let text = std::fs::read_to_string(&l.settings).unwrap_or_default();
    match settings::flag(&text) {
        Ok(settings::Flag::On) | Ok(settings::Flag::OnByExperimental) => report(
            true,
            format!("extensions enabled in {}", l.settings.display()),
        ),
        Ok(settings::Flag::Off) => report(
            false,
            format!(
                "extensions are off in {}: Copilot ignores every extension; run `tap install copilot`",
                l.settings.display()
            ),
        ),
        Err(e) => report(
            false,
            format!("{} cannot be read: {e}", l.settings.display()),
        ),
    }
    for other in other_copies(&l.home) {
        report(
            false,
            format!(
                "{} is another copy of the Tap extension: its tools clash with this one's; remove it",
                other.display()
            ),
        );
    }
    if let Some(line) = last_clash(&l.home.join("logs")) {
        report(
            false,
            format!("Copilot's log reports a tool name clash (another extension offers a tool with the same name): {line}"),
        );
    }
    match reach_gateway(home).await {
        Ok(address) => report(true, format!("gateway reachable at {address}")),
        Err(e) => report(
            false,
            format!(
                "gateway not reachable ({e}): start the desktop app or `tap gateway`; Copilot sessions connect when it comes up"
            ),
        ),
    }
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Extensions other than `extensions/tap` whose file carries the marker (a copy made by hand).
fn other_copies(copilot_home: &Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(copilot_home.join("extensions")) else {
        return Vec::new();
    };
    let mut found: Vec<_> = entries
        .flatten()
        .filter(|e| e.file_name() != EXTENSION_DIR)
        .map(|e| e.path().join("extension.mjs"))
        .filter(|f| {
            std::fs::read_to_string(f)
                .is_ok_and(|t| t.lines().next().unwrap_or("").starts_with(MARKER))
        })
        .collect();
    found.sort();
    found
}

/// The newest log line about a tool name clash, from the newest log file.
fn last_clash(logs: &Path) -> Option<String> {
    let newest = std::fs::read_dir(logs)
        .ok()?
        .flatten()
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max()?
        .1;
    let text = std::fs::read_to_string(newest).ok()?;
    text.lines()
        .rev()
        .find(|l| l.contains(CLASH_TEXT))
        .map(|l| l.trim().chars().take(300).collect())
}

/// Connects as a session host, as the extension does; the gateway's address on success.
async fn reach_gateway(home: &Path) -> Result<String, String> {
    let found = tap_client::Discovery::from_home(home).map_err(|e| e.to_string())?;
    tap_client::HostClient::connect(
        &found.session_url(),
        &found.host_token,
        "tap-install-check",
        None,
    )
    .await
    .map_err(|e| e.to_string())?;
    Ok(found.address)
}

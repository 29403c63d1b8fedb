//! `tap connect`'s list: every client's report from `tap_connect::status`, and the Copilot
//! CLI's, judged by the extension `tap install copilot` writes.

use super::clients::{copilot_file, copilot_home, copilot_installed, COPILOT_TITLE, COPILOT_WORD};
use crate::copilot;
use std::path::Path;
use tap_connect::{json_file, Dirs, Report, State};

/// The Copilot CLI: connected when this tap's extension is installed and Copilot's
/// extensions feature is on.
fn copilot_report(d: &Dirs) -> Report {
    let mut r = Report {
        client: COPILOT_WORD,
        name: COPILOT_TITLE,
        state: State::Installed,
        file: copilot_file(d),
        profile: None,
        detail: None,
    };
    match copilot::owner(&r.file) {
        None => {
            if !copilot_installed(d) {
                r.state = State::NotInstalled;
            }
        }
        Some(copilot::Owner::Other) => {
            r.detail = Some("an extension tap did not write is in the way".into());
        }
        Some(copilot::Owner::Tap { version, current }) => {
            r.profile = copilot::installed_profile(&r.file);
            let settings = copilot_home(d).join("settings.json");
            let text = std::fs::read_to_string(&settings).unwrap_or_default();
            let v = json_file::value(&text).unwrap_or_default();
            let on = v["enabledFeatureFlags"]["EXTENSIONS"] == true || v["experimental"] == true;
            if !current {
                r.state = State::Drifted;
                r.detail = Some(format!("its extension is tap {version}'s"));
            } else if !on {
                r.state = State::Drifted;
                r.detail = Some(format!(
                    "Copilot's extensions feature is off in {}",
                    settings.display()
                ));
            } else {
                r.state = State::Connected;
            }
        }
    }
    r
}

/// Every client's report, the Copilot CLI last.
pub fn all(d: &Dirs, tap: &str, tap_home: &Path) -> Vec<Report> {
    let mut reports = tap_connect::status::all(d, tap, tap_home);
    reports.push(copilot_report(d));
    reports
}

//! Where each client stands (`tap connect` without a client, `tap doctor`, `clients.list`):
//! not installed,
//! installed, connected (its `tap` entry is what `tap connect` would write now), drifted (an
//! entry named `tap` that differs: another `tap` path, another profile), or invalid (its
//! file cannot be read as its format).

use crate::clients::{Client, Dirs, Format};
use crate::{entry, json_file, record, toml_file};
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    NotInstalled,
    Installed,
    Connected,
    Drifted,
    Invalid,
}

impl State {
    pub fn word(self) -> &'static str {
        match self {
            State::NotInstalled => "not installed",
            State::Installed => "installed",
            State::Connected => "connected",
            State::Drifted => "drifted",
            State::Invalid => "invalid",
        }
    }

    /// The user should act: `tap doctor` reports it.
    pub fn needs_user(self) -> bool {
        matches!(self, State::Drifted | State::Invalid)
    }
}

/// One client's line of `tap connect` (`--json`: one element of the array).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub client: &'static str,
    pub name: &'static str,
    pub state: State,
    pub file: PathBuf,
    /// The profile its entry names (connected or drifted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Why it drifted, or why its file cannot be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// The `tap` entry in `text` of `client`'s format (`Ok(None)`: none).
pub fn read_entry(client: Client, text: &str) -> Result<Option<Value>, json_file::Invalid> {
    match client.format() {
        Format::Json { key } => json_file::read(text, key, entry::NAME),
        Format::Toml => toml_file::read(text, entry::NAME),
    }
}

/// Where `client` stands, against the entry the `tap` at `tap` would write (with the
/// profile recorded in `tap_home`).
pub fn report(client: Client, d: &Dirs, tap: &str, tap_home: &Path) -> Report {
    let file = client.file(d);
    let mut r = Report {
        client: client.word(),
        name: client.title(),
        state: State::Installed,
        file: file.clone(),
        profile: None,
        detail: None,
    };
    let text = match std::fs::read_to_string(&file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if !client.installed(d) {
                r.state = State::NotInstalled;
            }
            return r;
        }
        Err(e) => {
            r.state = State::Invalid;
            r.detail = Some(format!("cannot read it: {e}"));
            return r;
        }
    };
    let found = match read_entry(client, &text) {
        Ok(Some(found)) => found,
        Ok(None) => return r,
        Err(e) => {
            r.state = State::Invalid;
            r.detail = Some(e.0);
            return r;
        }
    };
    let profile = entry::profile_of(&found);
    // The profile tap connect last wrote for it; without a record, the entry's own.
    let wanted_profile = match record::get(tap_home, client) {
        Some(recorded) => recorded.profile,
        None => profile.clone(),
    };
    let wanted = entry::value(client, tap, wanted_profile.as_deref());
    r.profile = profile;
    if found == wanted {
        r.state = State::Connected;
    } else {
        r.state = State::Drifted;
        r.detail = Some(entry::drift_reason(&found, &wanted));
    }
    r
}

/// Every client's report.
pub fn all(d: &Dirs, tap: &str, tap_home: &Path) -> Vec<Report> {
    Client::ALL
        .iter()
        .map(|c| report(*c, d, tap, tap_home))
        .collect()
}

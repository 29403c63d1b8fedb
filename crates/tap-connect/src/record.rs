//! `$TAP_HOME/connected-clients.json`: what `tap connect` (or the panel) last did for each
//! client: the profile it wrote (so an entry whose profile was changed behind tap's back
//! shows as drifted), and whether it created the servers object (so a disconnect removes
//! that too when it is left empty, and leaves one the user had).
//!
//! ```json
//! { "clients": { "cursor": { "profile": "web", "createdKey": false }, "zed": { "profile": null, "createdKey": true } } }
//! ```

use crate::clients::Client;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn path(tap_home: &Path) -> PathBuf {
    tap_home.join("connected-clients.json")
}

fn load(tap_home: &Path) -> Value {
    std::fs::read_to_string(path(tap_home))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({ "clients": {} }))
}

/// What tap connect recorded for a client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub profile: Option<String>,
    pub created_key: bool,
}

pub fn get(tap_home: &Path, client: Client) -> Option<Record> {
    let v = load(tap_home);
    let c = v["clients"].get(client.word())?;
    Some(Record {
        profile: c["profile"].as_str().map(str::to_string),
        created_key: c["createdKey"] == true,
    })
}

/// Records `client` as connected (`Some`) or forgets it (`None`). A record that cannot be
/// written costs only these checks, so the caller reports the `Err` as a note, not as a
/// failure of what it did.
pub fn set(tap_home: &Path, client: Client, record: Option<Record>) -> Result<(), String> {
    let mut v = load(tap_home);
    if !v["clients"].is_object() {
        v["clients"] = json!({});
    }
    let clients = v["clients"].as_object_mut().expect("an object");
    match record {
        Some(r) => {
            clients.insert(
                client.word().into(),
                json!({ "profile": r.profile, "createdKey": r.created_key }),
            );
        }
        None => {
            if clients.remove(client.word()).is_none() {
                return Ok(());
            }
        }
    }
    let file = path(tap_home);
    let text = format!("{}\n", serde_json::to_string_pretty(&v).expect("json"));
    let tmp = file.with_extension(format!("tmp-{}", std::process::id()));
    let written = file
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&tmp, text))
        .and_then(|()| std::fs::rename(&tmp, &file));
    written.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot write {}: {e}", file.display())
    })
}

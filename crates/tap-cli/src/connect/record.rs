//! `$TAP_HOME/connected-clients.json`: what `tap connect` last did for each client: the
//! profile it wrote (so an entry whose profile was changed behind tap's back shows as
//! drifted), and whether it created the servers object (so `tap disconnect` removes that
//! too when it is left empty, and leaves one the user had).
//!
//! ```json
//! { "clients": { "cursor": { "profile": "web", "createdKey": false }, "zed": { "profile": null, "createdKey": true } } }
//! ```

use super::clients::Client;
use serde_json::{json, Value};
use std::path::PathBuf;

fn path() -> PathBuf {
    tap_client::default_home().join("connected-clients.json")
}

fn load() -> Value {
    std::fs::read_to_string(path())
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

pub fn get(client: Client) -> Option<Record> {
    let v = load();
    let c = v["clients"].get(client.word())?;
    Some(Record {
        profile: c["profile"].as_str().map(str::to_string),
        created_key: c["createdKey"] == true,
    })
}

/// Records `client` as connected (`Some`) or forgets it (`None`). A record that cannot be
/// written costs only these checks, so it is reported on stderr, not as a failure.
pub fn set(client: Client, record: Option<Record>) {
    let mut v = load();
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
                return;
            }
        }
    }
    let file = path();
    let text = format!("{}\n", serde_json::to_string_pretty(&v).expect("json"));
    let tmp = file.with_extension(format!("tmp-{}", std::process::id()));
    let written = file
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&tmp, text))
        .and_then(|()| std::fs::rename(&tmp, &file));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        eprintln!("tap: note: cannot write {}: {e}", file.display());
    }
}

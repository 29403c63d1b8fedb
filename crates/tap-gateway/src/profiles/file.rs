//! `$TAP_HOME/profiles.json`: the profiles clients name (`tap mcp --profile NAME`, the
//! `tap-profile` header of the HTTP endpoint, `session.register`'s `profile`).
//!
//! ```json
//! { "profiles": {
//!     "review": { "servers": ["github"], "providers": ["ci-status"],
//!                 "hideTools": ["github__delete_*"] },
//!     "docs":   { "tools": ["context7__*", "tap_stream_*"] } } }
//! ```
//!
//! Read when a session is opened with a profile (a small file; an edit applies to the
//! sessions opened after it). A profile with a bad key is refused with a reason naming it,
//! so a typo never widens what a client sees.

use super::profile::Profile;
use crate::limits::{MAX_PROFILES, MAX_PROFILE_NAME_LEN, MAX_PROFILE_PATTERNS};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// The file's name in `TAP_HOME`.
pub const FILE_NAME: &str = "profiles.json";

/// `$TAP_HOME/profiles.json`.
pub fn path(data_dir: &Path) -> PathBuf {
    data_dir.join(FILE_NAME)
}

/// The profile `name`, from `data_dir`'s file. `Err`: why it cannot be used, in words.
pub fn find(data_dir: &Path, name: &str) -> Result<Profile, String> {
    if !valid_name(name) {
        return Err(format!(
            "a profile's name is 1 to {MAX_PROFILE_NAME_LEN} letters, digits, '_', '-' or '.'"
        ));
    }
    let file = path(data_dir);
    let text = match std::fs::read_to_string(&file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!(
                "no profile '{name}': {} does not exist",
                file.display()
            ))
        }
        Err(e) => return Err(format!("cannot read {}: {e}", file.display())),
    };
    // serde_json's errors give a line and column, never the text.
    let doc: Value = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not valid JSON: {e}", file.display()))?;
    let profiles = doc
        .get("profiles")
        .and_then(Value::as_object)
        .ok_or_else(|| format!("{} has no \"profiles\" object", file.display()))?;
    if profiles.len() > MAX_PROFILES {
        return Err(format!(
            "{} holds more than {MAX_PROFILES} profiles",
            file.display()
        ));
    }
    match profiles.get(name) {
        Some(entry) => parse(name, entry)
            .map_err(|why| format!("profile '{name}' in {}: {why}", file.display())),
        None => {
            let mut known: Vec<&str> = profiles.keys().map(String::as_str).collect();
            known.sort_unstable();
            Err(format!(
                "no profile '{name}' in {} (it has: {})",
                file.display(),
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            ))
        }
    }
}

/// Whether `name` can name a profile: 1 to [`MAX_PROFILE_NAME_LEN`] letters, digits, `_`,
/// `-` and `.`.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_PROFILE_NAME_LEN
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

fn parse(name: &str, entry: &Value) -> Result<Profile, String> {
    let obj: &Map<String, Value> = entry
        .as_object()
        .ok_or("it must be an object (servers, providers, tools, hideTools)")?;
    for key in obj.keys() {
        if !matches!(
            key.as_str(),
            "servers" | "providers" | "tools" | "hideTools" | "description"
        ) {
            return Err(format!(
                "unknown key '{key}' (servers, providers, tools, hideTools, description)"
            ));
        }
    }
    let list = |key: &str| -> Result<Vec<String>, String> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => {
                if items.len() > MAX_PROFILE_PATTERNS {
                    return Err(format!(
                        "'{key}' holds more than {MAX_PROFILE_PATTERNS} entries"
                    ));
                }
                items
                    .iter()
                    .map(|v| match v.as_str() {
                        Some(s) if !s.is_empty() && s.len() <= 256 => Ok(s.to_string()),
                        _ => Err(format!(
                            "'{key}' must hold non-empty strings (up to 256 characters)"
                        )),
                    })
                    .collect()
            }
            Some(_) => Err(format!("'{key}' must be an array of strings")),
        }
    };
    Ok(Profile {
        name: name.to_string(),
        servers: list("servers")?,
        providers: list("providers")?,
        tools: list("tools")?,
        hide_tools: list("hideTools")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_profile_and_names_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let why = find(dir.path(), "review").unwrap_err();
        assert!(why.contains("does not exist"), "{why}");
        std::fs::write(
            path(dir.path()),
            r#"{"profiles": {"review": {"servers": ["github"], "hideTools": ["github__delete_*"]},
                            "typo": {"server": ["x"]}, "bad": {"tools": "x"}}}"#,
        )
        .unwrap();
        let review = find(dir.path(), "review").unwrap();
        assert_eq!(review.servers, ["github"]);
        assert_eq!(review.hide_tools, ["github__delete_*"]);
        let why = find(dir.path(), "typo").unwrap_err();
        assert!(why.contains("unknown key 'server'"), "{why}");
        let why = find(dir.path(), "bad").unwrap_err();
        assert!(why.contains("'tools' must be an array"), "{why}");
        let why = find(dir.path(), "nope").unwrap_err();
        assert!(why.contains("it has: bad, review, typo"), "{why}");
        std::fs::write(path(dir.path()), "{ not json").unwrap();
        assert!(find(dir.path(), "review")
            .unwrap_err()
            .contains("not valid JSON"));
        assert!(valid_name("review-2.x") && !valid_name("a b") && !valid_name(""));
    }
}

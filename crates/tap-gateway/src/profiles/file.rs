//! `$TAP_HOME/profiles.json`: the profiles clients name (`tap mcp --profile NAME`, the
//! `tap-profile` header of the HTTP endpoint, `session.register`'s `profile`).
//!
//! ```json
//! { "profiles": {
//!     "review": { "servers": ["github"], "providers": ["ci-status"],
//!                 "hideTools": ["github__delete_*"] },
//!     "docs":   { "tools": ["context7__*", "tap_stream_*"] },
//!     "lean":   { "surface": "search" } } }
//! ```
//!
//! Read when a session is opened with a profile (a small file; an edit applies to the
//! sessions opened after it). A profile with a bad key is refused with a reason naming it,
//! so a typo never widens what a client sees.

use super::profile::{Profile, Surface};
use crate::limits::{MAX_PROFILES, MAX_PROFILE_NAME_LEN, MAX_PROFILE_PATTERNS};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use tap_protocol::profiles::ProfileDef;

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

/// One profile of the file: parsed, or why it cannot be used.
pub type Entry = (String, Result<Profile, String>);

/// Every profile in `data_dir`'s file, each parsed or with why it cannot be used, by
/// name; and problems with the file itself. A missing file is no profiles.
pub fn read_all(data_dir: &Path) -> (Vec<Entry>, Vec<String>) {
    let file = path(data_dir);
    let doc = match read_doc(&file) {
        Ok(Some(doc)) => doc,
        Ok(None) => return (Vec::new(), Vec::new()),
        Err(why) => return (Vec::new(), vec![why]),
    };
    let Some(profiles) = doc.get("profiles").and_then(Value::as_object) else {
        return (
            Vec::new(),
            vec![format!("{} has no \"profiles\" object", file.display())],
        );
    };
    let mut out: Vec<Entry> = profiles
        .iter()
        .take(MAX_PROFILES)
        .map(|(name, entry)| {
            let parsed = if valid_name(name) {
                parse(name, entry)
            } else {
                Err(format!("'{name}' cannot name a profile: 1 to {MAX_PROFILE_NAME_LEN} letters, digits, '_', '-' or '.'"))
            };
            (name.clone(), parsed)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    let warnings = match profiles.len() > MAX_PROFILES {
        true => vec![format!(
            "{} holds more than {MAX_PROFILES} profiles; the rest are ignored",
            file.display()
        )],
        false => Vec::new(),
    };
    (out, warnings)
}

/// Creates or replaces the profile `name` with `def` (checked as it will be read),
/// keeping the file's other profiles and keys. A file that is not valid JSON is not
/// touched.
pub fn set(data_dir: &Path, name: &str, def: &ProfileDef) -> Result<(), String> {
    if !valid_name(name) {
        return Err(format!(
            "a profile's name is 1 to {MAX_PROFILE_NAME_LEN} letters, digits, '_', '-' or '.'"
        ));
    }
    let entry = serde_json::to_value(def).map_err(|e| e.to_string())?;
    parse(name, &entry)?;
    edit(data_dir, |profiles| {
        if !profiles.contains_key(name) && profiles.len() >= MAX_PROFILES {
            return Err(format!("the file already holds {MAX_PROFILES} profiles"));
        }
        profiles.insert(name.to_string(), entry);
        Ok(())
    })
}

/// Removes the profile `name`; `Err` when there is none.
pub fn remove(data_dir: &Path, name: &str) -> Result<(), String> {
    edit(data_dir, |profiles| match profiles.remove(name) {
        Some(_) => Ok(()),
        None => Err(format!("no profile '{name}'")),
    })
}

fn edit(
    data_dir: &Path,
    change: impl FnOnce(&mut Map<String, Value>) -> Result<(), String>,
) -> Result<(), String> {
    let file = path(data_dir);
    let mut doc = read_doc(&file)?.unwrap_or_else(|| serde_json::json!({"profiles": {}}));
    let root = doc
        .as_object_mut()
        .ok_or_else(|| format!("{} is not a JSON object; fix it by hand", file.display()))?;
    let profiles = root
        .entry("profiles")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| {
            format!(
                "\"profiles\" in {} is not an object; fix it by hand",
                file.display()
            )
        })?;
    change(profiles)?;
    let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())? + "\n";
    crate::auth::files::write_private(&file, &text).map_err(|e| e.to_string())
}

fn read_doc(file: &Path) -> Result<Option<Value>, String> {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", file.display())),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| format!("{} is not valid JSON: {e}", file.display()))
}

/// A profile as the wire carries it.
pub fn def_of(p: &Profile) -> ProfileDef {
    ProfileDef {
        servers: p.servers.clone(),
        providers: p.providers.clone(),
        tools: p.tools.clone(),
        hide_tools: p.hide_tools.clone(),
        description: p.description.clone(),
        surface: p.surface,
        approvals_in_client: p.approvals_in_client,
    }
}

fn parse(name: &str, entry: &Value) -> Result<Profile, String> {
    let obj: &Map<String, Value> = entry.as_object().ok_or(
        "it must be an object (servers, providers, tools, hideTools, surface, approvalsInClient)",
    )?;
    for key in obj.keys() {
        if !matches!(
            key.as_str(),
            "servers"
                | "providers"
                | "tools"
                | "hideTools"
                | "description"
                | "surface"
                | "approvalsInClient"
        ) {
            return Err(format!(
                "unknown key '{key}' (servers, providers, tools, hideTools, description, surface, approvalsInClient)"
            ));
        }
    }
    let surface = match obj.get("surface") {
        None | Some(Value::Null) => Surface::Tools,
        Some(Value::String(s)) if s == "tools" => Surface::Tools,
        Some(Value::String(s)) if s == "search" => Surface::Search,
        Some(_) => return Err("'surface' must be \"tools\" or \"search\"".into()),
    };
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
    let description = match obj.get("description") {
        None | Some(Value::Null) => None,
        Some(Value::String(d)) => Some(d.clone()),
        Some(_) => return Err("'description' must be a string".into()),
    };
    let approvals_in_client = match obj.get("approvalsInClient") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("'approvalsInClient' must be true or false".into()),
    };
    Ok(Profile {
        name: name.to_string(),
        approvals_in_client,
        description,
        servers: list("servers")?,
        providers: list("providers")?,
        tools: list("tools")?,
        hide_tools: list("hideTools")?,
        surface,
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
                            "typo": {"server": ["x"]}, "bad": {"tools": "x"},
                            "lean": {"surface": "search", "approvalsInClient": true},
                            "odd": {"surface": "list"}, "asks": {"approvalsInClient": "yes"}}}"#,
        )
        .unwrap();
        let review = find(dir.path(), "review").unwrap();
        assert_eq!(review.servers, ["github"]);
        assert_eq!(review.hide_tools, ["github__delete_*"]);
        let why = find(dir.path(), "typo").unwrap_err();
        assert!(why.contains("unknown key 'server'"), "{why}");
        let why = find(dir.path(), "bad").unwrap_err();
        assert!(why.contains("'tools' must be an array"), "{why}");
        assert_eq!(review.surface, Surface::Tools);
        assert_eq!(find(dir.path(), "lean").unwrap().surface, Surface::Search);
        assert!(find(dir.path(), "lean").unwrap().approvals_in_client);
        assert!(!review.approvals_in_client);
        let why = find(dir.path(), "asks").unwrap_err();
        assert!(why.contains("'approvalsInClient' must be"), "{why}");
        let why = find(dir.path(), "odd").unwrap_err();
        assert!(why.contains("'surface' must be"), "{why}");
        let why = find(dir.path(), "nope").unwrap_err();
        assert!(
            why.contains("it has: asks, bad, lean, odd, review, typo"),
            "{why}"
        );
        std::fs::write(path(dir.path()), "{ not json").unwrap();
        assert!(find(dir.path(), "review")
            .unwrap_err()
            .contains("not valid JSON"));
        assert!(valid_name("review-2.x") && !valid_name("a b") && !valid_name(""));
    }

    #[test]
    fn set_and_remove_keep_the_rest_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            path(dir.path()),
            r#"{"note": "mine", "profiles": {"a": {"tools": ["x*"]}}}"#,
        )
        .unwrap();
        let def = ProfileDef {
            servers: vec!["github".into()],
            hide_tools: vec!["github__delete_*".into()],
            surface: Surface::Search,
            approvals_in_client: true,
            ..ProfileDef::default()
        };
        set(dir.path(), "review", &def).unwrap();
        let (all, warnings) = read_all(dir.path());
        assert!(warnings.is_empty(), "{warnings:?}");
        let names: Vec<_> = all.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["a", "review"]);
        assert_eq!(def_of(all[1].1.as_ref().unwrap()), def);
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(path(dir.path())).unwrap()).unwrap();
        assert_eq!(doc["note"], "mine");
        assert!(set(dir.path(), "bad name", &def).is_err());
        remove(dir.path(), "a").unwrap();
        assert!(remove(dir.path(), "a")
            .unwrap_err()
            .contains("no profile 'a'"));
        assert_eq!(read_all(dir.path()).0.len(), 1);
        std::fs::write(path(dir.path()), "{ not json").unwrap();
        assert!(set(dir.path(), "review", &def)
            .unwrap_err()
            .contains("not valid JSON"));
        assert_eq!(
            std::fs::read_to_string(path(dir.path())).unwrap(),
            "{ not json"
        );
    }
}

//! `$TAP_HOME/pins.json`: the pinned definitions and the providers pinning is off for.
//! Written whole and atomically (mode 0600); read once when the gateway starts.

use super::canon;
use crate::limits::{MAX_PINNED_TEXT_BYTES, MAX_PINS, MAX_PINS_FILE_BYTES};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The file's name in the data directory.
pub(crate) const FILE_NAME: &str = "pins.json";

/// The file's format version.
const VERSION: u32 = 1;

/// The whole file.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct PinsFile {
    #[serde(default)]
    pub version: u32,
    /// Provider names whose tools are offered unpinned.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub disabled: BTreeSet<String>,
    /// Provider name → tool name → its pin.
    #[serde(default)]
    pub pins: BTreeMap<String, BTreeMap<String, Pin>>,
}

/// One pinned definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Pin {
    /// SHA-256 (hex) of the canonical text.
    pub hash: String,
    /// The canonical text (`canon::text`), unless it was over the size limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// RFC 3339.
    pub pinned_at: String,
}

impl PinsFile {
    /// How many definitions are pinned.
    pub fn count(&self) -> usize {
        self.pins.values().map(|m| m.len()).sum()
    }

    /// The bytes of the texts kept.
    pub fn text_bytes(&self) -> usize {
        self.pins
            .values()
            .flat_map(|m| m.values())
            .filter_map(|p| p.text.as_ref().map(|t| t.len()))
            .sum()
    }
}

/// Where the file is.
pub(crate) fn path(data_dir: &Path) -> PathBuf {
    data_dir.join(FILE_NAME)
}

/// Reads the file: none yet is an empty one. Anything else it cannot trust (not JSON,
/// unknown fields, too large, too many pins, a text that does not hash to its pin) is an
/// error saying what and how to recover.
pub(crate) fn load(path: &Path) -> Result<PinsFile, String> {
    let recover = "fix it, or move it aside to start pinning afresh, then restart the gateway";
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(PinsFile::default()),
        Err(e) => {
            return Err(format!(
                "{} cannot be read ({e}); {recover}",
                path.display()
            ))
        }
    };
    // The texts are bounded by MAX_PINS_FILE_BYTES; hashes, names and JSON around them
    // add at most about as much again.
    if bytes.len() > 2 * MAX_PINS_FILE_BYTES {
        return Err(format!(
            "{} is {} bytes, over the {} a pins file may hold; {recover}",
            path.display(),
            bytes.len(),
            2 * MAX_PINS_FILE_BYTES
        ));
    }
    let file: PinsFile = serde_json::from_slice(&bytes)
        .map_err(|e| format!("{} is not a pins file ({e}); {recover}", path.display()))?;
    if file.version != VERSION {
        return Err(format!(
            "{} has version {}, this gateway reads version {VERSION}; {recover}",
            path.display(),
            file.version
        ));
    }
    if file.count() > MAX_PINS {
        return Err(format!(
            "{} pins {} definitions, over the limit of {MAX_PINS}; {recover}",
            path.display(),
            file.count()
        ));
    }
    for (provider, tools) in &file.pins {
        for (tool, pin) in tools {
            let bad_text = pin
                .text
                .as_ref()
                .is_some_and(|t| t.len() > MAX_PINNED_TEXT_BYTES || canon::hash(t) != pin.hash);
            if pin.hash.len() != 64 || bad_text {
                return Err(format!(
                    "{}: the pin of '{tool}' of '{provider}' is damaged (its text does not hash to it); {recover}",
                    path.display()
                ));
            }
        }
    }
    Ok(file)
}

/// Writes `file` whole, atomically, readable by the user alone.
pub(crate) fn save(path: &Path, file: &PinsFile) -> Result<(), String> {
    let mut file = file.clone();
    file.version = VERSION;
    let mut text = serde_json::to_string_pretty(&file).map_err(|e| e.to_string())?;
    text.push('\n');
    crate::auth::files::write_private(path, &text).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_is_empty_and_a_damaged_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = path(dir.path());
        assert_eq!(load(&p).unwrap().count(), 0);
        std::fs::write(&p, "{not json").unwrap();
        assert!(load(&p).unwrap_err().contains("not a pins file"));
        let text = "{}".to_string();
        let mut f = PinsFile::default();
        f.pins.entry("p".into()).or_default().insert(
            "t".into(),
            Pin {
                hash: canon::hash("other"),
                text: Some(text),
                pinned_at: "2026-01-01T00:00:00Z".into(),
            },
        );
        save(&p, &f).unwrap();
        assert!(load(&p).unwrap_err().contains("damaged"));
        f.pins.get_mut("p").unwrap().get_mut("t").unwrap().hash = canon::hash("{}");
        save(&p, &f).unwrap();
        assert_eq!(load(&p).unwrap().count(), 1);
    }
}

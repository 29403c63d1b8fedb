//! Named secrets: values the user stores once (an MCP server's API key, `tap mcp add -e
//! KEY=@secret`) and configuration files refer to by name (`${secret:NAME}`), so the value
//! is never written in them.
//!
//! Like the control token, a secret goes to the OS keyring when there is one and it works
//! (account `secret:<TAP_HOME>:<NAME>`, so two `TAP_HOME`s never share one); otherwise to
//! `$TAP_HOME/secrets.json` (mode 0600, `{"NAME": "value"}`). Reading looks in the keyring
//! first, then in the file; forgetting removes it from both.

use crate::backend::{SecretBackend, SecretError};
use crate::KEYRING_ENV;
use serde_json::{Map, Value};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The fallback file's name under `$TAP_HOME`.
pub const SECRETS_FILE: &str = "secrets.json";

/// The longest secret name.
pub const MAX_SECRET_NAME_LEN: usize = 128;

/// `$TAP_HOME/secrets.json`.
pub fn secrets_file(home: &Path) -> PathBuf {
    home.join(SECRETS_FILE)
}

/// The keyring account of the secret `name` of the gateway using `home`.
pub fn secret_account(home: &Path, name: &str) -> String {
    let home = std::path::absolute(home).unwrap_or_else(|_| home.to_path_buf());
    format!("secret:{}:{name}", home.display())
}

/// Whether `name` can name a secret: 1 to 128 letters, digits, `_`, `-` and `.`.
pub fn valid_secret_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_SECRET_NAME_LEN
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// Where [`store_secret`] put a secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretPlace {
    /// In the OS keyring, and read back from it.
    Keyring,
    /// In `$TAP_HOME/secrets.json` (0600).
    File {
        /// Why the keyring was not used (no secret in it).
        reason: String,
    },
}

fn check_name(name: &str) -> Result<(), SecretError> {
    if valid_secret_name(name) {
        Ok(())
    } else {
        Err(SecretError::new(format!(
            "a secret's name must be 1 to {MAX_SECRET_NAME_LEN} letters, digits, '_', '-' or '.'"
        )))
    }
}

/// Stores `value` as the secret `name` of `home`, replacing what was there: in the keyring
/// when `keyring_allowed` and it works (then any copy in the file is removed), else in the
/// file.
pub fn store_secret(
    backend: &dyn SecretBackend,
    home: &Path,
    name: &str,
    value: &str,
    keyring_allowed: bool,
) -> Result<SecretPlace, SecretError> {
    check_name(name)?;
    let reason = if keyring_allowed {
        let account = secret_account(home, name);
        match backend
            .set(&account, value)
            .and_then(|()| backend.get(&account))
        {
            Ok(Some(back)) if back == value => {
                edit_file(home, |map| map.remove(name).is_some())?;
                return Ok(SecretPlace::Keyring);
            }
            Ok(_) => {
                let _ = backend.delete(&account);
                "the keyring did not return the secret it was given".to_string()
            }
            Err(e) => e.to_string(),
        }
    } else {
        format!("{KEYRING_ENV}=off")
    };
    edit_file(home, |map| {
        map.insert(name.to_string(), Value::from(value));
        true
    })?;
    Ok(SecretPlace::File { reason })
}

/// The secret `name` of `home`: from the keyring (when allowed), else from the file.
/// `Ok(None)`: in neither. A keyring that cannot be read is an error only when the file
/// does not have the secret either.
pub fn read_secret(
    backend: &dyn SecretBackend,
    home: &Path,
    name: &str,
    keyring_allowed: bool,
) -> Result<Option<String>, SecretError> {
    check_name(name)?;
    let keyring_error = if keyring_allowed {
        match backend.get(&secret_account(home, name)) {
            Ok(Some(value)) => return Ok(Some(value)),
            Ok(None) => None,
            Err(e) => Some(e),
        }
    } else {
        None
    };
    let from_file = read_file(home)?
        .get(name)
        .and_then(Value::as_str)
        .map(str::to_string);
    match (from_file, keyring_error) {
        (Some(value), _) => Ok(Some(value)),
        (None, Some(e)) => Err(SecretError::new(format!(
            "it is not in {} and the keyring could not be read: {e}",
            secrets_file(home).display()
        ))),
        (None, None) => Ok(None),
    }
}

/// Removes the secret `name` of `home` from the keyring (when allowed) and the file; a
/// missing one is fine.
pub fn forget_secret(
    backend: &dyn SecretBackend,
    home: &Path,
    name: &str,
    keyring_allowed: bool,
) -> Result<(), SecretError> {
    check_name(name)?;
    let keyring = if keyring_allowed {
        backend.delete(&secret_account(home, name))
    } else {
        Ok(())
    };
    edit_file(home, |map| map.remove(name).is_some())?;
    keyring
}

fn read_file(home: &Path) -> Result<Map<String, Value>, SecretError> {
    let path = secrets_file(home);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(e) => {
            return Err(SecretError::new(format!(
                "cannot read {}: {e}",
                path.display()
            )))
        }
    };
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    // serde_json's errors give a line and column, never the text.
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(SecretError::new(format!(
            "{} is not a JSON object",
            path.display()
        ))),
        Err(e) => Err(SecretError::new(format!(
            "{} is not valid JSON ({e})",
            path.display()
        ))),
    }
}

/// Reads the file, lets `change` edit it, and writes it back (0600, replaced in one step)
/// when `change` says it changed something.
fn edit_file(
    home: &Path,
    change: impl FnOnce(&mut Map<String, Value>) -> bool,
) -> Result<(), SecretError> {
    let mut map = read_file(home)?;
    if !change(&mut map) {
        return Ok(());
    }
    let path = secrets_file(home);
    let mut bytes = serde_json::to_vec_pretty(&Value::Object(map)).expect("a JSON object");
    bytes.push(b'\n');
    write_private(&path, &bytes)
        .map_err(|e| SecretError::new(format!("cannot write {}: {e}", path.display())))
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    if !dir.exists() {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(dir)?;
    }
    let tmp = dir.join(format!(".{SECRETS_FILE}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&tmp)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemoryBackend;

    #[test]
    fn a_working_keyring_holds_the_secret_and_the_file_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let backend = MemoryBackend::new();
        // A copy left in the file by an earlier run without a keyring goes.
        store_secret(&backend, dir.path(), "gh.TOKEN", "old", false).unwrap();
        let placed = store_secret(&backend, dir.path(), "gh.TOKEN", "s3cret", true).unwrap();
        assert_eq!(placed, SecretPlace::Keyring);
        assert_eq!(
            backend.stored(&secret_account(dir.path(), "gh.TOKEN")),
            Some("s3cret".into())
        );
        let file = std::fs::read_to_string(secrets_file(dir.path())).unwrap();
        assert!(!file.contains("old"), "{file}");
        assert_eq!(
            read_secret(&backend, dir.path(), "gh.TOKEN", true).unwrap(),
            Some("s3cret".into())
        );
        forget_secret(&backend, dir.path(), "gh.TOKEN", true).unwrap();
        assert_eq!(
            read_secret(&backend, dir.path(), "gh.TOKEN", true).unwrap(),
            None
        );
    }

    #[test]
    fn without_a_keyring_the_secret_is_in_a_private_file() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let backend = MemoryBackend::refusing("locked");
        let placed = store_secret(&backend, &home, "a.B", "v1", true).unwrap();
        assert_eq!(
            placed,
            SecretPlace::File {
                reason: "locked".into()
            }
        );
        store_secret(&backend, &home, "c", "v2", false).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(secrets_file(&home))
                .unwrap()
                .permissions();
            assert_eq!(mode.mode() & 0o777, 0o600);
        }
        assert_eq!(
            read_secret(&backend, &home, "a.B", false).unwrap(),
            Some("v1".into())
        );
        forget_secret(&backend, &home, "a.B", false).unwrap();
        assert_eq!(read_secret(&backend, &home, "a.B", true).unwrap(), None);
        assert_eq!(
            read_secret(&backend, &home, "c", true).unwrap(),
            Some("v2".into())
        );
    }

    #[test]
    fn bad_names_are_refused_without_the_value() {
        let dir = tempfile::tempdir().unwrap();
        let e = store_secret(&MemoryBackend::new(), dir.path(), "a b", "v9x", false).unwrap_err();
        assert!(!e.to_string().contains("v9x"));
        assert!(!valid_secret_name(""));
        assert!(valid_secret_name("github.GITHUB_TOKEN"));
    }
}

//! How a client's file is changed: a timestamped backup beside it first, then a temporary
//! file renamed over it (the client never reads half a file), with the file's mode kept.
//! A dry run prints the change as a unified diff instead.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The file to write: a symlink's target (dotfile managers link these files), else `path`.
pub fn target(path: &Path) -> PathBuf {
    if path.is_symlink() {
        std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
    } else {
        path.to_path_buf()
    }
}

/// The file's text, `None` when it does not exist.
pub fn read(path: &Path) -> std::io::Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// `<file>.tap-backup-YYYYMMDDTHHMMSS` (UTC), with `-N` added when that exists already.
pub fn backup_path(file: &Path) -> PathBuf {
    let stamp: String = humantime::format_rfc3339_seconds(std::time::SystemTime::now())
        .to_string()
        .chars()
        .filter(|c| !matches!(c, '-' | ':' | 'Z'))
        .collect();
    first_free(format!("{}.tap-backup-{stamp}", file.display()))
}

/// `base`, or `base-1`, `base-2`, … : the first that does not exist (a backup never
/// replaces an earlier one).
pub fn first_free(base: String) -> PathBuf {
    let mut path = PathBuf::from(&base);
    let mut n = 1;
    while path.exists() {
        path = PathBuf::from(format!("{base}-{n}"));
        n += 1;
    }
    path
}

/// Replaces `path`'s content with `text`: a backup of the old content beside it first (when
/// there was a file; returned), the directory created when missing, the mode kept (0600 for
/// a new file: these files hold other servers' secrets).
pub fn replace(path: &Path, old: Option<&str>, text: &str) -> std::io::Result<Option<PathBuf>> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mode = match path.metadata() {
        Ok(m) => m.permissions().mode() & 0o7777,
        Err(_) => 0o600,
    };
    let backup = match old {
        Some(old) => {
            let b = backup_path(path);
            write_new(&b, old, mode)?;
            Some(b)
        }
        None => None,
    };
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = dir.join(format!(".{name}.tap-tmp-{}", std::process::id()));
    let result = write_new(&tmp, text, mode).and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map(|()| backup)
}

/// Writes a file that must not exist yet, with `mode`, and syncs it.
fn write_new(path: &Path, text: &str, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let _ = std::fs::remove_file(path); // a temporary file left by a killed run
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)?;
    // `mode` passes through the umask on create; set it exactly.
    f.set_permissions(std::fs::Permissions::from_mode(mode))?;
    f.write_all(text.as_bytes())?;
    f.sync_all()
}

/// The change from `old` (`None`: no file) to `new` as a unified diff of `path`.
pub fn diff(path: &Path, old: Option<&str>, new: &str) -> String {
    let shown = path.display().to_string();
    let before = if old.is_some() {
        shown.clone()
    } else {
        "/dev/null".into()
    };
    similar::TextDiff::from_lines(old.unwrap_or(""), new)
        .unified_diff()
        .context_radius(3)
        .header(&before, &shown)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_keeps_mode_and_a_backup() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a/b.json");
        assert_eq!(replace(&file, None, "{}\n").unwrap(), None);
        assert_eq!(file.metadata().unwrap().permissions().mode() & 0o777, 0o600);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
        let backup = replace(&file, Some("{}\n"), "{\"a\":1}\n")
            .unwrap()
            .unwrap();
        assert_eq!(std::fs::read_to_string(&backup).unwrap(), "{}\n");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "{\"a\":1}\n");
        assert_eq!(file.metadata().unwrap().permissions().mode() & 0o777, 0o640);
        let name = backup.file_name().unwrap().to_str().unwrap().to_string();
        let stamp = name.strip_prefix("b.json.tap-backup-").unwrap();
        assert_eq!(stamp.len(), 15, "{stamp}");
        assert_eq!(&stamp[8..9], "T");
        assert_ne!(backup_path(&file), backup);
        let d = diff(&file, Some("a\nb\n"), "a\nc\n");
        assert!(d.contains("-b\n+c\n"), "{d}");
    }
}

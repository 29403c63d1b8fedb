//! File results (spec: "Payload limits"): a `tool.result` whose `file` names a file the
//! provider wrote into its `persistDir` instead of sending the bytes.
//!
//! The gateway reads it at once (the spec: "Gateway must read it before TTL expires"): the
//! file must resolve (symlinks followed) to a regular file inside the provider's own
//! `persistDir`, have the declared `size`, and be at most [`MAX_FILE_RESULT_BYTES`]; it is
//! then copied to `<data dir>/files/` (mode 0600), the caller gets
//! `{"file": {"path", "mimeType", "size", "expiresAt"}}` naming the copy, and the copy is
//! deleted `ttl` seconds later (or when the gateway stops). The provider may delete its own
//! file as soon as it likes after that.

use crate::request::CallError;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};
use tap_protocol::limits::{MAX_FILE_RESULT_BYTES, MAX_FILE_RESULT_TTL_SECS};
use tap_protocol::provider::FileRef;
use tap_protocol::{ErrorCode, Json};

/// A file result the gateway took over.
#[derive(Debug)]
pub(crate) struct Copied {
    /// What the caller gets as the result's `data`.
    pub data: Json,
    /// The gateway's copy, to delete after `ttl`.
    pub copy: PathBuf,
    pub ttl: Duration,
}

fn refuse(code: ErrorCode, message: impl Into<String>) -> CallError {
    CallError::new(code, message)
}

/// Checks `file` against `persist_dir` (`None`: the provider has none, e.g. a paired
/// browser) and copies it into `<data_dir>/files/`. Blocking: run off the async threads.
pub(crate) fn take(
    data_dir: &Path,
    persist_dir: Option<&Path>,
    call_id: &str,
    file: &FileRef,
) -> Result<Copied, CallError> {
    let Some(persist_dir) = persist_dir else {
        return Err(refuse(
            ErrorCode::Unauthorized,
            "File results need a persistDir; only local (project and internal) providers have one",
        ));
    };
    if file.ttl == 0 || file.ttl > MAX_FILE_RESULT_TTL_SECS {
        return Err(refuse(
            ErrorCode::InvalidJson,
            format!("'file.ttl' must be 1 to {MAX_FILE_RESULT_TTL_SECS} seconds"),
        ));
    }
    let path = Path::new(&file.path);
    if !path.is_absolute() {
        return Err(refuse(
            ErrorCode::InvalidJson,
            "'file.path' must be an absolute path",
        ));
    }
    // Resolved, so neither `..` nor a symlink can lead outside.
    let outside = || {
        refuse(
            ErrorCode::Unauthorized,
            format!("'{}' is not inside this provider's persistDir", file.path),
        )
    };
    let root = persist_dir.canonicalize().map_err(|_| outside())?;
    let real = match path.canonicalize() {
        Ok(p) => p,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            // Say "outside" rather than "missing" for paths outside: no probing of the disk.
            return Err(if lexically_inside(path, persist_dir) {
                refuse(
                    ErrorCode::NotFound,
                    format!("File result '{}' does not exist", file.path),
                )
            } else {
                outside()
            });
        }
        Err(_) => return Err(outside()),
    };
    if !real.starts_with(&root) || real == root {
        return Err(outside());
    }
    let meta = fs::metadata(&real).map_err(|e| refuse(ErrorCode::NotFound, e.to_string()))?;
    if !meta.is_file() {
        return Err(refuse(
            ErrorCode::InvalidJson,
            format!("'{}' is not a regular file", file.path),
        ));
    }
    if meta.len() > MAX_FILE_RESULT_BYTES {
        return Err(refuse(
            ErrorCode::PayloadTooLarge,
            format!(
                "The file is {} bytes; file results are limited to {MAX_FILE_RESULT_BYTES}",
                meta.len()
            ),
        ));
    }
    if meta.len() != file.size {
        return Err(refuse(
            ErrorCode::InvalidJson,
            format!(
                "'file.size' is {} but the file has {} bytes",
                file.size,
                meta.len()
            ),
        ));
    }
    let dir = data_dir.join("files");
    create_private_dir(&dir).map_err(internal)?;
    sweep(&dir);
    let name = real
        .file_name()
        .map(|n| crate::state::identity::sanitize(&n.to_string_lossy()))
        .unwrap_or_default();
    let copy = dir.join(format!("{call_id}-{name}"));
    copy_private(&real, &copy, file.size).map_err(internal)?;
    let ttl = Duration::from_secs(file.ttl);
    let data = serde_json::json!({ "file": {
        "path": copy.display().to_string(),
        "mimeType": file.mime_type,
        "size": file.size,
        "expiresAt": crate::time::rfc3339(SystemTime::now() + ttl),
    }});
    Ok(Copied { data, copy, ttl })
}

fn internal(e: io::Error) -> CallError {
    refuse(
        ErrorCode::Internal,
        format!("The gateway could not copy the file result: {e}"),
    )
}

/// Whether `path` is inside `dir` by its components alone (`..` counted).
fn lexically_inside(path: &Path, dir: &Path) -> bool {
    let mut depth: Vec<std::path::Component> = Vec::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => {
                depth.pop();
            }
            std::path::Component::CurDir => {}
            other => depth.push(other),
        }
    }
    let normal: PathBuf = depth.iter().collect();
    normal.starts_with(dir) && normal != dir
}

fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut b = fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(dir)
}

/// Copies exactly `size` bytes into a new file only the user can read.
fn copy_private(from: &Path, to: &Path, size: u64) -> io::Result<()> {
    let mut opts = fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut out = opts.open(to)?;
    let copied = io::copy(&mut io::Read::take(fs::File::open(from)?, size), &mut out);
    match copied {
        Ok(n) if n == size => Ok(()),
        other => {
            let _ = fs::remove_file(to);
            Err(other.err().unwrap_or_else(|| {
                io::Error::new(io::ErrorKind::UnexpectedEof, "the file shrank while copied")
            }))
        }
    }
}

/// Removes copies older than the longest ttl (left by a gateway that did not stop cleanly).
fn sweep(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let max_age = Duration::from_secs(MAX_FILE_RESULT_TTL_SECS);
    for e in entries.flatten() {
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > max_age);
        if old {
            let _ = fs::remove_file(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_containment_counts_dot_dot() {
        let dir = Path::new("/d/providers/p");
        assert!(lexically_inside(Path::new("/d/providers/p/a.png"), dir));
        assert!(lexically_inside(
            Path::new("/d/providers/p/x/../a.png"),
            dir
        ));
        assert!(!lexically_inside(
            Path::new("/d/providers/p/../q/a.png"),
            dir
        ));
        assert!(!lexically_inside(Path::new("/d/providers/p"), dir));
    }
}

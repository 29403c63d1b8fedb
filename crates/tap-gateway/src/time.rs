use std::path::Path;
use std::time::SystemTime;

/// What tells one version of a file from the next without reading it: its modification
/// time and size. The gateway follows files the user edits by hand (a session's
/// `tap.config.json`, `policy.json`) by looking at this now and then.
pub(crate) type FileStamp = (SystemTime, u64);

/// `path`'s [`FileStamp`]; `None` when there is no file (or it cannot be looked at).
pub(crate) fn file_stamp(path: &Path) -> Option<FileStamp> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}

/// RFC 3339 with milliseconds, UTC: `2026-04-26T14:01:00.123Z`.
pub fn rfc3339(t: SystemTime) -> String {
    humantime::format_rfc3339_millis(t).to_string()
}

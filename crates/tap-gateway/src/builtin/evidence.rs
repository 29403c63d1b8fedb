//! The checks behind `tap_verify_goal_output` and `tap_audit_claims`: one evidence item (a
//! workspace file, a session stream, a command's output as the caller saw it) against what
//! it should show, answered as holding, contradicted, or not checkable.
//!
//! Blocking (files, the ledger's read connection): run on `spawn_blocking`, after the
//! ledger is flushed so a post just made is found there too.
//!
//! The workspace fence: a path is resolved by the OS (`canonicalize`: `..` and every
//! symlink) and must land inside the session's working directory, itself canonical. A path
//! that does not exist is judged by its deepest existing ancestor, and may not climb
//! (`..`) below it; a dangling symlink is refused rather than called missing. The file is
//! opened by its resolved path and, where `/proc` says where the open file is, checked
//! again there, so a symlink swapped in between is caught. Only regular files are read (a
//! FIFO would block), and at most [`MAX_GOAL_FILE_BYTES`] of each.

use crate::limits::{MAX_GOAL_EXCERPT_CHARS, MAX_GOAL_FILE_BYTES, MAX_GOAL_STREAM_EVENTS};
use crate::state::Core;
use crate::text::cut;
use regex::Regex;
use serde::Deserialize;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use tap_protocol::ledger::EventsListParams;
use tap_protocol::limits::STREAM_RETENTION;
use tap_protocol::Json;

/// What an item's check found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verdict {
    Holds,
    /// Nothing to judge by: no workspace, refused path, a read cut short, no such stream.
    Unverified,
    Contradicts,
}

pub(super) struct Checked {
    pub verdict: Verdict,
    pub reason: String,
}

fn holds(reason: impl Into<String>) -> Checked {
    Checked {
        verdict: Verdict::Holds,
        reason: reason.into(),
    }
}

fn unverified(reason: impl Into<String>) -> Checked {
    Checked {
        verdict: Verdict::Unverified,
        reason: reason.into(),
    }
}

fn contradicts(reason: impl Into<String>) -> Checked {
    Checked {
        verdict: Verdict::Contradicts,
        reason: reason.into(),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum Kind {
    File,
    Stream,
    Command,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::File => "file",
            Kind::Stream => "stream",
            Kind::Command => "command",
        }
    }
}

#[derive(Debug, Deserialize)]
pub(super) struct JsonCheck {
    pub pointer: String,
    pub equals: Option<Json>,
    pub pattern: Option<String>,
}

/// One evidence item as the schema (`state::goal_defs`) lets it through.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Item {
    pub kind: Kind,
    pub id: Option<String>,
    pub path: Option<String>,
    pub exists: Option<bool>,
    pub pattern: Option<String>,
    #[serde(default)]
    pub absent: bool,
    pub json: Option<JsonCheck>,
    pub stream: Option<String>,
    pub min_count: Option<u64>,
    pub command: Option<String>,
    pub output: Option<String>,
    pub exit_code: Option<i64>,
    pub expect_exit_code: Option<i64>,
}

impl Item {
    /// What the item names: its path, stream or command.
    pub fn target(&self) -> String {
        let t = match self.kind {
            Kind::File => self.path.as_deref(),
            Kind::Stream => self.stream.as_deref(),
            Kind::Command => self.command.as_deref(),
        };
        cut(t.unwrap_or("(unnamed)"), MAX_GOAL_EXCERPT_CHARS)
    }

    /// Its patterns (`pattern`, `json.pattern`), for the call's bounds.
    pub fn patterns(&self) -> impl Iterator<Item = &str> {
        let json = self.json.as_ref().and_then(|j| j.pattern.as_deref());
        self.pattern.as_deref().into_iter().chain(json)
    }

    /// What the schema cannot say: which fields each kind needs, and which it ignores.
    pub fn shape_error(&self) -> Option<String> {
        let stray = |fields: &[(&str, bool)]| {
            fields
                .iter()
                .find(|(_, set)| *set)
                .map(|(name, _)| format!("'{name}' is not for {} evidence", self.kind.as_str()))
        };
        let file = [
            ("path", self.path.is_some()),
            ("exists", self.exists.is_some()),
            ("json", self.json.is_some()),
        ];
        let stream = [
            ("stream", self.stream.is_some()),
            ("minCount", self.min_count.is_some()),
        ];
        let command = [
            ("command", self.command.is_some()),
            ("output", self.output.is_some()),
            ("exitCode", self.exit_code.is_some()),
            ("expectExitCode", self.expect_exit_code.is_some()),
        ];
        let pointer_ok = |j: &JsonCheck| j.pointer.is_empty() || j.pointer.starts_with('/');
        match self.kind {
            Kind::File if self.path.is_none() => Some("file evidence needs 'path'".into()),
            Kind::File if self.exists == Some(false) && (self.pattern.is_some() || self.json.is_some()) => {
                Some("'exists': false takes no 'pattern' or 'json'".into())
            }
            Kind::File if self.json.as_ref().is_some_and(|j| !pointer_ok(j)) => Some(
                "'json.pointer' is a JSON pointer: \"\" or starting with '/' (e.g. '/status')".into(),
            ),
            Kind::File => stray(&stream).or_else(|| stray(&command)),
            Kind::Stream if self.stream.is_none() => Some("stream evidence needs 'stream'".into()),
            Kind::Stream => stray(&file).or_else(|| stray(&command)),
            Kind::Command if self.pattern.is_none() && self.expect_exit_code.is_none() => Some(
                "command evidence needs 'pattern' (with 'output') or 'expectExitCode' (with 'exitCode')".into(),
            ),
            Kind::Command => stray(&file).or_else(|| stray(&stream)),
        }
        .or_else(|| {
            (self.absent && self.pattern.is_none()).then(|| "'absent' needs 'pattern'".into())
        })
    }
}

/// An item with its patterns compiled (by the caller, within the call's bounds).
pub(super) struct Ready {
    pub item: Item,
    pub pattern: Option<Regex>,
    pub json_pattern: Option<Regex>,
}

/// What the checks of one call look at.
pub(super) struct Scope<'a> {
    pub core: &'a Core,
    pub session_id: &'a str,
    /// The session's working directory, canonical; or why files cannot be checked.
    pub workspace: Result<PathBuf, String>,
}

impl Scope<'_> {
    pub fn check(&self, r: &Ready) -> Checked {
        match r.item.kind {
            Kind::File => self.file(r),
            Kind::Stream => self.stream(r),
            Kind::Command => command(r),
        }
    }

    fn file(&self, r: &Ready) -> Checked {
        let root = match &self.workspace {
            Ok(root) => root,
            Err(why) => return unverified(format!("Refused: {why}")),
        };
        let raw = r.item.path.as_deref().unwrap_or_default();
        let real = match resolve(root, raw) {
            Ok(Some(real)) => real,
            Ok(None) if r.item.exists == Some(false) => return holds("does not exist"),
            Ok(None) => return contradicts("does not exist"),
            Err(why) => return unverified(format!("Refused: '{}' {why}", cut(raw, 200))),
        };
        let meta = match std::fs::metadata(&real) {
            Ok(m) => m,
            Err(e) => return unverified(format!("cannot be read: {e}")),
        };
        let what = if meta.is_dir() {
            "a directory".to_string()
        } else {
            format!("{} bytes", meta.len())
        };
        if r.item.exists == Some(false) {
            return contradicts(format!("exists ({what})"));
        }
        if r.pattern.is_none() && r.item.json.is_none() {
            return holds(format!("exists ({what})"));
        }
        if !meta.is_file() {
            return unverified(format!(
                "is not a regular file ({what}): only files are read"
            ));
        }
        let (bytes, size) = match read_capped(root, &real) {
            Ok(read) => read,
            Err(why) => return unverified(why),
        };
        let whole = bytes.len() as u64 == size;
        let mut reasons = Vec::new();
        if let Some(re) = &r.pattern {
            let text = String::from_utf8_lossy(&bytes);
            let scope = match whole {
                true => format!("the file ({size} bytes)"),
                false => format!(
                    "the first {} bytes of {size} (files are read up to that)",
                    bytes.len()
                ),
            };
            let c = find(re, &text, r.item.absent, whole, &scope);
            if c.verdict != Verdict::Holds {
                return c;
            }
            reasons.push(c.reason);
        }
        if let Some(j) = &r.item.json {
            if !whole {
                return unverified(format!(
                    "is {size} bytes; files over {MAX_GOAL_FILE_BYTES} bytes are not parsed as JSON"
                ));
            }
            let c = json_value(&bytes, j, r.json_pattern.as_ref());
            if c.verdict != Verdict::Holds {
                return c;
            }
            reasons.push(c.reason);
        }
        holds(reasons.join("; "))
    }

    fn stream(&self, r: &Ready) -> Checked {
        let raw = r.item.stream.as_deref().unwrap_or_default();
        let mut name = raw.to_string();
        let mut seen = self.memory(&name, r);
        if seen.events == 0 && !raw.contains('@') {
            // Emitter streams are named in normal form: "CI Tests" is `ci-tests`.
            let normal = crate::state::emitters::spec::normalise(raw);
            if normal != raw && !normal.is_empty() {
                let again = self.memory(&normal, r);
                if again.events > 0 {
                    (name, seen) = (normal, again);
                }
            }
        }
        let ledger = match self.ledger(&name, r) {
            Ok(l) => l,
            Err(e) => return unverified(format!("the history database could not be read: {e}")),
        };
        // The ledger holds what memory does once flushed; memory alone when history is off.
        let matched = seen.matched.max(ledger.matched);
        let events = seen.events.max(ledger.events);
        let complete =
            (ledger.exhausted && ledger.events >= seen.events) || seen.events < STREAM_RETENTION;
        let example = ledger.example.or(seen.example);
        let quoted = |e: Option<String>| e.map(|t| format!(": \"{t}\"")).unwrap_or_default();
        if events == 0 {
            return unverified(format!(
                "this session has no stream '{}' with events (tap_list_streams lists them)",
                cut(raw, MAX_GOAL_EXCERPT_CHARS)
            ));
        }
        let scanned = match complete {
            true => format!("{events} events"),
            false => format!("the newest {events} events (older ones are not searched)"),
        };
        if r.item.absent {
            return match (matched, complete) {
                (0, true) => holds(format!("none of its {scanned} match")),
                (0, false) => unverified(format!("none of {scanned} match")),
                (n, _) => contradicts(format!("{n} of {scanned} match{}", quoted(example))),
            };
        }
        let want = r.item.min_count.unwrap_or(1) as usize;
        let what = match r.pattern {
            Some(_) => "matching events",
            None => "events",
        };
        match (matched >= want, complete) {
            (true, _) => holds(format!("{matched} {what} in {scanned}{}", quoted(example))),
            (false, true) => contradicts(format!("{matched} {what} in {scanned}; {want} wanted")),
            (false, false) => unverified(format!("{matched} {what} in {scanned}; {want} wanted")),
        }
    }

    /// The stream's events in memory (the newest [`STREAM_RETENTION`] of each provider's).
    fn memory(&self, select: &str, r: &Ready) -> Seen {
        let streams = self
            .core
            .streams
            .history(self.session_id, Some(select), STREAM_RETENTION);
        let mut seen = Seen::default();
        for entry in streams.values().flatten() {
            seen.look(&entry.event, r.pattern.as_ref());
        }
        seen
    }

    /// The stream's events in the ledger, this session's only, newest first, up to
    /// [`MAX_GOAL_STREAM_EVENTS`].
    fn ledger(&self, select: &str, r: &Ready) -> rusqlite::Result<Seen> {
        let mut seen = Seen::default();
        let mut before = None;
        while seen.events < MAX_GOAL_STREAM_EVENTS {
            let room = (MAX_GOAL_STREAM_EVENTS - seen.events) as u32;
            let page = crate::ledger::read::events(
                &self.core.ledger,
                &EventsListParams {
                    session_id: Some(self.session_id.to_string()),
                    stream: Some(select.to_string()),
                    before,
                    limit: Some(room.min(crate::limits::MAX_HISTORY_PAGE)),
                    ..Default::default()
                },
            )?;
            for e in &page.events {
                seen.look(&e.text, r.pattern.as_ref());
            }
            match page.next_before {
                Some(b) => before = Some(b),
                None => {
                    seen.exhausted = true;
                    break;
                }
            }
        }
        Ok(seen)
    }
}

/// Events looked at, those that matched, the newest match quoted.
#[derive(Default)]
struct Seen {
    events: usize,
    matched: usize,
    example: Option<String>,
    /// Every event there was looked at (the ledger's: memory's are all looked at).
    exhausted: bool,
}

impl Seen {
    fn look(&mut self, text: &str, pattern: Option<&Regex>) {
        self.events += 1;
        if pattern.is_none_or(|re| re.is_match(text)) {
            self.matched += 1;
            if self.example.is_none() {
                self.example = Some(cut(text, MAX_GOAL_EXCERPT_CHARS));
            }
        }
    }
}

fn command(r: &Ready) -> Checked {
    let mut reasons = Vec::new();
    if let Some(want) = r.item.expect_exit_code {
        match r.item.exit_code {
            None => return unverified(format!("no 'exitCode' given to compare with {want}")),
            Some(got) if got != want => {
                return contradicts(format!("exited with {got}, not {want}"))
            }
            Some(got) => reasons.push(format!("exited with {got}")),
        }
    }
    if let Some(re) = &r.pattern {
        let Some(output) = r.item.output.as_deref() else {
            return unverified("no 'output' given to search");
        };
        let c = find(
            re,
            output,
            r.item.absent,
            true,
            &format!("the output ({} bytes)", output.len()),
        );
        if c.verdict != Verdict::Holds {
            return c;
        }
        reasons.push(c.reason);
    }
    holds(reasons.join("; "))
}

/// `re` searched in `text` (all there is when `whole`, described by `scope`).
fn find(re: &Regex, text: &str, absent: bool, whole: bool, scope: &str) -> Checked {
    let found = re.find(text).map(|m| {
        let line = text[..m.start()].matches('\n').count() + 1;
        let start = text[..m.start()].rfind('\n').map_or(0, |i| i + 1);
        let end = text[m.end()..]
            .find('\n')
            .map_or(text.len(), |i| m.end() + i);
        (line, cut(&text[start..end], MAX_GOAL_EXCERPT_CHARS))
    });
    match (found, absent, whole) {
        (Some((line, l)), false, _) => holds(format!("matched at line {line}: \"{l}\"")),
        (Some((line, l)), true, _) => contradicts(format!("found at line {line}: \"{l}\"")),
        (None, false, true) => contradicts(format!("the pattern is not in {scope}")),
        (None, true, true) => holds(format!("the pattern is not in {scope}")),
        (None, _, false) => unverified(format!("the pattern is not in {scope}")),
    }
}

fn json_value(bytes: &[u8], j: &JsonCheck, pattern: Option<&Regex>) -> Checked {
    let doc: Json = match serde_json::from_slice(bytes) {
        Ok(d) => d,
        Err(e) => return contradicts(format!("is not JSON: {e}")),
    };
    let at = cut(&j.pointer, MAX_GOAL_EXCERPT_CHARS);
    let Some(value) = doc.pointer(&j.pointer) else {
        return contradicts(format!("has no value at '{at}'"));
    };
    let shown = |v: &Json| cut(&v.to_string(), MAX_GOAL_EXCERPT_CHARS);
    if let Some(want) = &j.equals {
        if value != want {
            return contradicts(format!(
                "the value at '{at}' is {}, not {}",
                shown(value),
                shown(want)
            ));
        }
    }
    if let Some(re) = pattern {
        let text = match value {
            Json::String(s) => s.clone(),
            v => v.to_string(),
        };
        if !re.is_match(&text) {
            return contradicts(format!(
                "the value at '{at}' is {}, which the pattern does not match",
                shown(value)
            ));
        }
    }
    holds(format!("the value at '{at}' is {}", shown(value)))
}

/// `raw` under `root` (canonical) as the OS resolves it: `Some` when it exists, `None` when
/// it does not; `Err` (completing "'<raw>' …") when it leaves the workspace or cannot be
/// resolved.
pub(super) fn resolve(root: &Path, raw: &str) -> Result<Option<PathBuf>, String> {
    let outside = || "leaves the session's workspace (after '..' and symlinks)".to_string();
    let wanted = root.join(raw);
    match wanted.canonicalize() {
        Ok(real) if real.starts_with(root) => return Ok(Some(real)),
        Ok(_) => return Err(outside()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot be resolved: {e}")),
    }
    if std::fs::symlink_metadata(&wanted).is_ok() {
        return Err("is a symlink whose target does not exist".into());
    }
    // The deepest ancestor that exists must be inside, and nothing after it may climb.
    let mut tail = Vec::new();
    for ancestor in wanted.ancestors() {
        match ancestor.canonicalize() {
            Ok(real) if real.starts_with(root) => {
                return match tail.contains(&Component::ParentDir) {
                    true => Err("climbs ('..') out of a directory that does not exist".into()),
                    false => Ok(None),
                };
            }
            Ok(_) => return Err(outside()),
            Err(_) => {
                if let Some(c) = ancestor.components().next_back() {
                    tail.push(c);
                }
            }
        }
    }
    Err(outside())
}

/// The file's first [`MAX_GOAL_FILE_BYTES`] bytes and its size; the open file checked
/// again inside `root` where `/proc` shows where it is.
fn read_capped(root: &Path, real: &Path) -> Result<(Vec<u8>, u64), String> {
    let file = std::fs::File::open(real).map_err(|e| format!("cannot be opened: {e}"))?;
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let fd = format!("/proc/self/fd/{}", file.as_raw_fd());
        if let Ok(opened) = std::fs::read_link(fd) {
            if !opened.starts_with(root) {
                return Err("Refused: it left the workspace while it was opened".into());
            }
        }
    }
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot be read: {e}"))?;
    if !meta.is_file() {
        return Err("is not a regular file: only files are read".into());
    }
    let mut bytes = Vec::new();
    file.take(MAX_GOAL_FILE_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot be read: {e}"))?;
    let size = meta.len().max(bytes.len() as u64);
    Ok((bytes, size))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_resolve_inside_the_workspace_only() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/a.txt"), "a").unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("out")).unwrap();
        std::os::unix::fs::symlink(root.join("nowhere"), root.join("dangling")).unwrap();
        let ok = |p: &str| resolve(&root, p);
        assert_eq!(ok("sub/a.txt").unwrap(), Some(root.join("sub/a.txt")));
        assert_eq!(
            ok("sub/../sub/a.txt").unwrap(),
            Some(root.join("sub/a.txt"))
        );
        assert_eq!(
            ok(root.join("sub/a.txt").to_str().unwrap()).unwrap(),
            Some(root.join("sub/a.txt"))
        );
        assert_eq!(ok("sub/missing.txt").unwrap(), None);
        assert_eq!(ok("new/dir/missing.txt").unwrap(), None);
        for escape in [
            "..",
            "../x",
            "sub/../../x",
            "out/secret",
            "out/missing",
            "/etc/passwd",
            "new/../../x",
            "dangling",
        ] {
            assert!(ok(escape).is_err(), "{escape}: {:?}", ok(escape));
        }
    }
}

//! A command emitter's process: `bash -lc` in its own process group, in the emitter's
//! working directory, with the gateway's environment minus every tap secret (and what
//! `child_env_remove` names), plus
//! `TAP_SESSION_ID` and `TAP_STREAM`; its output read line by line with backpressure;
//! stopped as a group like a spawned provider (`super::group`).

use crate::limits::MAX_EMITTER_LINE_BYTES;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::Child;

/// Starts `command` for the emitter writing to `stream` in `session_id`. `secrets` are
/// the gateway's tokens: any environment variable holding one (or named like a tap token)
/// is left out, so no child can authenticate as the gateway's providers or hosts.
pub(crate) fn spawn(
    command: &str,
    cwd: &std::path::Path,
    session_id: &str,
    stream: &str,
    secrets: &[&str],
    extra_env: &[(String, String)],
    env_remove: &[String],
) -> std::io::Result<Child> {
    let mut cmd = super::group::command("bash");
    cmd.arg("-lc").arg(command).current_dir(cwd);
    for (key, value) in std::env::vars_os() {
        let k = key.to_string_lossy();
        let is_token_name = k.starts_with("TAP_") && k.contains("TOKEN");
        let holds_secret = secrets
            .iter()
            .any(|s| !s.is_empty() && value.to_string_lossy().contains(s));
        if is_token_name || holds_secret || env_remove.iter().any(|r| key == r.as_str()) {
            cmd.env_remove(&key);
        }
    }
    cmd.envs(extra_env.iter().map(|(k, v)| (k, v)));
    cmd.env("TAP_SESSION_ID", session_id)
        .env("TAP_STREAM", stream);
    cmd.spawn()
}

/// Reads `pipe` in lines (lossy UTF-8, trimmed; empty lines skipped; a line over
/// [`MAX_EMITTER_LINE_BYTES`] cut with a marker), every complete line of one read at a
/// time. Holds at most one read buffer and one partial line: the pipe is read again only
/// once the previous lines were handled, so a fast writer waits for the emitter.
///
/// Cancel-safe: a partly read line lives in the struct, not in the future, so a `select!`
/// that drops [`Lines::next_batch`] (the other pipe had lines first) loses nothing.
pub(crate) struct Lines<R> {
    reader: BufReader<R>,
    line: Vec<u8>,
    /// Bytes of the current line beyond the limit, skipped.
    cut: usize,
}

impl<R: AsyncRead + Unpin> Lines<R> {
    pub fn new(pipe: R) -> Self {
        Self {
            reader: BufReader::with_capacity(64 * 1024, pipe),
            line: Vec::new(),
            cut: 0,
        }
    }

    /// Appends to `out` the non-empty lines of the next read that completes one (waiting
    /// for it); `false` at the end of the output, once its last partial line was given.
    pub async fn next_batch(&mut self, out: &mut Batch) -> bool {
        loop {
            // The one await: nothing is taken from the buffer before it completes.
            let buf = match self.reader.fill_buf().await {
                Ok([]) | Err(_) => {
                    let before = out.len();
                    take(&mut self.line, &mut self.cut, &[], out);
                    return out.len() > before;
                }
                Ok(buf) => buf,
            };
            let mut rest = buf;
            if self.line.is_empty() {
                rest = whole_lines(rest, &mut self.cut, out);
            }
            while let Some(i) = memchr::memchr(b'\n', rest) {
                take(&mut self.line, &mut self.cut, &rest[..i], out);
                rest = &rest[i + 1..];
            }
            add(&mut self.line, &mut self.cut, rest);
            let used = buf.len();
            self.reader.consume(used);
            if !out.is_empty() {
                return true;
            }
        }
    }
}

/// Adds to `out` the complete lines at the start of `buf` when they are valid UTF-8 (the
/// common case), decoded with one check for all of them; returns the rest of `buf`, which
/// [`take`] goes through line by line.
fn whole_lines<'b>(buf: &'b [u8], cut: &mut usize, out: &mut Batch) -> &'b [u8] {
    let Some(last) = memchr::memrchr(b'\n', buf) else {
        return buf;
    };
    let Ok(whole) = std::str::from_utf8(&buf[..last]) else {
        return buf;
    };
    for line in whole.split('\n') {
        if line.len() > MAX_EMITTER_LINE_BYTES {
            take(&mut Vec::new(), cut, line.as_bytes(), out);
            continue;
        }
        push_line(out, line, 0);
    }
    &buf[last + 1..]
}

/// Adds `part` to the line being read, up to the limit; counts what is cut.
fn add(line: &mut Vec<u8>, cut: &mut usize, part: &[u8]) {
    let room = MAX_EMITTER_LINE_BYTES.saturating_sub(line.len());
    line.extend_from_slice(&part[..part.len().min(room)]);
    *cut += part.len().saturating_sub(room);
}

/// Adds the line that ends with `tail` to `out`, trimmed (nothing when empty); the partial
/// line is reset. A line read in one piece (the common case) is decoded straight from the
/// buffer, and valid UTF-8 is not copied until it lands in `out`.
fn take(line: &mut Vec<u8>, cut: &mut usize, tail: &[u8], out: &mut Batch) {
    let whole: &[u8] = if line.is_empty() {
        let n = tail.len().min(MAX_EMITTER_LINE_BYTES);
        *cut += tail.len() - n;
        &tail[..n]
    } else {
        add(line, cut, tail);
        line
    };
    let decoded = String::from_utf8_lossy(whole);
    push_line(out, &decoded, std::mem::take(cut));
    drop(decoded);
    line.clear();
}

/// Adds `line` to `out` trimmed, marked when `cut` bytes of it were cut; an empty line adds
/// nothing.
fn push_line(out: &mut Batch, line: &str, cut: usize) {
    let text = line.trim();
    if text.is_empty() {
        return;
    }
    if cut > 0 {
        out.push(&format!("{text}… [line cut: {cut} more bytes]"));
    } else {
        out.push(text);
    }
}

/// The lines of one read in one string, joined by `\n`, and where each ends: no
/// allocation per line, and the filter can search them all at once.
#[derive(Default)]
pub(crate) struct Batch {
    text: String,
    ends: Vec<usize>,
}

impl Batch {
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    pub fn clear(&mut self) {
        self.text.clear();
        self.ends.clear();
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> {
        let mut start = 0;
        self.ends.iter().map(move |&end| {
            let line = &self.text[start..end];
            start = end + 1;
            line
        })
    }

    /// The lines joined by `\n` (none after the last).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Where each line's text ends in [`Self::text`].
    pub fn ends(&self) -> &[usize] {
        &self.ends
    }

    pub(crate) fn push(&mut self, line: &str) {
        if !self.ends.is_empty() {
            self.text.push('\n');
        }
        self.text.push_str(line);
        self.ends.push(self.text.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn all(input: &[u8]) -> Vec<String> {
        let mut lines = Lines::new(input);
        let mut out = Batch::default();
        while lines.next_batch(&mut out).await {}
        out.iter().map(String::from).collect()
    }

    #[tokio::test]
    async fn lines_are_trimmed_empty_ones_skipped_long_ones_cut() {
        assert_eq!(all(b"  a \r\n\n\nb\n   \nc").await, ["a", "b", "c"]);
        let mut input = vec![b'x'; MAX_EMITTER_LINE_BYTES + 10];
        input.extend_from_slice(b"\nnext\n");
        let got = all(&input).await;
        assert_eq!(got.len(), 2);
        assert!(
            got[0].ends_with("… [line cut: 10 more bytes]"),
            "{}",
            &got[0][got[0].len() - 40..]
        );
        assert_eq!(got[1], "next");
    }

    #[tokio::test]
    async fn bad_utf8_is_replaced_in_its_line_only_and_lines_join_across_reads() {
        assert_eq!(
            all(b"ok\n\xff bad \nfine\n").await,
            ["ok", "\u{fffd} bad", "fine"]
        );
        use tokio::io::AsyncReadExt;
        let mut lines = Lines::new((&b" a"[..]).chain(&b"b \nc\n\nd"[..]));
        let mut out = Batch::default();
        while lines.next_batch(&mut out).await {}
        assert_eq!(out.iter().collect::<Vec<_>>(), ["ab", "c", "d"]);
        assert_eq!(out.text(), "ab\nc\nd");
    }
}

//! A command emitter's process: `bash -lc` in its own process group, in the emitter's
//! working directory, with the gateway's environment minus every tap secret, plus
//! `TAP_SESSION_ID` and `TAP_STREAM`; its output read line by line with backpressure;
//! stopped as a group like a spawned provider (`providers::spawn::stop_group`: SIGTERM, then
//! SIGKILL after `PROVIDER_STOP_GRACE`).

use std::process::Stdio;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{Child, Command};

/// A line longer than this is cut, with a marker saying so.
pub(crate) const MAX_EMITTER_LINE_BYTES: usize = 64 * 1024;

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
) -> std::io::Result<Child> {
    let mut cmd = Command::new("bash");
    cmd.arg("-lc").arg(command).current_dir(cwd);
    for (key, value) in std::env::vars_os() {
        let k = key.to_string_lossy();
        let is_token_name = k.starts_with("TAP_") && k.contains("TOKEN");
        let holds_secret = secrets
            .iter()
            .any(|s| !s.is_empty() && value.to_string_lossy().contains(s));
        if is_token_name || holds_secret {
            cmd.env_remove(&key);
        }
    }
    cmd.envs(extra_env.iter().map(|(k, v)| (k, v)));
    cmd.env("TAP_SESSION_ID", session_id)
        .env("TAP_STREAM", stream)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    cmd.process_group(0);
    cmd.spawn()
}

/// Kills whatever is left in the group of a child that already exited (a background
/// grandchild must not outlive its run).
pub(crate) fn reap_group(pid: Option<u32>) {
    #[cfg(unix)]
    if let Some(group) = pid
        .and_then(|p| i32::try_from(p).ok())
        .map(nix::unistd::Pid::from_raw)
    {
        use nix::sys::signal::{killpg, Signal};
        let _ = killpg(group, Signal::SIGKILL);
    }
}

/// Reads `pipe` a line at a time (lossy UTF-8, trimmed; empty lines skipped; a line over
/// [`MAX_EMITTER_LINE_BYTES`] cut with a marker). Never buffers more than one line: the
/// next line is read only once the previous one was handled.
///
/// Cancel-safe: a partly read line lives in the struct, not in the future, so a `select!`
/// that drops [`Lines::next`] (the other pipe had a line first) loses nothing.
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

    /// The next non-empty line; `None` at the end of the output.
    pub async fn next(&mut self) -> Option<String> {
        loop {
            // The one await: nothing of the line is taken before it completes.
            let buf = match self.reader.fill_buf().await {
                Ok([]) | Err(_) => return self.take(),
                Ok(buf) => buf,
            };
            let (chunk, newline) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (&buf[..i], true),
                None => (buf, false),
            };
            let room = MAX_EMITTER_LINE_BYTES.saturating_sub(self.line.len());
            self.line.extend_from_slice(&chunk[..chunk.len().min(room)]);
            self.cut += chunk.len().saturating_sub(room);
            let used = chunk.len() + usize::from(newline);
            self.reader.consume(used);
            if newline {
                if let Some(text) = self.take() {
                    return Some(text);
                }
            }
        }
    }

    /// The line read so far, trimmed (`None` when empty); the buffer is reset.
    fn take(&mut self) -> Option<String> {
        let text = String::from_utf8_lossy(&self.line).trim().to_string();
        let cut = std::mem::take(&mut self.cut);
        self.line.clear();
        if text.is_empty() {
            return None;
        }
        Some(if cut > 0 {
            format!("{text}… [line cut: {cut} more bytes]")
        } else {
            text
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn all(input: &[u8]) -> Vec<String> {
        let mut lines = Lines::new(input);
        let mut out = Vec::new();
        while let Some(l) = lines.next().await {
            out.push(l);
        }
        out
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
}

//! Provider processes the gateway starts itself: the `--spawn` ones (gateway token, started
//! once with the gateway) and, through [`super::project`], the project providers of a
//! session's `tap.config.json`. Each gets a token in `TAP_PROVIDER_TOKEN` and the endpoint in
//! `TAP_GATEWAY_URL`, so a spec provider runs unchanged; its output goes to the gateway's log,
//! and it runs in its own process group so stopping it stops whatever it started.

use std::path::PathBuf;
use tap_protocol::limits::MAX_PROVIDER_LOG_LINE_BYTES;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::Child;

/// A provider process to start with the gateway.
#[derive(Debug, Clone)]
pub struct SpawnSpec {
    /// Program to run.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Working directory (the gateway's when `None`).
    pub cwd: Option<PathBuf>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
}

impl SpawnSpec {
    /// A shell command line, run with `sh -c`.
    pub fn shell(command_line: &str) -> Self {
        Self {
            program: "sh".into(),
            args: vec!["-c".into(), command_line.into()],
            cwd: None,
            env: Vec::new(),
        }
    }

    pub(crate) fn label(&self) -> String {
        match self.args.as_slice() {
            [flag, line] if self.program == "sh" && flag == "-c" => line.clone(),
            _ => std::iter::once(self.program.as_str())
                .chain(self.args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
        }
    }

    /// Starts the process: stdin closed, stdout and stderr piped (for [`forward_lines`]),
    /// the gateway's environment without `env_remove`, then the spec's own `env`, then
    /// `token` and `url` (so a config cannot hand a provider another provider's token).
    pub(crate) fn start(
        &self,
        token: &str,
        url: &str,
        env_remove: &[String],
    ) -> std::io::Result<Child> {
        let mut cmd = super::group::command(&self.program);
        for key in env_remove {
            cmd.env_remove(key);
        }
        cmd.args(&self.args)
            .envs(self.env.iter().cloned())
            .env("TAP_PROVIDER_TOKEN", token)
            .env("TAP_GATEWAY_URL", url);
        if let Some(cwd) = &self.cwd {
            cmd.current_dir(cwd);
        }
        cmd.spawn()
    }
}

/// Calls `log` with each line of `pipe` (lossy UTF-8, without the newline), each cut to
/// [`MAX_PROVIDER_LOG_LINE_BYTES`]. Ends at end of file or on a read error.
pub(crate) async fn forward_lines(pipe: impl AsyncRead + Unpin, log: impl Fn(&str)) {
    let mut reader = BufReader::new(pipe);
    let mut line: Vec<u8> = Vec::new();
    let mut cut = false;
    loop {
        let buf = match reader.fill_buf().await {
            Ok([]) | Err(_) => break,
            Ok(buf) => buf,
        };
        let (chunk, newline) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], true),
            None => (buf, false),
        };
        let room = MAX_PROVIDER_LOG_LINE_BYTES.saturating_sub(line.len());
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        cut |= chunk.len() > room;
        let used = chunk.len() + usize::from(newline);
        reader.consume(used);
        if newline {
            emit(&mut line, &mut cut, &log);
        }
    }
    if !line.is_empty() {
        emit(&mut line, &mut cut, &log);
    }
}

fn emit(line: &mut Vec<u8>, cut: &mut bool, log: &impl Fn(&str)) {
    let text = String::from_utf8_lossy(line);
    let text = text.strip_suffix('\r').unwrap_or(&text);
    if *cut {
        log(&format!(
            "{text}… [line cut at {MAX_PROVIDER_LOG_LINE_BYTES} bytes]"
        ));
    } else {
        log(text);
    }
    line.clear();
    *cut = false;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    async fn lines_of(input: &[u8]) -> Vec<String> {
        let seen = Mutex::new(Vec::new());
        forward_lines(input, |l| seen.lock().unwrap().push(l.to_string())).await;
        seen.into_inner().unwrap()
    }

    #[tokio::test]
    async fn lines_are_split_trimmed_and_bounded() {
        assert_eq!(lines_of(b"a\r\nb\n\nc").await, ["a", "b", "", "c"]);
        let long = vec![b'x'; MAX_PROVIDER_LOG_LINE_BYTES * 3];
        let mut input = long.clone();
        input.extend_from_slice(b"\nnext\n");
        let seen = lines_of(&input).await;
        assert_eq!(seen.len(), 2);
        assert!(seen[0].starts_with(&"x".repeat(MAX_PROVIDER_LOG_LINE_BYTES)));
        assert!(
            seen[0].ends_with("[line cut at 8192 bytes]"),
            "{}",
            &seen[0][8000..]
        );
        assert_eq!(seen[1], "next");
    }
}

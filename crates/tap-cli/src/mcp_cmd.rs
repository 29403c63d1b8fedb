//! `tap mcp`: an MCP server on stdin/stdout for clients that launch one (Claude Desktop,
//! Claude Code, Cursor, …). The MCP session itself runs in the gateway: this process finds
//! the running gateway through `TAP_HOME`, opens `/mcp/<session>` as a WebSocket with the
//! host token in its `Authorization` header, and pipes one JSON-RPC message per line each
//! way. stdout carries only MCP; everything for the human goes to stderr.
//!
//! `tap mcp config`: the snippet a client's configuration needs to launch it.

use futures_util::{SinkExt, StreamExt};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tap_client::Discovery;
use tap_protocol::limits::MAX_MCP_REQUEST_BYTES;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;

/// The session MCP clients share when they name none.
pub const DEFAULT_SESSION: &str = "mcp";

fn stderr_fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("tap mcp: {message}");
    ExitCode::from(1)
}

pub async fn run(
    home: &Path,
    session: &str,
    cwd: Option<PathBuf>,
    profile: Option<&str>,
) -> ExitCode {
    let found = match Discovery::from_home(home) {
        Ok(f) => f,
        Err(e) => return stderr_fail(e),
    };
    let url = format!(
        "{}/mcp/{}",
        found.address.trim_end_matches('/'),
        path_segment(session)
    );
    let cwd = cwd
        .or_else(|| std::env::current_dir().ok())
        .map(|p| std::path::absolute(&p).unwrap_or(p).display().to_string());
    let mut request = match url.as_str().into_client_request() {
        Ok(r) => r,
        Err(e) => return stderr_fail(format!("bad gateway address {url}: {e}")),
    };
    let headers = request.headers_mut();
    match HeaderValue::from_str(&format!("Bearer {}", found.host_token)) {
        Ok(v) => headers.insert("authorization", v),
        Err(_) => return stderr_fail("the host token file holds an unusable token"),
    };
    if let Some(v) = cwd.and_then(|c| HeaderValue::from_str(&c).ok()) {
        headers.insert("tap-cwd", v);
    }
    if let Some(profile) = profile {
        match HeaderValue::from_str(profile) {
            Ok(v) => headers.insert("tap-profile", v),
            Err(_) => return stderr_fail(format!("--profile '{profile}' is not a profile name")),
        };
    }
    let ws = match tokio_tungstenite::connect_async(request).await {
        Ok((ws, _)) => ws,
        Err(e) => {
            return stderr_fail(format!(
                "cannot reach the gateway at {} ({e}); is it running? (`tap gateway` or the desktop app)",
                found.address
            ))
        }
    };
    let (mut to_gateway, mut from_gateway) = ws.split();
    let mut stdin = tokio::io::BufReader::new(tokio::io::stdin());
    let mut stdout = tokio::io::stdout();
    loop {
        tokio::select! {
            line = read_line(&mut stdin, MAX_MCP_REQUEST_BYTES) => match line {
                Ok(Line::Text(line)) if line.trim().is_empty() => {}
                Ok(Line::Text(line)) => {
                    if to_gateway.send(Message::text(line)).await.is_err() {
                        return stderr_fail("the gateway closed the connection");
                    }
                }
                Ok(Line::TooLong) => {
                    let e = serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {
                        "code": -32600,
                        "message": format!("Message above the limit of {MAX_MCP_REQUEST_BYTES} bytes"),
                    }});
                    if write_line(&mut stdout, &e.to_string()).await.is_err() {
                        return ExitCode::SUCCESS;
                    }
                }
                Err(e) => return stderr_fail(format!("reading stdin: {e}")),
                // The client closed our stdin: it is done with us.
                Ok(Line::End) => {
                    let _ = to_gateway.send(Message::Close(None)).await;
                    return ExitCode::SUCCESS;
                }
            },
            msg = from_gateway.next() => match msg {
                Some(Ok(Message::Text(text))) => {
                    if write_line(&mut stdout, &text).await.is_err() {
                        // The client closed our stdout: it is gone.
                        return ExitCode::SUCCESS;
                    }
                }
                Some(Ok(Message::Close(frame))) => {
                    let why = frame.map(|f| f.reason.to_string()).filter(|r| !r.is_empty());
                    return stderr_fail(format!(
                        "the gateway closed the connection{}",
                        why.map(|r| format!(" ({r})")).unwrap_or_default()
                    ));
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return stderr_fail(format!("connection to the gateway lost: {e}")),
                None => return stderr_fail("the gateway closed the connection"),
            },
        }
    }
}

/// One line of stdin.
enum Line {
    Text(String),
    /// Longer than the limit: its bytes were read and dropped up to its newline.
    TooLong,
    End,
}

/// Reads one line of at most `limit` bytes, never buffering more than that: a longer line
/// is skipped to its end, so the next one is read normally.
async fn read_line(input: &mut (impl AsyncBufRead + Unpin), limit: usize) -> std::io::Result<Line> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let chunk = input.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(match (line.is_empty() && !too_long, too_long) {
                (true, _) => Line::End,
                (false, true) => Line::TooLong,
                (false, false) => Line::Text(String::from_utf8_lossy(&line).into_owned()),
            });
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        if !too_long && line.len() + take <= limit {
            line.extend_from_slice(&chunk[..take]);
        } else {
            too_long = true;
            line.clear();
        }
        input.consume(take + usize::from(done));
        if done {
            return Ok(match too_long {
                true => Line::TooLong,
                false => Line::Text(String::from_utf8_lossy(&line).into_owned()),
            });
        }
    }
}

async fn write_line(stdout: &mut tokio::io::Stdout, line: &str) -> std::io::Result<()> {
    stdout.write_all(line.as_bytes()).await?;
    stdout.write_all(b"\n").await?;
    stdout.flush().await
}

/// Percent-encodes a session name for one URL path segment.
fn path_segment(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The MCP clients `tap mcp config` knows.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Client {
    ClaudeDesktop,
    ClaudeCode,
    Vscode,
    Cursor,
}

/// Prints what `client`'s configuration needs to launch `tap mcp` (or, with `http`, to
/// reach the HTTP endpoint of the running gateway).
pub fn config(home: &Path, client: Option<Client>, session: &str, http: bool) -> ExitCode {
    let tap = std::env::current_exe()
        .ok()
        .and_then(|p| std::fs::canonicalize(p).ok())
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "tap".into());
    let args = vec!["mcp".to_string(), "--session".into(), session.to_string()];
    if http {
        let address = match Discovery::from_home(home) {
            Ok(f) => f.address.replacen("ws://", "http://", 1),
            Err(e) => return stderr_fail(e),
        };
        let url = format!("{address}/mcp/{}", path_segment(session));
        let token_file = home.join("host-token");
        println!("URL:     {url}");
        println!(
            "Header:  Authorization: Bearer <the token in {}>",
            token_file.display()
        );
        eprintln!("The token is a secret: prefer the stdio form (`tap mcp config` without --http), which reads it itself.");
        return ExitCode::SUCCESS;
    }
    let entry = serde_json::json!({ "command": tap, "args": args });
    let text = match client {
        None | Some(Client::ClaudeDesktop) | Some(Client::Cursor) => {
            serde_json::json!({ "mcpServers": { "tap": entry } })
        }
        Some(Client::Vscode) => serde_json::json!({ "servers": { "tap": {
            "type": "stdio", "command": tap, "args": args,
        } } }),
        Some(Client::ClaudeCode) => {
            println!("claude mcp add tap -- {tap} {}", args.join(" "));
            return ExitCode::SUCCESS;
        }
    };
    println!(
        "{}",
        serde_json::to_string_pretty(&text).expect("serializable")
    );
    let hint = match client {
        None => "Put this in your MCP client's configuration (Claude Desktop: claude_desktop_config.json; Cursor: ~/.cursor/mcp.json; VS Code: --client vscode).",
        Some(Client::ClaudeDesktop) => "Claude Desktop: merge into claude_desktop_config.json (Settings → Developer → Edit Config).",
        Some(Client::Cursor) => "Cursor: merge into ~/.cursor/mcp.json (or .cursor/mcp.json in a project).",
        Some(Client::Vscode) => "VS Code: merge into .vscode/mcp.json (or the user mcp.json).",
        Some(Client::ClaudeCode) => unreachable!("printed above"),
    };
    eprintln!("{hint}");
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::{path_segment, read_line, Line};

    async fn lines(input: &[u8], limit: usize) -> Vec<String> {
        let mut r = input;
        let mut out = Vec::new();
        loop {
            match read_line(&mut r, limit).await.unwrap() {
                Line::Text(t) => out.push(t),
                Line::TooLong => out.push("<too long>".into()),
                Line::End => return out,
            }
        }
    }

    #[tokio::test]
    async fn a_line_over_the_limit_is_skipped_and_reading_goes_on() {
        assert_eq!(
            lines(b"ab\nabcdef\ncd\n", 4).await,
            ["ab", "<too long>", "cd"]
        );
        assert_eq!(lines(b"abcd\nx", 4).await, ["abcd", "x"]);
        assert_eq!(lines(b"abcdefgh", 4).await, ["<too long>"]);
        assert_eq!(lines(b"", 4).await, Vec::<String>::new());
    }

    #[test]
    fn session_names_are_escaped_for_one_path_segment() {
        assert_eq!(path_segment("my-session_1.x~"), "my-session_1.x~");
        assert_eq!(path_segment("a b/c?d"), "a%20b%2Fc%3Fd");
        assert_eq!(path_segment("é"), "%C3%A9");
    }
}

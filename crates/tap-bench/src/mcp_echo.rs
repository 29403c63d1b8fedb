//! `tap-bench mcp-echo-server`: the MCP stdio server S9 and S5 run, this binary again.
//!
//! As small and fast as an MCP server can be, so that S9 measures what sits between the
//! client and the server, not the server: one thread, no runtime, blocking reads of
//! newline-delimited JSON-RPC on stdin; the answers to everything read so far are written
//! in one `write` once no more input is buffered (32 calls in flight cost one read and one
//! write, not 32 of each). It speaks what a client needs of the 2025-11-25 generation:
//! `initialize` (answered with the version asked for), `ping`, `tools/list` (one tool) and
//! `tools/call`; notifications are ignored; other requests get -32601, so a 2026-07-28
//! client's `server/discover` falls back to `initialize`.
//!
//! The tool: `echo {text}` answers one text block with `text`, as `tests/mcp/servers/good.py`'s
//! `echo` does with its message.
//!
//! `--delay-ms N` (the soak's server): each `tools/call` is answered N ms after it was read,
//! on a thread of its own, so calls overlap and some are always in flight when the soak
//! kills the server. Without it nothing changes for S9.
//!
//! `--http [--bearer TOKEN]`: the same server over Streamable HTTP (`mcp_echo_http.rs`), the
//! remote server S10 calls.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::ExitCode;
use std::time::Duration;

/// The tool's name, as the server gives it.
pub const TOOL: &str = "echo";

/// The option that delays each call's answer.
pub const DELAY_OPTION: &str = "--delay-ms";

/// Serves stdin/stdout until stdin ends. `args`: what follows `mcp-echo-server`.
pub fn main(args: &[String]) -> ExitCode {
    if let Some((first, rest)) = args.split_first() {
        if first == crate::mcp_echo_http::HTTP_OPTION {
            return crate::mcp_echo_http::main(rest);
        }
    }
    let delay = match args {
        [] => None,
        [opt, ms] if opt == DELAY_OPTION => match ms.parse() {
            Ok(ms) => Some(Duration::from_millis(ms)),
            Err(_) => {
                eprintln!("mcp-echo-server: {DELAY_OPTION}: not a number: {ms}");
                return ExitCode::from(2);
            }
        },
        _ => {
            eprintln!(
                "usage: tap-bench mcp-echo-server [{DELAY_OPTION} N | --http [--bearer TOKEN]]"
            );
            return ExitCode::from(2);
        }
    };
    let mut input = BufReader::with_capacity(1 << 16, std::io::stdin());
    // Locked per write, not for the whole run: delayed answers are written by their threads.
    let stdout = std::io::stdout();
    let mut line = Vec::with_capacity(1024);
    let mut batch = Vec::with_capacity(1 << 16);
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) => return ExitCode::SUCCESS,
            Ok(_) => {}
            Err(e) => {
                eprintln!("mcp-echo-server: stdin: {e}");
                return ExitCode::FAILURE;
            }
        }
        if let Some(delay) = delay.filter(|_| is_call(&line)) {
            let answer = answer(&line);
            // Bounded by the calls the client has in flight; the process is a bench's.
            std::thread::spawn(move || {
                std::thread::sleep(delay);
                let Some(answer) = answer else { return };
                let mut text = answer.to_string().into_bytes();
                text.push(b'\n');
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(&text).and_then(|_| out.flush());
            });
        } else if let Some(answer) = answer(&line) {
            if serde_json::to_writer(&mut batch, &answer).is_err() {
                return ExitCode::FAILURE;
            }
            batch.push(b'\n');
        }
        // Everything read so far is answered: put it on the wire in one write (stdout is
        // line-buffered, so one `write_all` of whole lines is one write).
        if input.buffer().is_empty() && !batch.is_empty() {
            let mut out = stdout.lock();
            if out.write_all(&batch).and_then(|_| out.flush()).is_err() {
                // The client is gone.
                return ExitCode::SUCCESS;
            }
            batch.clear();
        }
    }
}

/// Whether `line` is a `tools/call` (the only request `--delay-ms` delays, and what the HTTP
/// mode counts as a call).
pub(crate) fn is_call(line: &[u8]) -> bool {
    const METHOD: &[u8] = b"\"tools/call\"";
    line.windows(METHOD.len()).any(|w| w == METHOD)
}

/// The answer to one line (or HTTP body); `None` for a notification or a line that is not
/// JSON-RPC.
pub(crate) fn answer(line: &[u8]) -> Option<Value> {
    let message: Value = serde_json::from_slice(line).ok()?;
    let id = message.get("id")?.clone();
    let params = &message["params"];
    let result = match message["method"].as_str().unwrap_or_default() {
        "initialize" => json!({
            "protocolVersion": params["protocolVersion"].as_str().unwrap_or("2025-11-25"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "tap-bench-echo", "version": env!("CARGO_PKG_VERSION")},
        }),
        "ping" => json!({}),
        "tools/list" => json!({"tools": [{
            "name": TOOL,
            "description": "Returns the text",
            "inputSchema": {
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
            },
        }]}),
        "tools/call" if params["name"] == TOOL => {
            let text = params["arguments"]["text"].as_str().unwrap_or_default();
            json!({"content": [{"type": "text", "text": text}]})
        }
        "tools/call" => return Some(error(id, -32602, "unknown tool")),
        _ => return Some(error(id, -32601, "method not found")),
    };
    Some(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_what_a_client_asks() {
        let init = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}"#;
        let a = answer(init).unwrap();
        assert_eq!(a["result"]["protocolVersion"], "2025-06-18");
        assert!(answer(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).is_none());
        let call = br#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#;
        let a = answer(call).unwrap();
        assert_eq!(a["id"], "x");
        assert_eq!(a["result"]["content"][0]["text"], "hi");
        let a = answer(br#"{"jsonrpc":"2.0","id":2,"method":"server/discover"}"#).unwrap();
        assert_eq!(a["error"]["code"], -32601);
        assert!(is_call(call));
        assert!(!is_call(init));
    }
}

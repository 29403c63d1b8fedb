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

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::ExitCode;

/// The tool's name, as the server gives it.
pub const TOOL: &str = "echo";

/// Serves stdin/stdout until stdin ends.
pub fn main() -> ExitCode {
    let mut input = BufReader::with_capacity(1 << 16, std::io::stdin());
    let mut stdout = std::io::stdout().lock();
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
        if let Some(answer) = answer(&line) {
            if serde_json::to_writer(&mut batch, &answer).is_err() {
                return ExitCode::FAILURE;
            }
            batch.push(b'\n');
        }
        // Everything read so far is answered: put it on the wire in one write (stdout is
        // line-buffered, so one `write_all` of whole lines is one write).
        if input.buffer().is_empty() && !batch.is_empty() {
            if stdout
                .write_all(&batch)
                .and_then(|_| stdout.flush())
                .is_err()
            {
                // The client is gone.
                return ExitCode::SUCCESS;
            }
            batch.clear();
        }
    }
}

/// The answer to one line; `None` for a notification or a line that is not JSON-RPC.
fn answer(line: &[u8]) -> Option<Value> {
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
    }
}

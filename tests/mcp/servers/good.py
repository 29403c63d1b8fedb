#!/usr/bin/env python3
"""good.py: a well-behaved MCP stdio server, the reference the hostile fixtures differ from.

Standard library only. MCP stdio framing: one JSON-RPC object per line on stdin and stdout;
stderr is free text. It answers `initialize` with the protocol version the client asked for
and declares `tools: {listChanged: true}` and `logging: {}`; after
`notifications/initialized` it sends one `notifications/message` log entry (level `info`,
data "good server ready") and writes "good: ready" to stderr.

Tools:
- `echo {message}`: returns the message as one text block (annotated read-only).
- `slow {seconds}`: sleeps `seconds` (default 1), sending `notifications/progress` every 0.1 s
  when the request carries `_meta.progressToken`; returns "slept <seconds>". A
  `notifications/cancelled` for its request id stops it: no more progress and no result.
- `image`: returns an image block (a 1x1 PNG, base64) and a text block "a 1x1 PNG".
- `structured`: returns `structuredContent` `{"n": 42}` and the text block `{"n": 42}`;
  declares an `outputSchema`.
- `fails`: returns `isError: true` with the text "it failed" (a tool error, not a JSON-RPC
  error).

What it tests in the gateway: the happy path of an `mcpServers` provider (handshake, tool
list, calls, every content kind passed through unchanged, `structuredContent`, `isError`),
progress forwarding, cancellation forwarding, and that server log notifications and stderr
lines do not disturb anything. `ping` answers `{}`, `logging/setLevel` answers `{}`, unknown
notifications are ignored, unknown requests get JSON-RPC error -32601 (so a 2026-07-28
client's `server/discover` probe falls back to `initialize`), an unknown tool gets -32602.
"""

import json
import os
import sys
import threading

NAME = "good"
PNG_1X1 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)

_out = threading.Lock()


def send(msg):
    data = (json.dumps(msg, separators=(",", ":")) + "\n").encode()
    with _out:
        try:
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        except (BrokenPipeError, ValueError):
            os._exit(0)  # the reader is gone


def result(rid, res):
    send({"jsonrpc": "2.0", "id": rid, "result": res})


def error(rid, code, message):
    send({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})


def text(s):
    return {"type": "text", "text": s}


TOOLS = [
    {
        "name": "echo",
        "description": "Returns the message",
        "inputSchema": {
            "type": "object",
            "properties": {"message": {"type": "string"}},
            "required": ["message"],
        },
        "annotations": {"readOnlyHint": True, "destructiveHint": False},
    },
    {
        "name": "slow",
        "description": "Sleeps, reporting progress every 0.1 s; honours cancellation",
        "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}},
    },
    {
        "name": "image",
        "description": "Returns a 1x1 PNG and a text block",
        "inputSchema": {"type": "object"},
    },
    {
        "name": "structured",
        "description": "Returns structuredContent {\"n\": 42}",
        "inputSchema": {"type": "object"},
        "outputSchema": {
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
        },
    },
    {
        "name": "fails",
        "description": "Always fails with isError",
        "inputSchema": {"type": "object"},
    },
]

# Request id (as JSON text, so 1 and "1" stay apart) -> Event set by notifications/cancelled.
_running = {}
_running_lock = threading.Lock()


def run_slow(rid, args, meta):
    seconds = float(args.get("seconds", 1))
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    key = json.dumps(rid)
    cancelled = threading.Event()
    with _running_lock:
        _running[key] = cancelled
    try:
        ticks = max(1, round(seconds / 0.1))
        for i in range(1, ticks + 1):
            if cancelled.wait(seconds / ticks):
                return  # cancelled: send nothing more, not even a result
            if token is not None:
                send(
                    {
                        "jsonrpc": "2.0",
                        "method": "notifications/progress",
                        "params": {
                            "progressToken": token,
                            "progress": i,
                            "total": ticks,
                            "message": f"tick {i}/{ticks}",
                        },
                    }
                )
        if not cancelled.is_set():
            result(rid, {"content": [text(f"slept {args.get('seconds', 1)}")]})
    finally:
        with _running_lock:
            _running.pop(key, None)


def call_tool(rid, params):
    name = params.get("name")
    args = params.get("arguments") or {}
    if name == "echo":
        result(rid, {"content": [text(str(args.get("message", "")))]})
    elif name == "slow":
        threading.Thread(target=run_slow, args=(rid, args, params.get("_meta")), daemon=True).start()
    elif name == "image":
        result(
            rid,
            {
                "content": [
                    {"type": "image", "data": PNG_1X1, "mimeType": "image/png"},
                    text("a 1x1 PNG"),
                ]
            },
        )
    elif name == "structured":
        result(rid, {"content": [text('{"n": 42}')], "structuredContent": {"n": 42}})
    elif name == "fails":
        result(rid, {"content": [text("it failed")], "isError": True})
    else:
        error(rid, -32602, f"Unknown tool: {name}")


def handle(msg):
    method = msg.get("method")
    params = msg.get("params") or {}
    if "id" not in msg:  # a notification
        if method == "notifications/initialized":
            print(f"{NAME}: ready", file=sys.stderr, flush=True)
            send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/message",
                    "params": {"level": "info", "logger": NAME, "data": "good server ready"},
                }
            )
        elif method == "notifications/cancelled":
            with _running_lock:
                ev = _running.get(json.dumps(params.get("requestId")))
            if ev is not None:
                ev.set()
        return
    rid = msg["id"]
    if method == "initialize":
        result(
            rid,
            {
                "protocolVersion": params.get("protocolVersion", "2025-11-25"),
                "capabilities": {"tools": {"listChanged": True}, "logging": {}},
                "serverInfo": {"name": NAME, "version": "1.0.0"},
            },
        )
    elif method in ("ping", "logging/setLevel"):
        result(rid, {})
    elif method == "tools/list":
        result(rid, {"tools": TOOLS})
    elif method == "tools/call":
        call_tool(rid, params)
    else:
        error(rid, -32601, f"Method not found: {method}")


def main():
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return
        if not line.strip():
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            error(None, -32700, "Parse error")
            continue
        if isinstance(msg, dict) and isinstance(msg.get("method"), str):
            handle(msg)
        # Anything else (a response to a request we never send, a batch) is ignored.


if __name__ == "__main__":
    main()

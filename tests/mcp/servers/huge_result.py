#!/usr/bin/env python3
"""huge_result.py: an MCP stdio server whose tool returns a 50 MB result on one line.

Standard library only; one JSON-RPC object per line on stdin/stdout. It echoes the client's
protocol version and lists two tools:
- `huge`: returns one text block of 50 MiB (50 * 1024 * 1024 characters "x"), so the answer
  is a single stdout line of about 50 MB.
- `small`: returns the text "small".
After writing the huge answer it keeps serving (if the reader closes stdout it exits 0).

What it tests in the gateway: the per-message size limit on a provider's stdout. The gateway
must not buffer without bound or run out of memory: an answer over the limit must become one
terminal error for that call (the server is then restarted or keeps working, per the
gateway's rule), and `small` must work afterwards.
`ping` answers `{}`, unknown notifications are ignored, unknown requests get -32601.
"""

import json
import os
import sys

NAME = "huge_result"
HUGE_CHARS = 50 * 1024 * 1024

TOOLS = [
    {"name": "huge", "description": "Returns 50 MiB of text", "inputSchema": {"type": "object"}},
    {"name": "small", "description": "Returns \"small\"", "inputSchema": {"type": "object"}},
]


def send(msg):
    try:
        sys.stdout.buffer.write((json.dumps(msg, separators=(",", ":")) + "\n").encode())
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        os._exit(0)


def result(rid, res):
    send({"jsonrpc": "2.0", "id": rid, "result": res})


def error(rid, code, message):
    send({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})


def handle(msg):
    method = msg["method"]
    params = msg.get("params") or {}
    if "id" not in msg:
        return  # notifications: nothing to do
    rid = msg["id"]
    if method == "initialize":
        result(
            rid,
            {
                "protocolVersion": params.get("protocolVersion", "2025-11-25"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": NAME, "version": "1.0.0"},
            },
        )
    elif method == "ping":
        result(rid, {})
    elif method == "tools/list":
        result(rid, {"tools": TOOLS})
    elif method == "tools/call":
        name = params.get("name")
        if name == "huge":
            result(rid, {"content": [{"type": "text", "text": "x" * HUGE_CHARS}]})
        elif name == "small":
            result(rid, {"content": [{"type": "text", "text": "small"}]})
        else:
            error(rid, -32602, f"Unknown tool: {name}")
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


if __name__ == "__main__":
    main()

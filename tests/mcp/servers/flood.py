#!/usr/bin/env python3
"""flood.py: an MCP stdio server that writes lots of non-JSON garbage to stdout.

Standard library only; one JSON-RPC object per line on stdin/stdout. On start, before it
reads anything, it writes 10,000 lines "garbage line N" to stdout; before every answer it
writes another 1,000 such lines. Apart from that it is a good server: it echoes the client's
protocol version and lists one tool, `echo {message}`, which returns the message as text.

What it tests in the gateway: the stdout reader must skip (and count or log, rate-limited)
lines that are not JSON-RPC without treating them as fatal, must keep reading so the server
never blocks on a full pipe, and must still match the real answers to their requests. A
server that prints banners or debug output on stdout is common in the wild.
`ping` answers `{}`, unknown notifications are ignored, unknown requests get -32601.
"""

import json
import os
import sys

NAME = "flood"
AT_START = 10_000
BEFORE_EACH_ANSWER = 1_000

TOOLS = [
    {
        "name": "echo",
        "description": "Returns the message",
        "inputSchema": {
            "type": "object",
            "properties": {"message": {"type": "string"}},
            "required": ["message"],
        },
    }
]

_garbage_count = 0


def garbage(n):
    global _garbage_count
    lines = []
    for _ in range(n):
        _garbage_count += 1
        lines.append(f"garbage line {_garbage_count}\n")
    write("".join(lines))


def write(s):
    try:
        sys.stdout.buffer.write(s.encode())
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        os._exit(0)


def send(msg):
    garbage(BEFORE_EACH_ANSWER)
    write(json.dumps(msg, separators=(",", ":")) + "\n")


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
        args = params.get("arguments") or {}
        if name == "echo":
            result(rid, {"content": [{"type": "text", "text": str(args.get("message", ""))}]})
        else:
            error(rid, -32602, f"Unknown tool: {name}")
    else:
        error(rid, -32601, f"Method not found: {method}")


def main():
    garbage(AT_START)
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

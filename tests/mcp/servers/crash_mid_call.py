#!/usr/bin/env python3
"""crash_mid_call.py: an MCP stdio server that dies in the middle of a tool call.

Standard library only; one JSON-RPC object per line on stdin/stdout. It completes the
handshake (echoing the client's protocol version) and lists two tools:
- `ok`: returns the text "ok".
- `boom`: writes "crashing" to stderr and exits with status 1 without answering.

What it tests in the gateway: a provider process that exits while a call is in flight. The
caller must get exactly one terminal error for that call (never a hang), other calls in
flight on the same server must fail too, the exit status and stderr must be reported, and
the server must be restarted (or shown as failed) so that `ok` works again afterwards.
`ping` answers `{}`, unknown notifications are ignored, unknown requests get -32601.
"""

import json
import os
import sys

NAME = "crash_mid_call"

TOOLS = [
    {"name": "ok", "description": "Returns \"ok\"", "inputSchema": {"type": "object"}},
    {"name": "boom", "description": "Crashes the server", "inputSchema": {"type": "object"}},
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
        if name == "ok":
            result(rid, {"content": [{"type": "text", "text": "ok"}]})
        elif name == "boom":
            print("crashing", file=sys.stderr, flush=True)
            os._exit(1)
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

#!/usr/bin/env python3
"""list_changed.py: an MCP stdio server whose tool list changes at run time.

Standard library only; one JSON-RPC object per line on stdin/stdout. It echoes the client's
protocol version and declares `tools: {listChanged: true}`. Tools:
- `add_tool`: adds a tool `extra_N` (N = 1, 2, ...; each returns the text "extra_N"), sends
  `notifications/tools/list_changed`, then answers "added extra_N".
- `remove_tool`: removes the most recently added `extra_N` (if any), sends
  `notifications/tools/list_changed`, then answers "removed extra_N" (or "nothing to remove",
  with no notification).
The notification is written before the call's answer, so a client that re-lists on the
notification sees the new list by the time it has the answer.

What it tests in the gateway: that it re-lists a server's tools on
`notifications/tools/list_changed` and passes the change on to sessions (new tools become
callable under their prefixed names, removed ones stop being offered).
`ping` answers `{}`, unknown notifications are ignored, unknown requests get -32601.
"""

import json
import os
import sys

NAME = "list_changed"

BASE_TOOLS = [
    {"name": "add_tool", "description": "Adds a tool extra_N", "inputSchema": {"type": "object"}},
    {
        "name": "remove_tool",
        "description": "Removes the last extra_N",
        "inputSchema": {"type": "object"},
    },
]
extras = []  # names of the added tools, in order
counter = 0


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


def text_result(rid, s):
    result(rid, {"content": [{"type": "text", "text": s}]})


def list_changed():
    send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})


def tools():
    return BASE_TOOLS + [
        {"name": n, "description": f"Returns \"{n}\"", "inputSchema": {"type": "object"}}
        for n in extras
    ]


def call_tool(rid, name):
    global counter
    if name == "add_tool":
        counter += 1
        extras.append(f"extra_{counter}")
        list_changed()
        text_result(rid, f"added extra_{counter}")
    elif name == "remove_tool":
        if extras:
            gone = extras.pop()
            list_changed()
            text_result(rid, f"removed {gone}")
        else:
            text_result(rid, "nothing to remove")
    elif name in extras:
        text_result(rid, name)
    else:
        error(rid, -32602, f"Unknown tool: {name}")


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
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": NAME, "version": "1.0.0"},
            },
        )
    elif method == "ping":
        result(rid, {})
    elif method == "tools/list":
        result(rid, {"tools": tools()})
    elif method == "tools/call":
        call_tool(rid, params.get("name"))
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

#!/usr/bin/env python3
"""many_tools.py: an MCP stdio server with 1,000 tools, listed in pages of 100.

Standard library only; one JSON-RPC object per line on stdin/stdout. It echoes the client's
protocol version and declares the tools `t0` .. `t999` (each returns its own name as text).
`tools/list` uses MCP pagination: each page holds 100 tools and, except the last, a
`nextCursor`; the client passes it back as the `cursor` param. Cursors are opaque strings
("page-1" .. "page-9"); an unknown cursor gets JSON-RPC error -32602.

What it tests in the gateway: that it follows `nextCursor` to the end and exposes all 1,000
tools (not just the first page), and how it copes with a large tool set (prefixing, limits,
the session's tool list size).
`ping` answers `{}`, unknown notifications are ignored, unknown requests get -32601.
"""

import json
import os
import sys

NAME = "many_tools"
COUNT = 1000
PAGE = 100

TOOLS = [
    {
        "name": f"t{i}",
        "description": f"Tool number {i}; returns its name",
        "inputSchema": {"type": "object"},
    }
    for i in range(COUNT)
]
NAMES = {t["name"] for t in TOOLS}


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


def list_tools(rid, params):
    cursor = params.get("cursor")
    if cursor is None:
        page = 0
    else:
        pages = {f"page-{p}": p for p in range(1, (COUNT + PAGE - 1) // PAGE)}
        if cursor not in pages:
            error(rid, -32602, f"Invalid cursor: {cursor!r}")
            return
        page = pages[cursor]
    res = {"tools": TOOLS[page * PAGE : (page + 1) * PAGE]}
    if (page + 1) * PAGE < COUNT:
        res["nextCursor"] = f"page-{page + 1}"
    result(rid, res)


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
        list_tools(rid, params)
    elif method == "tools/call":
        name = params.get("name")
        if name in NAMES:
            result(rid, {"content": [{"type": "text", "text": name}]})
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

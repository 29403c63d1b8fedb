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

from stdio_server import error, result, run, text_result, tool, unknown_tool

NAME = "many_tools"
COUNT = 1000
PAGE = 100

TOOLS = [tool(f"t{i}", f"Tool number {i}; returns its name") for i in range(COUNT)]
NAMES = {t["name"] for t in TOOLS}


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


def call_tool(rid, params):
    name = params.get("name")
    if name in NAMES:
        text_result(rid, name)
    else:
        unknown_tool(rid, name)


if __name__ == "__main__":
    run(NAME, call_tool, list_tools=list_tools)

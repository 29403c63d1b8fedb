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

from stdio_server import echo_tool, run, text_result, unknown_tool, write

NAME = "flood"
AT_START = 10_000
BEFORE_EACH_ANSWER = 1_000

TOOLS = [echo_tool()]

_garbage_count = 0


def garbage(n):
    global _garbage_count
    lines = []
    for _ in range(n):
        _garbage_count += 1
        lines.append(f"garbage line {_garbage_count}\n")
    write("".join(lines))


def call_tool(rid, params):
    name = params.get("name")
    args = params.get("arguments") or {}
    if name == "echo":
        text_result(rid, str(args.get("message", "")))
    else:
        unknown_tool(rid, name)


if __name__ == "__main__":
    garbage(AT_START)  # before reading anything
    run(NAME, call_tool, TOOLS, before_send=lambda: garbage(BEFORE_EACH_ANSWER))

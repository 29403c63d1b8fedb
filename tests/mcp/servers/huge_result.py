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

from stdio_server import run, text_result, tool, unknown_tool

NAME = "huge_result"
HUGE_CHARS = 50 * 1024 * 1024

TOOLS = [tool("huge", "Returns 50 MiB of text"), tool("small", "Returns \"small\"")]


def call_tool(rid, params):
    name = params.get("name")
    if name == "huge":
        text_result(rid, "x" * HUGE_CHARS)  # one stdout line of about 50 MB
    elif name == "small":
        text_result(rid, "small")
    else:
        unknown_tool(rid, name)


if __name__ == "__main__":
    run(NAME, call_tool, TOOLS)

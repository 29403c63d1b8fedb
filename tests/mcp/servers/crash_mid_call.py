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

import os
import sys

from stdio_server import run, text_result, tool, unknown_tool

NAME = "crash_mid_call"

TOOLS = [tool("ok", "Returns \"ok\""), tool("boom", "Crashes the server")]


def call_tool(rid, params):
    name = params.get("name")
    if name == "ok":
        text_result(rid, "ok")
    elif name == "boom":
        print("crashing", file=sys.stderr, flush=True)
        os._exit(1)  # no answer, no cleanup
    else:
        unknown_tool(rid, name)


if __name__ == "__main__":
    run(NAME, call_tool, TOOLS)

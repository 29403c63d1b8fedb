#!/usr/bin/env python3
"""described.py FILE: an MCP stdio server whose one tool's description is read from FILE.

Standard library only. Tool `describe` (its description: FILE's text at each `tools/list`;
"described" when FILE is missing) answers "described: <that text>".

What it tests in the gateway: pinned tool definitions (docs/pins.md). A test pins the
tool, changes FILE and restarts the server: the changed definition must be held (not
offered, a call refused) until the user accepts it.
"""

import sys

from stdio_server import run, text_result, tool, unknown_tool

NAME = "described"
FILE = sys.argv[1]


def description():
    try:
        with open(FILE, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        return "described"


def tools():
    return [tool("describe", description())]


def call_tool(rid, params):
    if params.get("name") == "describe":
        text_result(rid, f"described: {description()}")
    else:
        unknown_tool(rid, params.get("name"))


if __name__ == "__main__":
    run(NAME, call_tool, tools)

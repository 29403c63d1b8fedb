#!/usr/bin/env python3
"""stderr_say.py: an MCP stdio server that writes to stderr when asked.

Standard library only. At `notifications/initialized` it writes "say: ready" to stderr.
Tool `say {text}`: writes `text` as one line to stderr, then answers "said".

What it tests in the gateway: a server's stderr lines reach `tap mcp logs NAME --follow`
as they are written, not only the tail kept before it was run.
`ping` answers `{}`, unknown notifications are ignored, unknown requests get -32601.
"""

import sys

from stdio_server import run, text_result, tool, unknown_tool

TOOLS = [
    tool(
        "say",
        "Writes the text to stderr",
        {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    )
]


def call_tool(rid, params):
    if params.get("name") == "say":
        print(str((params.get("arguments") or {}).get("text", "")), file=sys.stderr, flush=True)
        text_result(rid, "said")
    else:
        unknown_tool(rid, params.get("name"))


def on_notification(method, params):
    if method == "notifications/initialized":
        print("say: ready", file=sys.stderr, flush=True)


if __name__ == "__main__":
    run("say", call_tool, TOOLS, on_notification=on_notification)

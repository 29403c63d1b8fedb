#!/usr/bin/env python3
"""collide.py: an MCP stdio server whose tool names come from its command line.

Usage: collide.py --tools a,b,c [--name SERVER_NAME]

Standard library only; one JSON-RPC object per line on stdin/stdout. It echoes the client's
protocol version and declares one tool per name in `--tools` (default "a"); each returns the
text "from collide: <name>". `--name` sets `serverInfo.name` (default "collide") so two
copies can be told apart.

What it tests in the gateway: tool-name collisions. Two `mcpServers` entries running this
script with overlapping `--tools` and the name prefix set to "" produce the same exposed
name; the gateway must detect that and apply its rule (reject or report the clash) rather
than let one server's tool shadow the other's silently. With the default prefixes the names
must not clash.
`ping` answers `{}`, unknown notifications are ignored, unknown requests get -32601.
"""

import argparse

from stdio_server import run, text_result, tool, unknown_tool


def main():
    parser = argparse.ArgumentParser(description="MCP server with the tool names given")
    parser.add_argument("--tools", default="a", help="comma-separated tool names")
    parser.add_argument("--name", default="collide", help="serverInfo.name")
    opts = parser.parse_args()
    names = [n for n in (s.strip() for s in opts.tools.split(",")) if n]
    tools = [tool(n, f"Returns \"from collide: {n}\"") for n in names]

    def call_tool(rid, params):
        name = params.get("name")
        if name in names:
            text_result(rid, f"from collide: {name}")
        else:
            unknown_tool(rid, name)

    run(opts.name, call_tool, tools)


if __name__ == "__main__":
    main()

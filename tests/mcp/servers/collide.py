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
import json
import os
import sys


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


def main():
    parser = argparse.ArgumentParser(description="MCP server with the tool names given")
    parser.add_argument("--tools", default="a", help="comma-separated tool names")
    parser.add_argument("--name", default="collide", help="serverInfo.name")
    opts = parser.parse_args()
    names = [n for n in (s.strip() for s in opts.tools.split(",")) if n]
    tools = [
        {
            "name": n,
            "description": f"Returns \"from collide: {n}\"",
            "inputSchema": {"type": "object"},
        }
        for n in names
    ]

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
                    "serverInfo": {"name": opts.name, "version": "1.0.0"},
                },
            )
        elif method == "ping":
            result(rid, {})
        elif method == "tools/list":
            result(rid, {"tools": tools})
        elif method == "tools/call":
            name = params.get("name")
            if name in names:
                result(rid, {"content": [{"type": "text", "text": f"from collide: {name}"}]})
            else:
                error(rid, -32602, f"Unknown tool: {name}")
        else:
            error(rid, -32601, f"Method not found: {method}")

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

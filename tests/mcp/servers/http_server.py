#!/usr/bin/env python3
"""http_server.py: a real Streamable HTTP MCP server (the PyPI `mcp` SDK's `MCPServer` under
uvicorn) on 127.0.0.1 with a port the OS picks; prints `PORT <n>` on stdout once it listens.

Tools: `echo {message}` (text) and `add {a, b}` (structured result). What it tests in the
gateway: a remote server reached over Streamable HTTP (`"type": "http"`) is a provider like a
stdio one.
"""

import socket
import sys

import anyio
import uvicorn
from mcp.server.mcpserver import MCPServer

server = MCPServer("http-fixture")


@server.tool()
def echo(message: str) -> str:
    """Echoes the message."""
    return message


@server.tool()
def add(a: int, b: int) -> dict:
    """Adds two numbers; the sum as a JSON object."""
    return {"sum": a + b}


async def main():
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning")
    await uvicorn.Server(config).serve(sockets=[sock])


if __name__ == "__main__":
    try:
        anyio.run(main)
    except KeyboardInterrupt:
        sys.exit(0)

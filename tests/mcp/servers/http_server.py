#!/usr/bin/env python3
"""http_server.py: a real Streamable HTTP MCP server (the PyPI `mcp` SDK's `MCPServer` under
uvicorn) on 127.0.0.1 with a port the OS picks (or `--port N`); prints `PORT <n>` on stdout
once it listens.

Tools: `echo {message}` (text) and `add {a, b}` (structured result). What it tests in the
gateway: a remote server reached over Streamable HTTP (`"type": "http"`) is a provider like a
stdio one.

Modes (the first argument):
- `--sse`: the same server over the legacy 2024-11-05 HTTP+SSE transport (the SDK's
  `sse_app`: event stream at `/sse`, messages POSTed to `/messages/`), for `"type": "sse"`.
- `--sse-no-endpoint`: `/sse` opens an event stream that never sends the `endpoint` event
  (only keep-alive comments): the gateway must give up at its initialize deadline.
- `--sse-foreign-endpoint`: `/sse` names an endpoint on another origin: the gateway must
  refuse to POST there.
- `--sse-huge`: `/sse` names `/messages/`, and once a message is POSTed there (`initialize`)
  sends one event of 17 MiB instead of an answer: over the gateway's 16 MiB limit of one
  message.
"""

import socket
import sys

import anyio
import uvicorn
from mcp.server.mcpserver import MCPServer
from starlette.applications import Starlette
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

server = MCPServer("http-fixture")


@server.tool()
def echo(message: str) -> str:
    """Echoes the message."""
    return message


@server.tool()
def add(a: int, b: int) -> dict:
    """Adds two numbers; the sum as a JSON object."""
    return {"sum": a + b}


def hostile(first_event):
    """An app whose `/sse` sends `first_event` (if any), then only comments, forever."""

    async def stream():
        if first_event:
            yield first_event
        while True:
            yield ": keep-alive\n\n"
            await anyio.sleep(0.2)

    async def sse(request):
        return StreamingResponse(stream(), media_type="text/event-stream")

    return Starlette(routes=[Route("/sse", sse)])


def huge():
    """An app whose stream answers the first POSTed message with a 17 MiB event."""
    posted = anyio.Event()

    async def stream():
        yield "event: endpoint\ndata: /messages/\n\n"
        await posted.wait()
        yield "event: message\ndata: " + "x" * (17 * 1024 * 1024) + "\n\n"
        while True:
            await anyio.sleep(1)
            yield ": keep-alive\n\n"

    async def sse(request):
        return StreamingResponse(stream(), media_type="text/event-stream")

    async def message(request):
        await request.body()
        posted.set()
        return Response(status_code=202)

    return Starlette(
        routes=[Route("/sse", sse), Route("/messages/", message, methods=["POST"])]
    )


def app(mode):
    if mode == "--sse":
        return server.sse_app(host="127.0.0.1")
    if mode == "--sse-no-endpoint":
        return hostile(None)
    if mode == "--sse-huge":
        return huge()
    if mode == "--sse-foreign-endpoint":
        return hostile("event: endpoint\ndata: http://127.0.0.2:9/messages/?session_id=x\n\n")
    return server.streamable_http_app()


async def main(args):
    port = int(args[args.index("--port") + 1]) if "--port" in args else 0
    mode = next((a for a in args if a.startswith("--sse")), None)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app(mode), log_level="warning")
    await uvicorn.Server(config).serve(sockets=[sock])


if __name__ == "__main__":
    try:
        anyio.run(main, sys.argv[1:])
    except KeyboardInterrupt:
        sys.exit(0)

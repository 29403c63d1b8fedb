"""stdio_server.py: the MCP stdio machinery the fixtures in this folder share (not a fixture).

Standard library only. A fixture script imports it as `import stdio_server` (Python puts the
script's own directory first on `sys.path`), declares its tools and calls `run(...)`.

Framing: one JSON-RPC object per line on stdin and stdout, compact JSON, each line flushed at
once; stderr is free text. If the reader of stdout is gone the server exits 0.

What `run` does for every fixture: answers `initialize` with the protocol version the client
asked for (default "2025-11-25"), the given capabilities and `serverInfo` {name, "1.0.0"};
answers `ping` with `{}`; answers `tools/list` with the tool list (or the fixture's own
`list_tools`); hands `tools/call` to the fixture; answers unknown requests (a 2026-07-28
client's `server/discover` probe included) with -32601; passes notifications to the fixture's
`on_notification` or ignores them; passes a response (to a request the fixture sent the
client) to its `on_response`, or ignores it; answers a line that is not JSON with a -32700
error (id null); ignores blank lines and other JSON (a batch). At end of input it returns (or
calls `at_eof`).
"""

import json
import os
import sys
import threading

DEFAULT_PROTOCOL_VERSION = "2025-11-25"

_out = threading.Lock()
_before_send = None  # flood.py's garbage: called before every message written by send()


def write(data):
    """Write text or bytes to stdout and flush; exit 0 if the reader is gone."""
    if isinstance(data, str):
        data = data.encode()
    with _out:
        try:
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        except (BrokenPipeError, ValueError):
            os._exit(0)  # the reader is gone


def send(msg):
    """Write one JSON-RPC message as one line."""
    if _before_send is not None:
        _before_send()
    write(json.dumps(msg, separators=(",", ":")) + "\n")


def result(rid, res):
    send({"jsonrpc": "2.0", "id": rid, "result": res})


def error(rid, code, message):
    send({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})


def notify(method, params=None):
    msg = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    send(msg)


def text(s):
    """A text content block."""
    return {"type": "text", "text": s}


def text_result(rid, s):
    """Answer a tool call with one text block."""
    result(rid, {"content": [text(s)]})


def unknown_tool(rid, name):
    error(rid, -32602, f"Unknown tool: {name}")


def tool(name, description, input_schema=None, **extra):
    """A tool declaration; `extra` (outputSchema=..., annotations=...) follows inputSchema."""
    return {
        "name": name,
        "description": description,
        "inputSchema": input_schema if input_schema is not None else {"type": "object"},
        **extra,
    }


def echo_tool(**extra):
    """The `echo {message}` tool declaration good.py and flood.py share."""
    return tool(
        "echo",
        "Returns the message",
        {
            "type": "object",
            "properties": {"message": {"type": "string"}},
            "required": ["message"],
        },
        **extra,
    )


def run(
    name,
    call_tool,
    tools=(),
    *,
    capabilities=None,
    list_tools=None,
    requests=None,
    on_notification=None,
    on_response=None,
    before_send=None,
    at_eof=None,
):
    """Serve stdin until end of input.

    name: `serverInfo.name`. call_tool(rid, params): answers (or not) a `tools/call`.
    tools: the tool list, or a function returning it. capabilities: default `{"tools": {}}`.
    list_tools(rid, params): answers `tools/list` instead (paging). requests: {method:
    handler(rid, params)} for further requests. on_notification(method, params).
    on_response(msg): a response of the client (a message with `id` and `result` or `error`).
    before_send(): called before every message written. at_eof(): called at end of input.
    """
    global _before_send
    _before_send = before_send
    caps = capabilities if capabilities is not None else {"tools": {}}
    requests = requests or {}

    def handle(msg):
        method = msg["method"]
        params = msg.get("params") or {}
        if "id" not in msg:  # a notification
            if on_notification is not None:
                on_notification(method, params)
            return
        rid = msg["id"]
        if method == "initialize":
            result(
                rid,
                {
                    "protocolVersion": params.get("protocolVersion", DEFAULT_PROTOCOL_VERSION),
                    "capabilities": caps,
                    "serverInfo": {"name": name, "version": "1.0.0"},
                },
            )
        elif method == "ping":
            result(rid, {})
        elif method in requests:
            requests[method](rid, params)
        elif method == "tools/list":
            if list_tools is not None:
                list_tools(rid, params)
            else:
                result(rid, {"tools": tools() if callable(tools) else tools})
        elif method == "tools/call":
            call_tool(rid, params)
        else:
            error(rid, -32601, f"Method not found: {method}")

    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            if at_eof is not None:
                at_eof()
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
        elif on_response is not None and isinstance(msg, dict) and "id" in msg:
            on_response(msg)
        # Anything else (a response nobody waits for, a batch) is ignored.

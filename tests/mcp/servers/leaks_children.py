#!/usr/bin/env python3
"""leaks_children.py: an MCP stdio server that starts a child process and never reaps it.

Standard library only; one JSON-RPC object per line on stdin/stdout. On start it spawns
`sleep 1000` the careless way: same process group, stdin/stdout/stderr inherited (so the
child also holds the server's stdout pipe open), never waited for or killed. It writes the
child's pid (decimal, then a newline) to the file named by the environment variable
`LEAK_PID_FILE` (written to a temporary name and renamed, so a reader never sees a partial
file); without that variable it writes no file. Otherwise it is a good server: it echoes the
client's protocol version and lists one tool, `ping`, which returns the text "pong".

What it tests in the gateway: stopping a provider must kill its whole process group (the
gateway starts each server in a new group), not only the direct child. After the gateway
stops this server the test checks that the `sleep` pid is gone. Because the child keeps
stdout open, a gateway that waits for EOF on stdout after killing only the direct child
would also hang here.
`ping` requests answer `{}`, unknown notifications are ignored, unknown requests get -32601.
"""

import json
import os
import subprocess
import sys

NAME = "leaks_children"

TOOLS = [{"name": "ping", "description": "Returns \"pong\"", "inputSchema": {"type": "object"}}]


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


def leak():
    child = subprocess.Popen(["sleep", "1000"])  # inherits group and stdio, never reaped
    path = os.environ.get("LEAK_PID_FILE")
    if path:
        tmp = f"{path}.tmp{os.getpid()}"
        with open(tmp, "w") as f:
            f.write(f"{child.pid}\n")
        os.replace(tmp, path)
    print(f"{NAME}: started child sleep pid {child.pid}", file=sys.stderr, flush=True)
    return child


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
                "serverInfo": {"name": NAME, "version": "1.0.0"},
            },
        )
    elif method == "ping":
        result(rid, {})
    elif method == "tools/list":
        result(rid, {"tools": TOOLS})
    elif method == "tools/call":
        name = params.get("name")
        if name == "ping":
            result(rid, {"content": [{"type": "text", "text": "pong"}]})
        else:
            error(rid, -32602, f"Unknown tool: {name}")
    else:
        error(rid, -32601, f"Method not found: {method}")


def main():
    _child = leak()  # kept referenced so Popen's finaliser never touches it
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            os._exit(0)  # exit without any cleanup: the child is left running
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

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

import os
import subprocess
import sys

from stdio_server import run, text_result, tool, unknown_tool

NAME = "leaks_children"

TOOLS = [tool("ping", "Returns \"pong\"")]


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


def call_tool(rid, params):
    name = params.get("name")
    if name == "ping":
        text_result(rid, "pong")
    else:
        unknown_tool(rid, name)


def main():
    _child = leak()  # kept referenced so Popen's finaliser never touches it
    # At end of input, exit without any cleanup: the child is left running.
    run(NAME, call_tool, TOOLS, at_eof=lambda: os._exit(0))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""list_changed.py: an MCP stdio server whose tool list changes at run time.

Standard library only; one JSON-RPC object per line on stdin/stdout. It echoes the client's
protocol version and declares `tools: {listChanged: true}`. Tools:
- `add_tool`: adds a tool `extra_N` (N = 1, 2, ...; each returns the text "extra_N"), sends
  `notifications/tools/list_changed`, then answers "added extra_N".
- `remove_tool`: removes the most recently added `extra_N` (if any), sends
  `notifications/tools/list_changed`, then answers "removed extra_N" (or "nothing to remove",
  with no notification).
The notification is written before the call's answer, so a client that re-lists on the
notification sees the new list by the time it has the answer.

What it tests in the gateway: that it re-lists a server's tools on
`notifications/tools/list_changed` and passes the change on to sessions (new tools become
callable under their prefixed names, removed ones stop being offered).
`ping` answers `{}`, unknown notifications are ignored, unknown requests get -32601.
"""

from stdio_server import notify, run, text_result, tool, unknown_tool

NAME = "list_changed"

BASE_TOOLS = [tool("add_tool", "Adds a tool extra_N"), tool("remove_tool", "Removes the last extra_N")]
extras = []  # names of the added tools, in order
counter = 0


def list_changed():
    notify("notifications/tools/list_changed")


def tools():
    return BASE_TOOLS + [tool(n, f"Returns \"{n}\"") for n in extras]


def call_tool(rid, params):
    global counter
    name = params.get("name")
    if name == "add_tool":
        counter += 1
        extras.append(f"extra_{counter}")
        list_changed()  # before the answer
        text_result(rid, f"added extra_{counter}")
    elif name == "remove_tool":
        if extras:
            gone = extras.pop()
            list_changed()
            text_result(rid, f"removed {gone}")
        else:
            text_result(rid, "nothing to remove")
    elif name in extras:
        text_result(rid, name)
    else:
        unknown_tool(rid, name)


if __name__ == "__main__":
    run(NAME, call_tool, tools, capabilities={"tools": {"listChanged": True}})

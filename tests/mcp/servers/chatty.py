#!/usr/bin/env python3
"""chatty.py: an MCP stdio server that floods its client with notifications.

Tool `spam {count}`: before answering, sends `count` `notifications/tools/list_changed` and
`count` `notifications/message` entries (and, when the call carries a progress token,
`count` progress notifications), then answers "done". Tool `ping_tool` answers "pong".

What it tests in the gateway: what a server sends unasked is bounded. List changes coalesce
into one re-listing (not one per notification), and log and progress notifications beyond a
fixed queue are dropped, so a server cannot make the gateway hold an unbounded backlog while
it is busy; the call still gets its one result and the server keeps serving.
"""

from stdio_server import notify, run, text_result, tool, unknown_tool

TOOLS = [
    tool("spam", "Floods notifications, then answers 'done'",
         {"type": "object", "properties": {"count": {"type": "integer"}}}),
    tool("ping_tool", "Answers 'pong'"),
]


def call_tool(rid, params):
    name = params.get("name")
    if name == "spam":
        count = int((params.get("arguments") or {}).get("count", 1000))
        token = (params.get("_meta") or {}).get("progressToken")
        for i in range(count):
            notify("notifications/tools/list_changed")
            notify("notifications/message", {"level": "info", "data": f"chatter {i}"})
            if token is not None:
                notify("notifications/progress", {"progressToken": token, "progress": i})
        text_result(rid, "done")
    elif name == "ping_tool":
        text_result(rid, "pong")
    else:
        unknown_tool(rid, name)


if __name__ == "__main__":
    run("chatty", call_tool, TOOLS,
        capabilities={"tools": {"listChanged": True}, "logging": {}})

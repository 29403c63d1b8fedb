#!/usr/bin/env python3
"""good.py: a well-behaved MCP stdio server, the reference the hostile fixtures differ from.

Standard library only. MCP stdio framing: one JSON-RPC object per line on stdin and stdout;
stderr is free text. It answers `initialize` with the protocol version the client asked for
and declares `tools: {listChanged: true}` and `logging: {}`; after
`notifications/initialized` it sends one `notifications/message` log entry (level `info`,
data "good server ready") and writes "good: ready" to stderr.

Tools:
- `echo {message}`: returns the message as one text block (annotated read-only).
- `slow {seconds}`: sleeps `seconds` (default 1), sending `notifications/progress` every 0.1 s
  when the request carries `_meta.progressToken`; returns "slept <seconds>". A
  `notifications/cancelled` for its request id stops it: no more progress and no result.
- `image`: returns an image block (a 1x1 PNG, base64) and a text block "a 1x1 PNG".
- `structured`: returns `structuredContent` `{"n": 42}` and the text block `{"n": 42}`;
  declares an `outputSchema`.
- `fails`: returns `isError: true` with the text "it failed" (a tool error, not a JSON-RPC
  error).

What it tests in the gateway: the happy path of an `mcpServers` provider (handshake, tool
list, calls, every content kind passed through unchanged, `structuredContent`, `isError`),
progress forwarding, cancellation forwarding, and that server log notifications and stderr
lines do not disturb anything. `ping` answers `{}`, `logging/setLevel` answers `{}`, unknown
notifications are ignored, unknown requests get JSON-RPC error -32601 (so a 2026-07-28
client's `server/discover` probe falls back to `initialize`), an unknown tool gets -32602.
"""

import json
import sys
import threading

from stdio_server import echo_tool, notify, result, run, text, tool, unknown_tool

NAME = "good"
PNG_1X1 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)

TOOLS = [
    echo_tool(annotations={"readOnlyHint": True, "destructiveHint": False}),
    tool(
        "slow",
        "Sleeps, reporting progress every 0.1 s; honours cancellation",
        {"type": "object", "properties": {"seconds": {"type": "number"}}},
    ),
    tool("image", "Returns a 1x1 PNG and a text block"),
    tool(
        "structured",
        "Returns structuredContent {\"n\": 42}",
        outputSchema={
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
        },
    ),
    tool("fails", "Always fails with isError"),
]

# Request id (as JSON text, so 1 and "1" stay apart) -> Event set by notifications/cancelled.
_running = {}
_running_lock = threading.Lock()


def run_slow(rid, args, meta):
    seconds = float(args.get("seconds", 1))
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    key = json.dumps(rid)
    cancelled = threading.Event()
    with _running_lock:
        _running[key] = cancelled
    try:
        ticks = max(1, round(seconds / 0.1))
        for i in range(1, ticks + 1):
            if cancelled.wait(seconds / ticks):
                return  # cancelled: send nothing more, not even a result
            if token is not None:
                notify(
                    "notifications/progress",
                    {
                        "progressToken": token,
                        "progress": i,
                        "total": ticks,
                        "message": f"tick {i}/{ticks}",
                    },
                )
        if not cancelled.is_set():
            result(rid, {"content": [text(f"slept {args.get('seconds', 1)}")]})
    finally:
        with _running_lock:
            _running.pop(key, None)


def call_tool(rid, params):
    name = params.get("name")
    args = params.get("arguments") or {}
    if name == "echo":
        result(rid, {"content": [text(str(args.get("message", "")))]})
    elif name == "slow":
        threading.Thread(target=run_slow, args=(rid, args, params.get("_meta")), daemon=True).start()
    elif name == "image":
        result(
            rid,
            {
                "content": [
                    {"type": "image", "data": PNG_1X1, "mimeType": "image/png"},
                    text("a 1x1 PNG"),
                ]
            },
        )
    elif name == "structured":
        result(rid, {"content": [text('{"n": 42}')], "structuredContent": {"n": 42}})
    elif name == "fails":
        result(rid, {"content": [text("it failed")], "isError": True})
    else:
        unknown_tool(rid, name)


def on_notification(method, params):
    if method == "notifications/initialized":
        print(f"{NAME}: ready", file=sys.stderr, flush=True)
        notify(
            "notifications/message",
            {"level": "info", "logger": NAME, "data": "good server ready"},
        )
    elif method == "notifications/cancelled":
        with _running_lock:
            ev = _running.get(json.dumps(params.get("requestId")))
        if ev is not None:
            ev.set()


def main():
    run(
        NAME,
        call_tool,
        TOOLS,
        capabilities={"tools": {"listChanged": True}, "logging": {}},
        requests={"logging/setLevel": lambda rid, params: result(rid, {})},
        on_notification=on_notification,
    )


if __name__ == "__main__":
    main()

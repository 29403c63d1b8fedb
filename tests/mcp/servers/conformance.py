#!/usr/bin/env python3
"""conformance.py: the MCP server that the official conformance suite's SERVER scenarios call
(npm @modelcontextprotocol/conformance, `conformance server`), hosted behind the gateway so
the suite tests the gateway's MCP facade end to end: scripts/test-mcp-conformance-server.sh
puts it in the gateway's user mcp.json with `"prefix": ""`, so its tools, prompts and resources
keep the names the scenarios call.

Standard library only, on stdio_server.py. Everything is named and answered as each scenario
asks (the scenario descriptions, `conformance list` and the suite's dist/index.js):

Tools: `test_simple_text`, `test_image_content` (a 1x1 red PNG), `test_audio_content` (a
short silent WAV, audio/wav), `test_embedded_resource`, `test_multiple_content_types`,
`test_tool_with_logging` (three `notifications/message` at info, 50 ms apart),
`test_error_handling` (`isError`), `test_tool_with_progress` (progress 0, 50, 100 of 100 on
the request's progress token, 50 ms apart, and the result right after the last),
`test_sampling {prompt}` (asks the client `sampling/createMessage`),
`test_elicitation {message}`, `test_elicitation_sep1034_defaults`,
`test_elicitation_sep1330_enums` (ask the client `elicitation/create`),
`json_schema_2020_12_tool` (an input schema with `$schema`, `$defs`, `$ref` and
`additionalProperties: false`), `test_reconnection` (answers after 100 ms; closing the
stream mid-call is the HTTP transport's part, the gateway's here).

Resources: `test://static-text` (text/plain), `test://static-binary` (image/png blob),
`test://watched-resource` (subscribable); the template `test://template/{id}/data`
(application/json naming the id). `resources/subscribe` and `resources/unsubscribe` answer
`{}`.

Prompts: `test_simple_prompt`, `test_prompt_with_arguments {arg1, arg2}`,
`test_prompt_with_embedded_resource {resourceUri}`, `test_prompt_with_image`.

Completions: `completion/complete` for `test_prompt_with_arguments`'s arguments and the
template's `id`: the known values that start with what was typed.

Logging: `logging/setLevel` answers `{}` and drops log entries below the level.

The server's own requests (sampling, elicitation) run in a thread per call, so the stdin loop
goes on reading and hands the client's answer to the waiting call (`on_response`).
"""

import base64
import io
import json
import re
import struct
import sys
import threading
import time
import wave
import zlib

from stdio_server import error, notify, result, run, send, text, tool, unknown_tool

NAME = "conformance"


def _png_1x1_red():
    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # 1x1, 8-bit RGB
    idat = zlib.compress(b"\x00\xff\x00\x00")  # filter 0, one red pixel
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")
    return base64.b64encode(png).decode()


def _wav_silence():
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"\x00\x00" * 800)  # 0.1 s
    return base64.b64encode(buf.getvalue()).decode()


PNG = _png_1x1_red()
WAV = _wav_silence()
NO_ARGS = {"type": "object", "properties": {}}


def _string_args(*names, descriptions=None):
    descriptions = descriptions or {}
    return {
        "type": "object",
        "properties": {n: {"type": "string", "description": descriptions.get(n, n)} for n in names},
        "required": list(names),
    }


TOOLS = [
    tool("test_simple_text", "Returns one text block", NO_ARGS),
    tool("test_image_content", "Returns a 1x1 red PNG image block", NO_ARGS),
    tool("test_audio_content", "Returns a short WAV audio block", NO_ARGS),
    tool("test_embedded_resource", "Returns an embedded text resource", NO_ARGS),
    tool("test_multiple_content_types", "Returns text, image and resource blocks", NO_ARGS),
    tool("test_tool_with_logging", "Sends three info log entries while it runs", NO_ARGS),
    tool("test_error_handling", "Always fails with isError", NO_ARGS),
    tool("test_tool_with_progress", "Reports progress 0, 50 and 100 of 100", NO_ARGS),
    tool(
        "test_sampling",
        "Asks the client's model (sampling/createMessage) and returns its answer",
        _string_args("prompt", descriptions={"prompt": "The prompt to send to the LLM"}),
    ),
    tool(
        "test_elicitation",
        "Asks the user (elicitation/create) for a username and an email",
        _string_args("message", descriptions={"message": "The message to show the user"}),
    ),
    tool(
        "test_elicitation_sep1034_defaults",
        "Elicitation whose schema has a default for every primitive type (SEP-1034)",
        NO_ARGS,
    ),
    tool(
        "test_elicitation_sep1330_enums",
        "Elicitation whose schema has the five enum forms (SEP-1330)",
        NO_ARGS,
    ),
    tool(
        "json_schema_2020_12_tool",
        "Tool with JSON Schema 2020-12 features",
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
                }
            },
            "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
            "additionalProperties": False,
        },
    ),
    tool("test_reconnection", "Answers after 100 ms (SSE polling, SEP-1699)", NO_ARGS),
]

RESOURCES = [
    {
        "uri": "test://static-text",
        "name": "static-text",
        "description": "A static text resource",
        "mimeType": "text/plain",
    },
    {
        "uri": "test://static-binary",
        "name": "static-binary",
        "description": "A static binary resource (a 1x1 PNG)",
        "mimeType": "image/png",
    },
    {
        "uri": "test://watched-resource",
        "name": "watched-resource",
        "description": "A resource to subscribe to",
        "mimeType": "text/plain",
    },
]
TEMPLATE = {
    "uriTemplate": "test://template/{id}/data",
    "name": "template-data",
    "description": "Data for an id",
    "mimeType": "application/json",
}
TEMPLATE_RE = re.compile(r"^test://template/([^/]+)/data$")

PROMPTS = [
    {"name": "test_simple_prompt", "description": "A prompt without arguments"},
    {
        "name": "test_prompt_with_arguments",
        "description": "A prompt with two arguments",
        "arguments": [
            {"name": "arg1", "description": "First test argument", "required": True},
            {"name": "arg2", "description": "Second test argument", "required": True},
        ],
    },
    {
        "name": "test_prompt_with_embedded_resource",
        "description": "A prompt that embeds a resource",
        "arguments": [
            {"name": "resourceUri", "description": "URI of the resource to embed", "required": True}
        ],
    },
    {"name": "test_prompt_with_image", "description": "A prompt with an image"},
]

COMPLETIONS = {
    ("ref/prompt", "test_prompt_with_arguments", "arg1"): ["paris", "park", "party", "test", "testing"],
    ("ref/prompt", "test_prompt_with_arguments", "arg2"): ["world", "word", "work"],
    ("ref/resource", TEMPLATE["uriTemplate"], "id"): ["1", "2", "3", "123"],
}

LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
_level = ["debug"]


def log(level, message):
    if LEVELS.index(level) >= LEVELS.index(_level[0]):
        notify("notifications/message", {"level": level, "logger": NAME, "data": message})


# The server's own requests to the client: request id -> [Event, response].
_asked = {}
_asked_lock = threading.Lock()
_next_id = [0]


def ask(method, params, timeout=30):
    """Sends the client a request and waits for its answer: (result, None) or (None, error)."""
    with _asked_lock:
        _next_id[0] += 1
        rid = f"{NAME}-{_next_id[0]}"
        slot = _asked[rid] = [threading.Event(), None]
    send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    if not slot[0].wait(timeout):
        with _asked_lock:
            _asked.pop(rid, None)
        return None, {"message": f"no answer to {method} within {timeout} s"}
    msg = slot[1]
    return msg.get("result"), msg.get("error")


def on_response(msg):
    with _asked_lock:
        slot = _asked.pop(msg.get("id"), None) if isinstance(msg.get("id"), str) else None
    if slot is not None:
        slot[1] = msg
        slot[0].set()


def blocks(*content, is_error=False):
    out = {"content": list(content)}
    if is_error:
        out["isError"] = True
    return out


def elicit(rid, message, schema):
    answer, err = ask("elicitation/create", {"message": message, "requestedSchema": schema})
    if err is not None:
        result(rid, blocks(text(f"Elicitation error: {err.get('message')}"), is_error=True))
        return None
    return answer


def run_tool(rid, name, args, meta):
    if name == "test_tool_with_logging":
        log("info", "Tool execution started")
        time.sleep(0.05)
        log("info", "Tool processing data")
        time.sleep(0.05)
        log("info", "Tool execution completed")
        result(rid, blocks(text("Tool with logging executed successfully")))
    elif name == "test_tool_with_progress":
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        for i, progress in enumerate((0, 50, 100)):
            if i:
                time.sleep(0.05)
            if token is not None:
                notify(
                    "notifications/progress",
                    {"progressToken": token, "progress": progress, "total": 100},
                )
        # The result right after the last progress: the gateway must keep their order.
        result(rid, blocks(text("Tool with progress executed successfully")))
    elif name == "test_sampling":
        answer, err = ask(
            "sampling/createMessage",
            {
                "messages": [
                    {"role": "user", "content": {"type": "text", "text": str(args.get("prompt", ""))}}
                ],
                "maxTokens": 100,
            },
        )
        if err is not None:
            result(rid, blocks(text(f"Sampling error: {err.get('message')}"), is_error=True))
            return
        content = (answer or {}).get("content") or {}
        said = content.get("text", "") if isinstance(content, dict) else json.dumps(content)
        result(rid, blocks(text(f"LLM response: {said}")))
    elif name == "test_elicitation":
        answer = elicit(
            rid,
            str(args.get("message", "")),
            {
                "type": "object",
                "properties": {
                    "username": {"type": "string", "description": "User's response"},
                    "email": {"type": "string", "description": "User's email address"},
                },
                "required": ["username", "email"],
            },
        )
        if answer is not None:
            result(
                rid,
                blocks(
                    text(
                        f"User response: action={answer.get('action')}, "
                        f"content={json.dumps(answer.get('content', {}))}"
                    )
                ),
            )
    elif name in ("test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums"):
        if name == "test_elicitation_sep1034_defaults":
            message, properties = "Please review and update the form fields with defaults", {
                "name": {"type": "string", "description": "User name", "default": "John Doe"},
                "age": {"type": "integer", "description": "User age", "default": 30},
                "score": {"type": "number", "description": "User score", "default": 95.5},
                "status": {
                    "type": "string",
                    "description": "User status",
                    "enum": ["active", "inactive", "pending"],
                    "default": "active",
                },
                "verified": {"type": "boolean", "description": "Verified", "default": True},
            }
        else:
            message, properties = "Please pick from the enum fields", {
                "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                "titledSingle": {
                    "type": "string",
                    "oneOf": [
                        {"const": "value1", "title": "First Option"},
                        {"const": "value2", "title": "Second Option"},
                        {"const": "value3", "title": "Third Option"},
                    ],
                },
                "legacyEnum": {
                    "type": "string",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"],
                },
                "untitledMulti": {
                    "type": "array",
                    "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
                },
                "titledMulti": {
                    "type": "array",
                    "items": {
                        "anyOf": [
                            {"const": "value1", "title": "First Choice"},
                            {"const": "value2", "title": "Second Choice"},
                            {"const": "value3", "title": "Third Choice"},
                        ]
                    },
                },
            }
        answer = elicit(rid, message, {"type": "object", "properties": properties, "required": []})
        if answer is not None:
            result(
                rid,
                blocks(
                    text(
                        f"Elicitation completed: action={answer.get('action')}, "
                        f"content={json.dumps(answer.get('content', {}))}"
                    )
                ),
            )
    elif name == "test_reconnection":
        time.sleep(0.1)
        result(rid, blocks(text("Reconnection test completed successfully")))


THREADED = {
    "test_tool_with_logging",
    "test_tool_with_progress",
    "test_sampling",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "test_reconnection",
}


def call_tool(rid, params):
    name = params.get("name")
    args = params.get("arguments") or {}
    if name in THREADED:
        threading.Thread(
            target=run_tool, args=(rid, name, args, params.get("_meta")), daemon=True
        ).start()
    elif name == "test_simple_text":
        result(rid, blocks(text("This is a simple text response for testing.")))
    elif name == "test_image_content":
        result(rid, blocks({"type": "image", "data": PNG, "mimeType": "image/png"}))
    elif name == "test_audio_content":
        result(rid, blocks({"type": "audio", "data": WAV, "mimeType": "audio/wav"}))
    elif name == "test_embedded_resource":
        result(
            rid,
            blocks(
                {
                    "type": "resource",
                    "resource": {
                        "uri": "test://embedded-resource",
                        "mimeType": "text/plain",
                        "text": "This is an embedded resource content.",
                    },
                }
            ),
        )
    elif name == "test_multiple_content_types":
        result(
            rid,
            blocks(
                text("Multiple content types test:"),
                {"type": "image", "data": PNG, "mimeType": "image/png"},
                {
                    "type": "resource",
                    "resource": {
                        "uri": "test://mixed-content-resource",
                        "mimeType": "application/json",
                        "text": json.dumps({"test": "data", "value": 123}),
                    },
                },
            ),
        )
    elif name == "test_error_handling":
        result(rid, blocks(text("This tool intentionally returns an error for testing"), is_error=True))
    elif name == "json_schema_2020_12_tool":
        result(rid, blocks(text(f"json_schema_2020_12_tool got {json.dumps(args)}")))
    else:
        unknown_tool(rid, name)


def read_resource(rid, params):
    uri = params.get("uri", "")
    if uri == "test://static-text":
        contents = {"uri": uri, "mimeType": "text/plain", "text": "This is the content of the static text resource."}
    elif uri == "test://static-binary":
        contents = {"uri": uri, "mimeType": "image/png", "blob": PNG}
    elif uri == "test://watched-resource":
        contents = {"uri": uri, "mimeType": "text/plain", "text": "Watched resource content"}
    elif m := TEMPLATE_RE.match(uri):
        body = {"id": m.group(1), "templateTest": True, "data": f"Data for ID: {m.group(1)}"}
        contents = {"uri": uri, "mimeType": "application/json", "text": json.dumps(body)}
    else:
        error(rid, -32002, f"Resource not found: {uri}")
        return
    result(rid, {"contents": [contents]})


def get_prompt(rid, params):
    name = params.get("name")
    args = params.get("arguments") or {}

    def user(content):
        return {"role": "user", "content": content}

    if name == "test_simple_prompt":
        messages = [user(text("This is a simple prompt for testing."))]
    elif name == "test_prompt_with_arguments":
        a1, a2 = args.get("arg1", ""), args.get("arg2", "")
        messages = [user(text(f"Prompt with arguments: arg1='{a1}', arg2='{a2}'"))]
    elif name == "test_prompt_with_embedded_resource":
        resource = {
            "uri": args.get("resourceUri", ""),
            "mimeType": "text/plain",
            "text": "Embedded resource content for testing.",
        }
        messages = [
            user({"type": "resource", "resource": resource}),
            user(text("Please process the embedded resource above.")),
        ]
    elif name == "test_prompt_with_image":
        messages = [
            user({"type": "image", "data": PNG, "mimeType": "image/png"}),
            user(text("Please analyze the image above.")),
        ]
    else:
        error(rid, -32602, f"Unknown prompt: {name}")
        return
    result(rid, {"messages": messages})


def complete(rid, params):
    ref = params.get("ref") or {}
    argument = params.get("argument") or {}
    key = (ref.get("type"), ref.get("name") or ref.get("uri"), argument.get("name"))
    typed = str(argument.get("value", ""))
    values = [v for v in COMPLETIONS.get(key, []) if v.startswith(typed)]
    result(rid, {"completion": {"values": values, "total": len(values), "hasMore": False}})


def set_level(rid, params):
    level = params.get("level")
    if level not in LEVELS:
        error(rid, -32602, f"Unknown log level: {level}")
        return
    _level[0] = level
    result(rid, {})


def on_notification(method, params):
    if method == "notifications/initialized":
        print(f"{NAME}: ready", file=sys.stderr, flush=True)


def main():
    run(
        NAME,
        call_tool,
        TOOLS,
        capabilities={
            "tools": {},
            "resources": {"subscribe": True},
            "prompts": {},
            "completions": {},
            "logging": {},
        },
        requests={
            "resources/list": lambda rid, p: result(rid, {"resources": RESOURCES}),
            "resources/templates/list": lambda rid, p: result(rid, {"resourceTemplates": [TEMPLATE]}),
            "resources/read": read_resource,
            "resources/subscribe": lambda rid, p: result(rid, {}),
            "resources/unsubscribe": lambda rid, p: result(rid, {}),
            "prompts/list": lambda rid, p: result(rid, {"prompts": PROMPTS}),
            "prompts/get": get_prompt,
            "completion/complete": complete,
            "logging/setLevel": set_level,
        },
        on_notification=on_notification,
        on_response=on_response,
    )


if __name__ == "__main__":
    main()

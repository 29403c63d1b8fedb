"""A real MCP client (PyPI `mcp`) driven line by line, for the gateway's MCP tests.

    py_client.py http URL MODE     # Streamable HTTP; the host token comes from $TAP_HOST_TOKEN
    py_client.py stdio SESSION MODE   # launches `$TAP_BIN mcp --session SESSION` (TAP_HOME inherited)

MODE is `legacy` (the initialize generation), `2026-07-28` (stateless) or `auto`.
Commands arrive as JSON lines on stdin; every observation leaves as a JSON line on stdout:
  {"op": "tools"}                                  -> {"op": "tools", "names": [...]}
  {"op": "call", "id", "tool", "args", "progress", "traceparent"?} -> {"op": "progress", ...}*, {"op": "result", ...}
  {"op": "cancel", "id"}                           -> the call's task is cancelled
  {"op": "resources"} / {"op": "read", "uri"}      -> {"op": "resources"|"read", ...}
  {"op": "templates"}                              -> {"op": "templates", "uriTemplates": [...]}
  {"op": "complete", "prompt": NAME | "template": URI, "argument": {"name": N, "value": V},
   "context": {ARG: VALUE}}                          -> {"op": "complete", "values": [...]}
  {"op": "prompts"} / {"op": "prompt", "name", "args"} -> {"op": "prompts"|"prompt", ...}
  {"op": "watch", "uri"?}                          -> {"op": "notice", "kind", ...} as they come
  {"op": "elicit_answer", "action", "content"?}    -> answers the oldest elicitation shown
                                                      (TAP_PY_CLIENT_ELICIT=1: the client declares
                                                      elicitation and shows each request as
                                                      {"op": "elicitation", "message", "schema"}, and
                                                      {"op": "elicitation_withdrawn"} when the server
                                                      cancels one unanswered)
  {"op": "exit"}
"""

import json
import os
import sys

import anyio
import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


def emit(**fields):
    print(json.dumps(fields), flush=True)


async def on_message(message):
    # The initialize generation: notifications arrive here.
    root = getattr(message, "root", message)
    method = getattr(root, "method", None)
    if method == "notifications/tools/list_changed":
        emit(op="notice", kind="tools_changed")
    elif method == "notifications/resources/updated":
        emit(op="notice", kind="resource_updated", uri=str(root.params.uri))
    elif method == "notifications/resources/list_changed":
        emit(op="notice", kind="resources_changed")
    elif method == "notifications/prompts/list_changed":
        emit(op="notice", kind="prompts_changed")
    elif method == "notifications/message":
        emit(op="notice", kind="message", data=root.params.data, level=str(root.params.level))


def transport(kind, target):
    # TAP_PY_CLIENT_PROFILE: the profile the client asks for (header, or `tap mcp --profile`).
    profile = os.environ.get("TAP_PY_CLIENT_PROFILE")
    if kind == "http":
        headers = {"Authorization": "Bearer " + os.environ["TAP_HOST_TOKEN"]}
        if profile:
            headers["tap-profile"] = profile
        return streamable_http_client(target, http_client=httpx2.AsyncClient(headers=headers, timeout=60))
    return StdioServerParameters(
        command=os.environ["TAP_BIN"],
        args=["mcp", "--session", target] + (["--profile", profile] if profile else []),
        env={k: v for k, v in os.environ.items() if k.startswith("TAP_") or k in ("PATH", "HOME")},
    )


def content_of(result):
    out = []
    for block in result.content:
        kind = getattr(block, "type", None)
        if kind == "text":
            out.append({"type": "text", "text": block.text})
        elif kind == "resource_link":
            out.append({"type": "resource_link", "uri": str(block.uri), "mimeType": block.mime_type})
        elif kind == "resource":
            res = block.resource
            out.append({"type": "resource", "uri": str(res.uri), "text": getattr(res, "text", None)})
        elif kind in ("image", "audio"):
            out.append({"type": kind, "mimeType": block.mime_type, "bytes": len(block.data)})
        else:
            out.append({"type": str(kind)})
    return out


async def run_call(client, cmd, calls):
    call_id = cmd["id"]

    async def progress(progress, total, message):
        emit(op="progress", id=call_id, progress=progress, message=message)

    with anyio.CancelScope() as scope:
        calls[call_id] = scope
        try:
            # OpenTelemetry's convention: the caller's trace context in `_meta`.
            meta = {"traceparent": cmd["traceparent"]} if cmd.get("traceparent") else None
            result = await client.call_tool(
                cmd["tool"], cmd.get("args", {}),
                progress_callback=progress if cmd.get("progress") else None,
                meta=meta,
            )
            emit(op="result", id=call_id, isError=bool(result.is_error),
                 content=content_of(result), structured=result.structured_content)
        except Exception as e:  # a JSON-RPC error from the server
            emit(op="error", id=call_id, message=str(e))
    if scope.cancelled_caught:
        emit(op="cancelled", id=call_id)


async def watch(client, cmd):
    uri = cmd.get("uri")
    if client.protocol_version < "2026-07-28":
        if uri:
            await client.subscribe_resource(uri)
        emit(op="watching")
        return
    async with client.listen(tools_list_changed=True,
                             resource_subscriptions=[uri] if uri else []) as sub:
        emit(op="watching")
        async for event in sub:
            name = type(event).__name__
            if name == "ToolsListChanged":
                emit(op="notice", kind="tools_changed")
            elif name == "ResourceUpdated":
                emit(op="notice", kind="resource_updated", uri=event.uri)


async def answer_sampling(context, params):
    # A model that repeats what it was asked: enough to see the request and answer travel.
    from mcp import types
    asked = " ".join(getattr(m.content, "text", "") for m in params.messages)
    return types.CreateMessageResult(role="assistant", model="fake-model",
                                     content=types.TextContent(type="text", text="sampled: " + asked))


async def answer_elicitation(context, params):
    from mcp import types
    return types.ElicitResult(action="accept", content={"name": "Ada Lovelace"})


def asking_user(answers_in):
    # A client whose user answers each elicitation: the test sees the request and says the
    # answer (or never does, as a user who walked away).
    async def elicitation(context, params):
        from mcp import types
        emit(op="elicitation", message=params.message,
             schema=getattr(params, "requested_schema", None))
        try:
            answer = await answers_in.receive()
        except anyio.get_cancelled_exc_class():
            # The server withdrew its request (notifications/cancelled): the dialog closes.
            emit(op="elicitation_withdrawn")
            raise
        return types.ElicitResult(action=answer["action"], content=answer.get("content"))
    return elicitation


async def main():
    kind, target, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    # TAP_PY_CLIENT_ANSWERS=1: the client declares sampling and elicitation and answers them.
    answers = {}
    if os.environ.get("TAP_PY_CLIENT_ANSWERS") == "1":
        answers = {"sampling_callback": answer_sampling, "elicitation_callback": answer_elicitation}
    # TAP_PY_CLIENT_ELICIT=1: it declares elicitation; the test answers (`elicit_answer`).
    answers_out, answers_in = anyio.create_memory_object_stream(16)
    if os.environ.get("TAP_PY_CLIENT_ELICIT") == "1":
        answers = {"elicitation_callback": asking_user(answers_in)}
    async with Client(transport(kind, target), mode=mode, message_handler=on_message, **answers) as client:
        emit(op="ready", protocol=client.protocol_version)
        calls = {}
        async with anyio.create_task_group() as tg:
            while True:
                line = await anyio.to_thread.run_sync(sys.stdin.readline)
                if not line:
                    break
                cmd = json.loads(line)
                op = cmd["op"]
                if op == "exit":
                    break
                elif op == "tools":
                    result = await client.list_tools(cache_mode="bypass")
                    emit(op="tools", names=[t.name for t in result.tools],
                         schemas={t.name: t.input_schema for t in result.tools},
                         annotations={t.name: t.annotations.model_dump(by_alias=True, exclude_none=True)
                                      for t in result.tools if t.annotations},
                         outputSchemas={t.name: t.output_schema for t in result.tools if t.output_schema})
                elif op == "call":
                    tg.start_soon(run_call, client, cmd, calls)
                elif op == "cancel":
                    calls[cmd["id"]].cancel()
                elif op == "resources":
                    result = await client.list_resources()
                    emit(op="resources", uris=[str(r.uri) for r in result.resources])
                elif op == "templates":
                    result = await client.list_resource_templates()
                    emit(op="templates", uriTemplates=[t.uri_template for t in result.resource_templates])
                elif op == "read":
                    try:
                        result = await client.read_resource(cmd["uri"])
                        emit(op="read", text=result.contents[0].text)
                    except Exception as e:
                        emit(op="error", message=str(e))
                elif op == "prompts":
                    result = await client.list_prompts()
                    emit(op="prompts", names=[p.name for p in result.prompts],
                         prompts=[{"name": p.name, "description": p.description,
                                   "arguments": [{"name": a.name, "description": a.description,
                                                  "required": a.required}
                                                 for a in (p.arguments or [])]}
                                  for p in result.prompts])
                elif op == "prompt":
                    result = await client.get_prompt(cmd["name"], cmd.get("args", {}))
                    emit(op="prompt", text=result.messages[0].content.text,
                         description=result.description, messages=len(result.messages))
                elif op == "complete":
                    from mcp import types
                    ref = (types.PromptReference(type="ref/prompt", name=cmd["prompt"]) if "prompt" in cmd
                           else types.ResourceTemplateReference(type="ref/resource", uri=cmd["template"]))
                    result = await client.complete(ref, cmd["argument"], cmd.get("context"))
                    emit(op="complete", values=result.completion.values)
                elif op == "watch":
                    tg.start_soon(watch, client, cmd)
                elif op == "elicit_answer":
                    await answers_out.send(cmd)
            tg.cancel_scope.cancel()


if __name__ == "__main__":
    anyio.run(main)

# Copied from the spec: /work/shared/spec/provider-interface-v2.md, "What a minimal
# provider looks like" → "Python (project provider — token auth)".
# Differences from the spec text (no other token, name or statement is changed):
# - the URL is TAP_GATEWAY_URL when set (the tests use a random port; `eval "$(tap env)"`
#   sets it), else the spec's "ws://localhost:9400";
# - it fails soft: a call without a string `expr` is answered with an error (the spec's
#   version answered the KeyError's text as if it were the result).
# The spec's code block has lost its indentation; it is restored here (Python needs it),
# following the block structure the code implies.
# Run by crates/tap-cli/tests/spec_providers.rs.

import asyncio, json, os, websockets

TOKEN = os.environ["TAP_PROVIDER_TOKEN"]

async def provider():
    async with websockets.connect(os.environ.get("TAP_GATEWAY_URL", "ws://localhost:9400")) as ws:
        await ws.send(json.dumps({"type": "auth", "token": TOKEN}))

        async for raw in ws:
            msg = json.loads(raw)

            if msg["type"] == "sessions":
                await ws.send(json.dumps({
                    "type": "hello",
                    "name": "python-provider",
                    "protocolVersion": 2,
                    "session": msg["active"][0]["id"] if msg["active"] else "all",
                    "tools": [{
                        "name": "compute",
                        "description": "Evaluate a Python expression",
                        "parameters": {
                            "type": "object",
                            "properties": {"expr": {"type": "string"}},
                            "required": ["expr"]
                        }
                    }]
                }))

            if msg["type"] == "tool.call" and msg["tool"] == "compute" \
                    and not isinstance((msg.get("args") or {}).get("expr"), str):
                await ws.send(json.dumps({
                    "type": "tool.result",
                    "id": msg["id"],
                    "error": "'expr' must be a string",
                    "errorCode": "INVALID_JSON"
                }))

            elif msg["type"] == "tool.call" and msg["tool"] == "compute":
                try:
                    result = eval(msg["args"]["expr"])
                except Exception as e:
                    result = str(e)
                await ws.send(json.dumps({
                    "type": "tool.result",
                    "id": msg["id"],
                    "data": result
                }))

            if msg["type"] == "tool.cancel":
                await ws.send(json.dumps({
                    "type": "tool.result",
                    "id": msg["id"],
                    "error": "Cancelled",
                    "errorCode": "CANCELLED"
                }))

asyncio.run(provider())

# Copied from the spec: /work/shared/spec/provider-interface-core-profile.md,
# "Complete example — Python" (Provider Interface — Core Profile).
# Differences from the spec text (no other token, name or statement is changed):
# - the URL is TAP_GATEWAY_URL when set (the tests use a random port; `eval "$(tap env)"`
#   sets it), else the spec's "ws://localhost:9400";
# - the name is "example-provider-python", so it can run beside the Node example (both
#   are "example-provider" in the spec; the second would get DUPLICATE_INSTANCE);
# - it fails soft: a call without a string `name` is answered with an error instead of a
#   KeyError that ends the process.
# The spec's code block has lost its indentation; it is restored here (Python needs it),
# following the block structure the code implies.
# Run by crates/tap-cli/tests/spec_providers.rs.

import asyncio, json, os, websockets

TOKEN = os.environ["TAP_PROVIDER_TOKEN"]

async def connect():
    while True:
        try:
            async with websockets.connect(os.environ.get("TAP_GATEWAY_URL", "ws://localhost:9400")) as ws:
                await ws.send(json.dumps({"type": "auth", "token": TOKEN}))

                async for raw in ws:
                    msg = json.loads(raw)

                    if msg["type"] == "sessions":
                        if not msg["active"]:
                            return
                        await ws.send(json.dumps({
                            "type": "hello", "name": "example-provider-python",
                            "protocolVersion": 2, "session": msg["active"][0]["id"],
                            "tools": [{
                                "name": "greet", "description": "Greet someone by name",
                                "parameters": {
                                    "type": "object",
                                    "properties": {"name": {"type": "string"}},
                                    "required": ["name"],
                                },
                            }],
                        }))

                    elif msg["type"] == "hello.ack":
                        print(f"Registered as {msg['providerId']}")

                    elif msg["type"] == "tool.call" and not isinstance((msg.get("args") or {}).get("name"), str):
                        await ws.send(json.dumps({
                            "type": "tool.result", "id": msg["id"],
                            "error": "'name' must be a string", "errorCode": "INVALID_JSON",
                        }))

                    elif msg["type"] == "tool.call":
                        await ws.send(json.dumps({
                            "type": "tool.result", "id": msg["id"],
                            "data": f"Hello, {msg['args']['name']}!",
                        }))

                    elif msg["type"] == "tool.cancel":
                        await ws.send(json.dumps({
                            "type": "tool.result", "id": msg["id"],
                            "error": "Cancelled", "errorCode": "CANCELLED",
                        }))

                    elif msg["type"] == "session.lifecycle":
                        if msg["state"] == "shutdown.pending":
                            await ws.send(json.dumps({"type": "goodbye", "reason": "session ending"}))
                            return

                    elif msg["type"] == "error":
                        print(f"Error [{msg['code']}]: {msg['message']}")
                        if msg["code"] in ("AUTH_FAILED", "UNSUPPORTED_VERSION"):
                            return
                    # else: ignore unknown types (forward compat)

        except (ConnectionError, websockets.ConnectionClosed):
            print("Disconnected. Reconnecting in 5s...")
            await asyncio.sleep(5)

asyncio.run(connect())

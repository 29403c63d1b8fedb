// Copied from the spec: /work/shared/spec/provider-interface-core-profile.md,
// "Complete example — Node.js" (docs: Provider Interface — Core Profile).
// Only the `new WebSocket(...)` URL line differs: the spec's "ws://localhost:9400" is
// read from TAP_GATEWAY_URL so the tests can point it at a gateway on a random port.
// Everything else is the spec text byte for byte (the spec's code block is unindented).
// Run by crates/tap-cli/tests/spec_providers.rs.

import WebSocket from "ws";

const TOKEN = process.env.TAP_PROVIDER_TOKEN;

function connect() {
const ws = new WebSocket(process.env.TAP_GATEWAY_URL);

ws.on("open", () => {
ws.send(JSON.stringify({ type: "auth", token: TOKEN }));
});

ws.on("message", (raw) => {
const msg = JSON.parse(raw);

switch (msg.type) {
case "sessions":
if (!msg.active.length) { ws.close(); return; }
ws.send(JSON.stringify({
type: "hello", name: "example-provider", protocolVersion: 2,
session: msg.active[0].id,
tools: [{
name: "greet", description: "Greet someone by name",
parameters: {
type: "object",
properties: { name: { type: "string" } },
required: ["name"]
}
}]
}));
break;

case "hello.ack":
console.log(`Registered as ${msg.providerId}`);
break;

case "tool.call":
ws.send(JSON.stringify({
type: "tool.result", id: msg.id,
data: `Hello, ${msg.args.name}!`
}));
break;

case "tool.cancel":
ws.send(JSON.stringify({
type: "tool.result", id: msg.id,
error: "Cancelled", errorCode: "CANCELLED"
}));
break;

case "session.lifecycle":
if (msg.state === "shutdown.pending") {
ws.send(JSON.stringify({ type: "goodbye", reason: "session ending" }));
ws.close();
}
break;

case "error":
console.error(`Error [${msg.code}]: ${msg.message}`);
if (msg.code === "AUTH_FAILED" || msg.code === "UNSUPPORTED_VERSION") ws.close();
break;

default: break; // forward compat: ignore unknown types
}
});

ws.on("close", () => setTimeout(connect, 5000));
}

connect();

// Copied from the spec: /work/shared/spec/provider-interface-core-profile.md,
// "Complete example — Node.js" (docs: Provider Interface — Core Profile).
// Differences from the spec text (otherwise byte for byte; the spec's block is unindented):
// - the URL is TAP_GATEWAY_URL when set (the tests use a random port; `eval "$(tap env)"`
//   sets it), else the spec's "ws://localhost:9400";
// - it fails soft: a call without a string `name` is answered with an error instead of
//   "Hello, undefined!" (or a TypeError when `args` is missing).
// Run by crates/tap-cli/tests/spec_providers.rs.

import WebSocket from "ws";

const TOKEN = process.env.TAP_PROVIDER_TOKEN;

function connect() {
const ws = new WebSocket(process.env.TAP_GATEWAY_URL ?? "ws://localhost:9400");

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
if (typeof msg.args?.name !== "string") {
ws.send(JSON.stringify({
type: "tool.result", id: msg.id,
error: "'name' must be a string", errorCode: "INVALID_JSON"
}));
break;
}
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

// Copied from the spec: /work/shared/spec/provider-interface-v2.md, "What a minimal
// provider looks like" → "Node.js (project provider — token auth)".
// Only the `new WebSocket(...)` URL line differs: the spec's "ws://localhost:9400" is
// read from TAP_GATEWAY_URL so the tests can point it at a gateway on a random port.
// Everything else is the spec text byte for byte (the spec's code block is unindented).
// Run by crates/tap-cli/tests/spec_providers.rs.

import WebSocket from "ws";

const TOKEN = process.env.TAP_PROVIDER_TOKEN;
const ws = new WebSocket(process.env.TAP_GATEWAY_URL);

ws.on("open", () => {
ws.send(JSON.stringify({ type: "auth", token: TOKEN }));
});

ws.on("message", (raw) => {
const msg = JSON.parse(raw);

if (msg.type === "sessions") {
ws.send(JSON.stringify({
type: "hello",
name: "hello-provider",
protocolVersion: 2,
session: msg.active[0]?.id ?? "all",
tools: [{
name: "say_hello",
description: "Says hello to someone",
parameters: {
type: "object",
properties: { name: { type: "string" } },
required: ["name"]
}
}]
}));
}

if (msg.type === "tool.call" && msg.tool === "say_hello") {
ws.send(JSON.stringify({
type: "tool.result",
id: msg.id,
data: `Hello, ${msg.args.name}!`
}));
}

if (msg.type === "tool.cancel") {
ws.send(JSON.stringify({
type: "tool.result",
id: msg.id,
error: "Cancelled",
errorCode: "CANCELLED"
}));
}

if (msg.type === "error") {
console.error(`Gateway error: ${msg.code} — ${msg.message}`);
}
});

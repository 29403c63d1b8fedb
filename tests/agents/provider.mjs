// The test provider, run by the gateway as a project provider (tap.config.json beside the
// agent's working directory: `node provider.mjs <record.jsonl>`). Tools:
// - `weather {city}` answers `sunny in <city>`;
// - `launch_rockets` answers `launched` (never called: a second tool the model must be offered).
// Its `hello.ack` (as `{"ready": true}`) and every `tool.call` it receives are appended to the
// record file as JSON lines, so a test knows when its tools are in the session and which
// calls reached it.

import fs from "node:fs";
import WebSocket from "ws";

const record = process.argv[2];
const tools = [
  { name: "weather", description: "The weather in a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
  { name: "launch_rockets", description: "Launches the rockets", parameters: { type: "object", properties: {} } },
];
const ws = new WebSocket(process.env.TAP_GATEWAY_URL);
const send = (m) => ws.send(JSON.stringify(m));
ws.on("open", () => send({ type: "auth", token: process.env.TAP_PROVIDER_TOKEN }));
ws.on("message", (raw) => {
  const msg = JSON.parse(raw);
  if (msg.type === "sessions") {
    // No `session`: a project provider's hello binds to the session it was started for.
    send({ type: "hello", name: "forecasts", protocolVersion: 2, tools });
  } else if (msg.type === "hello.ack") {
    fs.appendFileSync(record, `${JSON.stringify({ ready: true, sessionId: msg.sessionId })}\n`);
  } else if (msg.type === "tool.call") {
    fs.appendFileSync(record, `${JSON.stringify({ tool: msg.tool, args: msg.args })}\n`);
    const data = msg.tool === "weather" ? `sunny in ${msg.args?.city}` : "launched";
    send({ type: "tool.result", id: msg.id, data });
  } else if (msg.type === "session.lifecycle" && msg.state === "shutdown.pending") {
    send({ type: "shutdown.ready", sessionId: msg.sessionId });
  } else if (msg.type === "error") {
    console.error(`forecasts: gateway error ${msg.code}: ${msg.message}`);
  }
});

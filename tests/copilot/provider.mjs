// A scripted provider for the Copilot tests, as a project provider (run by the gateway from
// tap.config.json: `node provider.mjs <config.json>`) or in the test process (`startProvider`).
//
// Config: { name, tools: [{name, reply, push?, progress?}], hello?: {extra hello fields},
//           onRelease?: push, record?: file }
// - a tool answers `<reply> <args as JSON>`, pushing `push` and sending `progress` as its
//   `tool.progress` first when it has them; a tool with `file: {name, base64, mimeType}`
//   writes those bytes into its persistDir and answers with that file (a file result);
// - with `record`, every `hello.ack`, `session.event` and `session.lifecycle` it receives is
//   appended to that file as a JSON line, so a test can see what a gateway-run provider saw;
// - the tool `hold` answers only once the tool `release` is called (from `tap call`), which
//   lets a test keep a Copilot turn running while it changes the session; `onRelease` is
//   pushed just before `hold` answers.

import WebSocket from "ws";
import fs from "node:fs";
import path from "node:path";

export function startProvider(config, { url, token, session } = {}) {
  const ws = new WebSocket(url ?? process.env.TAP_GATEWAY_URL);
  const calls = [];
  let held = null;
  let persistDir; // from hello.ack: where a file result is written
  let bound;
  const ready = new Promise((resolve, reject) => {
    bound = resolve;
    ws.on("error", reject);
  });
  const send = (m) => ws.send(JSON.stringify(m));
  ws.on("open", () => send({ type: "auth", token: token ?? process.env.TAP_PROVIDER_TOKEN }));
  ws.on("message", (raw) => {
    const msg = JSON.parse(raw);
    if (config.record && ["hello.ack", "session.event", "session.lifecycle"].includes(msg.type)) {
      fs.appendFileSync(config.record, `${JSON.stringify(msg)}\n`);
    }
    if (msg.type === "sessions") {
      const tools = config.tools.map(({ name, description, parameters }) => ({
        name, description: description ?? `test tool ${name}`,
        parameters: parameters ?? { type: "object", properties: {} } }));
      send({ type: "hello", name: config.name, protocolVersion: 2,
             ...(session ? { session } : {}), tools, ...(config.hello ?? {}) });
    } else if (msg.type === "hello.ack") {
      persistDir = msg.persistDir;
      bound(msg);
    } else if (msg.type === "tool.call") {
      calls.push(msg);
      const reply = (data) => send({ type: "tool.result", id: msg.id, data });
      if (msg.tool === "hold") {
        held = () => {
          if (config.onRelease) send({ type: "push", ...config.onRelease });
          reply("held until released");
        };
        return;
      }
      if (msg.tool === "release") {
        held?.();
        held = null;
        return reply("released");
      }
      const tool = config.tools.find((t) => t.name === msg.tool);
      if (tool?.push) send({ type: "push", ...tool.push });
      if (tool?.progress) send({ type: "tool.progress", id: msg.id, message: tool.progress });
      if (tool?.file) {
        const bytes = Buffer.from(tool.file.base64, "base64");
        const file = path.join(persistDir, tool.file.name);
        fs.mkdirSync(persistDir, { recursive: true });
        fs.writeFileSync(file, bytes);
        return send({ type: "tool.result", id: msg.id, file: { path: file, mimeType: tool.file.mimeType, size: bytes.length, ttl: 60 } });
      }
      reply(`${tool?.reply ?? "?"} ${JSON.stringify(msg.args ?? {})}`);
    } else if (msg.type === "session.lifecycle" && msg.state === "shutdown.pending") {
      send({ type: "shutdown.ready", sessionId: msg.sessionId });
    } else if (msg.type === "error") {
      console.error(`provider ${config.name}: gateway error ${msg.code}: ${msg.message}`);
    }
  });
  return { ws, calls, ready, close: () => ws.close() };
}

if (process.argv[2]) {
  startProvider(JSON.parse(fs.readFileSync(process.argv[2], "utf8")));
}

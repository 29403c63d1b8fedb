// A scripted OpenAI-compatible model on 127.0.0.1:0 for driving the real Copilot CLI offline.
//
// The rule (deterministic, so tests can script tool calls through plain prompts):
// - the last message is a tool result → answer with text quoting it: `RESULT(<tool>): <text>`
//   (the CLI's own `Additional context from preToolUse hook:` message after the result does
//   not count as the user's: a hook's context is for the model, not a new request);
// - else, when the last user text contains `CALL:<tool>{json}` → call that tool with that JSON;
// - else → answer `DONE: <the first line of the user text>`.
// Every request body is recorded so tests can assert on what the model received.

import http from "node:http";

/** The text of a chat message, whatever shape its content has. */
export function textOf(message) {
  const c = message?.content;
  if (typeof c === "string") return c;
  if (Array.isArray(c)) return c.map((p) => (typeof p === "string" ? p : p?.text ?? "")).join("");
  return "";
}

/** The CALL:<tool>{json} request in `text`, if any. */
export function parseCall(text) {
  const m = /CALL:([A-Za-z0-9_.-]+)(\{.*?\})(?=\s|$)/s.exec(text);
  return m ? { tool: m[1], args: m[2] } : null;
}

/** What the CLI appends after a tool result when an `onPreToolUse` hook returned context. */
const HOOK_CONTEXT = /^Additional context from preToolUse hook:/;

function decide(body) {
  const messages = body.messages ?? [];
  let end = messages.length;
  while (end > 0 && messages[end - 1].role === "user" && HOOK_CONTEXT.test(textOf(messages[end - 1]))) end--;
  const last = messages[end - 1];
  if (last?.role === "tool") {
    const call = messages
      .flatMap((m) => m.tool_calls ?? [])
      .find((c) => c.id === last.tool_call_id);
    return { text: `RESULT(${call?.function?.name ?? "?"}): ${textOf(last)}` };
  }
  const user = [...messages].reverse().find((m) => m.role === "user");
  const text = textOf(user);
  const call = parseCall(text);
  if (call) return { call };
  // The CLI adds tagged blocks (date, reminders) around the user's words: drop them.
  const bare = text.replace(/<(\w+)>[\s\S]*?<\/\1>/g, "");
  const line = bare.split("\n").map((l) => l.trim()).filter(Boolean).pop();
  return { text: `DONE: ${line ?? ""}` };
}

function chunk(id, delta, finish = null) {
  return { id, object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000),
           model: "fake-model", choices: [{ index: 0, delta, finish_reason: finish }] };
}

let counter = 0;

function answer(res, body) {
  const id = `chatcmpl-${++counter}`;
  const { text, call } = decide(body);
  const toolCalls = call && [{ index: 0, id: `call_${counter}`, type: "function",
                               function: { name: call.tool, arguments: call.args } }];
  const finish = call ? "tool_calls" : "stop";
  const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
  if (!body.stream) {
    const message = call ? { role: "assistant", content: null, tool_calls: toolCalls.map(({ index, ...c }) => c) }
                         : { role: "assistant", content: text };
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ id, object: "chat.completion", created: Math.floor(Date.now() / 1000),
                             model: "fake-model", choices: [{ index: 0, message, finish_reason: finish }], usage }));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const send = (obj) => res.write(`data: ${JSON.stringify(obj)}\n\n`);
  send(chunk(id, { role: "assistant", content: "" }));
  send(chunk(id, call ? { tool_calls: toolCalls } : { content: text }));
  send({ ...chunk(id, {}, finish), usage });
  res.end("data: [DONE]\n\n");
}

/** Starts the model; resolves to `{ url, requests, close() }` (`url` ends in `/v1`). */
export async function startFakeModel() {
  const requests = [];
  const server = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (d) => (raw += d));
    req.on("end", () => {
      if (req.method === "GET" && req.url.endsWith("/models")) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ object: "list", data: [{ id: "fake-model", object: "model", owned_by: "tests" }] }));
        return;
      }
      if (req.method === "POST" && req.url.endsWith("/chat/completions")) {
        let body;
        try {
          body = JSON.parse(raw);
        } catch {
          res.writeHead(400).end();
          return;
        }
        requests.push(body);
        answer(res, body);
        return;
      }
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `fake model: no route ${req.method} ${req.url}` } }));
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

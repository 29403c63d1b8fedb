// A scripted model on 127.0.0.1:0 that speaks the two wire formats the tested agent CLIs use:
// Gemini's `generateContent` / `streamGenerateContent?alt=sse` (Gemini CLI, through
// GOOGLE_GEMINI_BASE_URL) and OpenAI's `chat/completions` with SSE chunks (opencode, through
// an `@ai-sdk/openai-compatible` provider's baseURL). Nothing else is answered.
//
// The script is a `plan`: the gateway tool names to call, one per turn, in order. For each
// request that offers tools (the agent's main loop), the model counts the tool results already
// in the conversation: with n results it calls `plan[n]`, and once every step has a result it
// answers `FINAL:` followed by each result's text. A CLI names an MCP tool its own way (Gemini
// `mcp_tap_weather`, opencode `tap_weather`), so a plan step is matched against the offered
// names by suffix; a step no offered tool matches is answered `MISSING: <tool>` (the test
// then fails naming it). Requests without tools (a CLI's title or routing side-questions) get
// a short text. Every request is recorded, parsed into what the tests check: the tool names
// it offered and the tool results it carried.

import http from "node:http";

/** The plan step `name` as one of the `offered` tool names, or undefined. */
export function resolveTool(name, offered) {
  return offered.find((t) => t === name) ?? offered.find((t) => t.endsWith(`_${name}`));
}

/** Gemini: declared function names and the functionResponse parts of a request. */
function parseGemini(body) {
  const tools = (body.tools ?? []).flatMap((t) => t.functionDeclarations ?? []).map((f) => f.name);
  const results = (body.contents ?? [])
    .flatMap((c) => c.parts ?? [])
    .filter((p) => p.functionResponse)
    .map((p) => ({ tool: p.functionResponse.name, text: JSON.stringify(p.functionResponse.response) }));
  return { tools, results };
}

/** OpenAI chat: function tool names and the `tool` messages of a request. */
function parseChat(body) {
  const tools = (body.tools ?? []).map((t) => t.function?.name).filter(Boolean);
  const calls = (body.messages ?? []).flatMap((m) => m.tool_calls ?? []);
  const results = (body.messages ?? [])
    .filter((m) => m.role === "tool")
    .map((m) => ({
      tool: calls.find((c) => c.id === m.tool_call_id)?.function?.name ?? "?",
      text: typeof m.content === "string" ? m.content : JSON.stringify(m.content),
    }));
  return { tools, results };
}

/** What the model says next: `{ call: {name, args} }` or `{ text }`. */
function decide(plan, { tools, results }) {
  if (tools.length === 0) return { text: "Tap agent test" };
  const step = plan[results.length];
  if (!step) return { text: `FINAL: ${results.map((r) => `${r.tool} -> ${r.text}`).join(" | ")}` };
  const name = resolveTool(step.tool, tools);
  return name ? { call: { name, args: step.args ?? {} } } : { text: `MISSING: ${step.tool}` };
}

const usage = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 };

function answerGemini(res, stream, answer) {
  const part = answer.call ? { functionCall: answer.call } : { text: answer.text };
  const payload = { candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }], usageMetadata: usage, modelVersion: "fake-model" };
  if (!stream) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(payload));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.end(`data: ${JSON.stringify(payload)}\r\n\r\n`);
}

let counter = 0;

function answerChat(res, stream, answer) {
  const id = `chatcmpl-${++counter}`;
  const created = Math.floor(Date.now() / 1000);
  const call = answer.call && { id: `call_${counter}`, type: "function", function: { name: answer.call.name, arguments: JSON.stringify(answer.call.args) } };
  const finish = call ? "tool_calls" : "stop";
  const tokens = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
  if (!stream) {
    const message = call ? { role: "assistant", content: null, tool_calls: [call] } : { role: "assistant", content: answer.text };
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ id, object: "chat.completion", created, model: "fake-model", choices: [{ index: 0, message, finish_reason: finish }], usage: tokens }));
    return;
  }
  const chunk = (delta, finish_reason = null) => ({ id, object: "chat.completion.chunk", created, model: "fake-model", choices: [{ index: 0, delta, finish_reason }] });
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const send = (obj) => res.write(`data: ${JSON.stringify(obj)}\n\n`);
  send(chunk({ role: "assistant", content: "" }));
  send(chunk(call ? { tool_calls: [{ index: 0, ...call }] } : { content: answer.text }));
  send({ ...chunk({}, finish), usage: tokens });
  res.end("data: [DONE]\n\n");
}

/**
 * Starts the model with `plan` ([{tool, args}]); resolves to `{ url, requests, close() }`.
 * `url` is the server's root (Gemini's base URL; opencode's is `${url}/v1`). Each entry of
 * `requests` is `{ api, path, body, tools, results }`.
 */
export async function startFakeModel(plan) {
  const requests = [];
  const server = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (d) => (raw += d));
    req.on("end", () => {
      const url = new URL(req.url, "http://x");
      const gemini = /^\/v1beta\/models\/[^/:]+:(generateContent|streamGenerateContent)$/.exec(url.pathname);
      const chat = req.method === "POST" && url.pathname === "/v1/chat/completions";
      let body;
      try {
        body = JSON.parse(raw);
      } catch {
        body = null;
      }
      if (req.method !== "POST" || !body || (!gemini && !chat)) {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { code: 404, message: `fake model: no route ${req.method} ${url.pathname}` } }));
        return;
      }
      const parsed = gemini ? parseGemini(body) : parseChat(body);
      requests.push({ api: gemini ? "gemini" : "chat", path: url.pathname, body, ...parsed });
      const answer = decide(plan, parsed);
      if (gemini) answerGemini(res, gemini[1] === "streamGenerateContent", answer);
      else answerChat(res, body.stream === true, answer);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

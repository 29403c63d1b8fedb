// A real MCP client (npm @modelcontextprotocol/sdk) driven line by line, for the gateway's
// MCP tests; the same vocabulary as py_client.py (a subset):
//   node node_client.mjs http URL        # host token from $TAP_HOST_TOKEN
//   node node_client.mjs stdio SESSION   # launches `$TAP_BIN mcp --session SESSION`
// Commands on stdin: {"op":"tools"}, {"op":"call","id","tool","args","progress"},
// {"op":"cancel","id"}, {"op":"exit"}; observations on stdout: ready, tools, progress,
// result, error, cancelled, notice (tools_changed).

import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const emit = (fields) => process.stdout.write(JSON.stringify(fields) + "\n");

const [kind, target] = process.argv.slice(2);
const transport =
  kind === "http"
    ? new StreamableHTTPClientTransport(new URL(target), {
        requestInit: { headers: { Authorization: `Bearer ${process.env.TAP_HOST_TOKEN}` } },
      })
    : new StdioClientTransport({
        command: process.env.TAP_BIN,
        args: ["mcp", "--session", target],
        env: { ...process.env },
        stderr: "inherit",
      });

const client = new Client({ name: "tap-test-node", version: "1.0.0" });
client.setNotificationHandler(ToolListChangedNotificationSchema, () =>
  emit({ op: "notice", kind: "tools_changed" }),
);
await client.connect(transport);
emit({ op: "ready", protocol: client.getServerVersion()?.name ?? null });

const calls = new Map();

async function call({ id, tool, args, progress }) {
  const abort = new AbortController();
  calls.set(id, abort);
  try {
    const result = await client.callTool({ name: tool, arguments: args ?? {} }, undefined, {
      signal: abort.signal,
      onprogress: progress ? (p) => emit({ op: "progress", id, progress: p.progress, message: p.message }) : undefined,
    });
    emit({
      op: "result",
      id,
      isError: Boolean(result.isError),
      content: result.content,
      structured: result.structuredContent ?? null,
    });
  } catch (e) {
    emit(abort.signal.aborted ? { op: "cancelled", id } : { op: "error", id, message: String(e.message ?? e) });
  }
}

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  const cmd = JSON.parse(line);
  if (cmd.op === "exit") break;
  if (cmd.op === "tools") {
    const { tools } = await client.listTools();
    emit({ op: "tools", names: tools.map((t) => t.name) });
  } else if (cmd.op === "call") {
    call(cmd);
  } else if (cmd.op === "cancel") {
    calls.get(cmd.id)?.abort();
  }
}
await client.close();

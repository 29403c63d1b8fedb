// The Copilot session's events the gateway hears of: busy/idle, mode and model changes, and
// the session events providers may subscribe to, shaped as the Provider Interface's
// `session.event` table says (user.message, assistant.message, tool.execution_complete,
// assistant.intent).

import { setReport } from "./agent_report.mjs";
import { EVENT_OUTPUT_LEN } from "./limits.mjs";

const cut = (t) => (t.length > EVENT_OUTPUT_LEN ? `${t.slice(0, EVENT_OUTPUT_LEN)}…` : t);

/** A tool call's arguments as the event carries them: the object, or a cut preview of a big one. */
function eventArgs(args) {
  const obj = args && typeof args === "object" && !Array.isArray(args) ? args : {};
  const json = JSON.stringify(obj);
  return json.length > EVENT_OUTPUT_LEN ? { truncated: true, preview: cut(json) } : obj;
}

export function forwardSessionEvents(host) {
  const started = new Map(); // toolCallId → {tool, args, at, mcpServer}, for tool.execution_complete
  host.session.on((e) => {
    switch (e.type) {
      case "assistant.turn_start":
        return host.setBusy(true);
      case "session.idle":
        return host.setBusy(false);
      case "session.mode_changed":
        return setReport(host, { mode: e.data.newMode });
      case "session.model_change":
        return setReport(host, { model: e.data.newModel });
      case "user.message":
        return host.event("user.message", { content: e.data.content });
      case "assistant.message":
        if (e.data.content) host.event("assistant.message", { content: e.data.content });
        return;
      case "assistant.intent":
        if (e.data.intent) host.event("assistant.intent", { intent: e.data.intent });
        return;
      case "tool.execution_start":
        started.set(e.data.toolCallId, { tool: e.data.toolName, args: e.data.arguments, at: Date.parse(e.timestamp), mcpServer: e.data.mcpServerName });
        return;
      case "tool.execution_complete": {
        const s = started.get(e.data.toolCallId) ?? {};
        started.delete(e.data.toolCallId);
        // A Tap tool's provider, or the Copilot MCP server's name; the CLI's own tools have none.
        const provider = host.tools.find((t) => t.name === s.tool)?.provider ?? s.mcpServer;
        const output = e.data.success ? e.data.result?.content : e.data.error?.message;
        const durationMs = Math.max(0, Date.parse(e.timestamp) - s.at) || 0;
        host.event("tool.execution_complete", {
          tool: s.tool, ...(provider ? { provider } : {}), args: eventArgs(s.args),
          result: { type: e.data.success ? "success" : "failure", ...(typeof output === "string" ? { output: cut(output) } : {}) },
          durationMs,
          // Copilot's own names, as sent before the spec's were: kept for providers reading them.
          toolName: s.tool, toolCallId: e.data.toolCallId, success: e.data.success,
        });
        return;
      }
      default:
        return;
    }
  });
}

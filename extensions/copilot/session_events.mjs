// The Copilot session's events the gateway hears of: busy/idle, mode and model changes, and
// the session events providers may subscribe to.

import { setReport } from "./agent_report.mjs";

export function forwardSessionEvents(host) {
  const toolNames = new Map(); // toolCallId → toolName, for tool.execution_complete
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
      case "tool.execution_start":
        toolNames.set(e.data.toolCallId, e.data.toolName);
        return;
      case "tool.execution_complete":
        host.event("tool.execution_complete", { toolName: toolNames.get(e.data.toolCallId), toolCallId: e.data.toolCallId, success: e.data.success });
        toolNames.delete(e.data.toolCallId);
        return;
      default:
        return;
    }
  });
}

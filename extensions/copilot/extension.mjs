// tap-gateway copilot extension __TAP_VERSION__
// Written by `tap install copilot`; `tap uninstall copilot` removes it. Do not edit: the first
// line marks the file as Tap's, and `tap install copilot` replaces it on the next upgrade.
//
// A session host for the Tap gateway (docs/session-host-protocol.md): it registers this Copilot
// CLI session at the gateway's `/session` endpoint, offers the session's Tap tools to the model,
// asks the gateway before each tool use (onPreToolUse) and on each prompt (onUserPromptSubmitted),
// turns provider pushes into timeline lines and new turns, and reports busy/idle and events.
// Plain JS on purpose: the Copilot CLI runs it with its own Node (24, global WebSocket) and
// provides `@github/copilot-sdk/extension`; nothing is installed next to this file. Its source
// is small modules (extensions/copilot/ in tap's repository) that `tap install copilot` joins
// into this one file (tap-connect's copilot module): one file, replaced atomically, so a CLI
// starting during an upgrade never loads one version's modules with another's.

import { joinSession } from "@github/copilot-sdk/extension";
import { learnReport } from "./agent_report.mjs";
import { flushQueued } from "./deliveries.mjs";
import { cwd, debug } from "./environment.mjs";
import { hasProjectConfig } from "./gateway_discovery.mjs";
import { preToolUse, promptSubmitted, systemSections } from "./hooks.mjs";
import { Host } from "./host.mjs";
import { CONNECT_TIMEOUT_MS, FIRST_TOOLS_WAIT_MS, GATEWAY_START_WAIT_MS } from "./limits.mjs";
import { takeSavedState } from "./reload_state.mjs";
import { forwardSessionEvents } from "./session_events.mjs";
import { fromProviders, signature } from "./tool_sets.mjs";

const saved = takeSavedState();
const host = new Host(saved);
// The CLI stops extensions with SIGTERM when it exits. Not onSessionEnd: in prompt mode it
// fires before the turns queued by inject pushes have run. Installed before anything is
// awaited: the CLI may run this process's hooks, and exit, before `joinSession` resolves,
// and without the handler the default action would kill the process with its session
// still registered (left for the gateway's resume window instead of ending at once).
process.on("SIGTERM", () => host.end().finally(() => process.exit(0)));

// Before joining: the tools the first prompt should see. After a reload the saved set is the
// current one; on a fresh start a project with tap.config.json, or a gateway whose
// every-session providers (its MCP servers) are adding tools, gets a bounded wait for them.
const connecting = host.connect();
// A gateway this process just started gets the time to come up as well.
const connectBound = host.gatewayStarted ? CONNECT_TIMEOUT_MS + GATEWAY_START_WAIT_MS : CONNECT_TIMEOUT_MS;
const connected = await Promise.race([connecting, new Promise((r) => setTimeout(() => r(false), connectBound))]);
if (!connected && !host.ws) host.reconnectLater();
if (connected && !saved && fromProviders(host.tools).length === 0 && (hasProjectConfig(cwd) || host.toolsPending)) {
  let resolveFirst;
  const first = new Promise((r) => (resolveFirst = r));
  host.firstTools = { resolve: resolveFirst };
  const timer = setTimeout(resolveFirst, FIRST_TOOLS_WAIT_MS);
  await first;
  clearTimeout(timer);
  host.firstTools = null;
  if (fromProviders(host.tools).length === 0 && hasProjectConfig(cwd)) host.log(`Tap: the project's providers offered no tools within ${FIRST_TOOLS_WAIT_MS} ms; they are added when they arrive.`, "warning");
}

host.joinedSignature = signature(host.tools);
host.session = await joinSession({
  tools: host.copilotTools(),
  systemMessage: systemSections(host),
  hooks: {
    onPreToolUse: (input) => preToolUse(host, input),
    onUserPromptSubmitted: (input) => promptSubmitted(host, input),
  },
});
forwardSessionEvents(host);
// Not awaited: the queued deliveries and the first prompt do not wait for it.
learnReport(host).catch(() => {});
debug("joined with tools:", host.tools.map((t) => t.name).join(",") || "-", saved ? "(after a reload)" : "");
flushQueued(host);
// Tool-set changes that arrived while joining.
if (signature(host.tools) !== host.joinedSignature) host.scheduleReload();

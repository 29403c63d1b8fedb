// What the gateway learns of the agent (mode, model, capabilities): read from the CLI's
// extension API, sent with every `session.state` (docs/session-host-protocol.md, "Host
// capabilities").

import { canAnswerDialogs, COPILOT_MODES } from "./asks.mjs";
import { HOST_REPORT_TEXT_LEN, REPORT_READ_MS } from "./limits.mjs";

/** `session.state` with what the CLI told of the agent. */
export function stateMessage(host) {
  return { type: "session.state", sessionId: host.sessionId, state: host.busy ? "busy" : "idle", ...host.report };
}

/** Records a change of mode, model or capabilities and tells the gateway. Texts are cut
 * to the gateway's limit: a longer one would refuse the whole message, busy state included. */
export function setReport(host, changes) {
  const cut = (t) => (typeof t === "string" ? t.slice(0, HOST_REPORT_TEXT_LEN) : undefined);
  if ("mode" in changes && cut(changes.mode)) host.report.mode = cut(changes.mode);
  if ("model" in changes && cut(changes.model)) host.report.model = cut(changes.model);
  if (changes.capabilities) host.report.capabilities = changes.capabilities;
  if (host.registered) host.send(stateMessage(host));
}

/** What the CLI's extension API says of this session: whether a user can answer its dialogs
 * (`session.capabilities.ui.elicitation`, which `session.ui.confirm` and `.elicitation` both
 * need, and only when interactive: asks.mjs), the modes `session.rpc.mode.set` switches to,
 * and, through the experimental `session.rpc`, the mode and the model. Each read is
 * bounded: a CLI that does not answer one leaves that field out. */
export async function learnReport(host) {
  const s = host.session;
  const within = (p) => Promise.race([Promise.resolve().then(p), new Promise((r) => setTimeout(() => r(undefined), REPORT_READ_MS))]).catch(() => undefined);
  const dialogs = canAnswerDialogs(s?.capabilities);
  const modes = typeof s?.rpc?.mode?.set === "function" ? COPILOT_MODES : [];
  // At once, before any tool call of this session can reach the gateway.
  setReport(host, { capabilities: { ui: { confirm: dialogs, elicitation: dialogs }, modes, client: { name: "copilot-cli" } } });
  const mode = await within(() => s.rpc.mode.get());
  if (typeof mode === "string") setReport(host, { mode });
  const model = await within(() => s.rpc.model.getCurrent());
  if (typeof model?.modelId === "string") setReport(host, { model: model.modelId });
}

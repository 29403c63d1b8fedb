// What the gateway asks of this host (docs/session-host-protocol.md, contract of 2026-11-29):
// approving a waiting tool call in the CLI's own dialog (`approval.ask` → `approval.answer`),
// and switching the session's mode (`session.mode.set` → `session.mode.result`).

import fs from "node:fs";
import { debug } from "./environment.mjs";
import { MODE_SET_MS } from "./limits.mjs";

/** The modes the CLI's extension API can switch to (`session.rpc.mode.set`, SessionMode in
 * the SDK's generated types; checked with CLI 1.0.102: it applies and says so with
 * `session.mode_changed`). */
export const COPILOT_MODES = ["interactive", "plan", "autopilot"];

/** Whether a user can answer a dialog now. The CLI reports `ui.elicitation: true` in prompt
 * mode (`copilot -p`) too, where a dialog never resolves; prompt mode is told by the CLI's
 * own command line (its `-p`/`--prompt`; the extension runs as the CLI's child,
 * `COPILOT_EXTENSION_PARENT_PID`) where the system shows it (Linux /proc), else by
 * `ui.canvases`, which only the interactive TUI reports true. */
export function canAnswerDialogs(capabilities) {
  if (capabilities?.ui?.elicitation !== true) return false;
  const parent = process.env.COPILOT_EXTENSION_PARENT_PID;
  try {
    const args = fs.readFileSync(`/proc/${Number(parent)}/cmdline`, "utf8").split("\0");
    return !args.some((a) => a === "-p" || a === "--prompt" || a.startsWith("--prompt="));
  } catch {
    return capabilities?.ui?.canvases === true;
  }
}

/** `approval.ask`: the call's choices in one elicitation form; the answer goes back unless
 * the approval was withdrawn meanwhile (the SDK cannot close a dialog, so a late answer is
 * dropped). Decline denies, as in the MCP path; cancel or a failure is `dismissed`: the
 * call keeps waiting for the tray, panel or CLI. */
export async function askApproval(host, msg) {
  const id = msg.approvalId;
  const send = (answer) => host.send({ type: "approval.answer", approvalId: id, answer });
  if (!host.session || host.report.capabilities?.ui?.elicitation !== true) return send("dismissed");
  const values = (msg.choices ?? []).map((c) => c.value);
  host.asked.add(id);
  let answer = "dismissed";
  try {
    const r = await host.session.ui.elicitation({
      message: msg.message,
      requestedSchema: {
        type: "object",
        properties: { answer: { type: "string", title: "Answer", oneOf: (msg.choices ?? []).map((c) => ({ const: c.value, title: c.title })) } },
        required: ["answer"],
      },
    });
    debug("approval dialog", id, "answered:", JSON.stringify(r));
    if (r?.action === "accept" && values.includes(r.content?.answer)) answer = r.content.answer;
    else if (r?.action === "decline") answer = "deny";
  } catch (e) {
    host.log(`Tap: could not ask about ${msg.tool} here (${e.message}); answer in the Tap tray, panel or \`tap approvals\`.`, "warning");
  }
  if (!host.asked.delete(id)) return debug("approval", id, "withdrawn meanwhile; dropped:", answer);
  debug("approval", id, "->", answer, send(answer) ? "sent" : "not sent (disconnected)");
}

/** `approval.withdrawn`: decided elsewhere or timed out; an answer to it is dropped. */
export function withdrawApproval(host, msg) {
  host.asked.delete(msg.approvalId);
}

/** `session.mode.set`: the user approved the switch (through the approvals machinery); the
 * CLI switches and the answer says to what. */
export async function setMode(host, msg) {
  const reply = (r) => host.send({ type: "session.mode.result", requestId: msg.requestId, ...r });
  const rpc = host.session?.rpc?.mode;
  if (!rpc || !COPILOT_MODES.includes(msg.mode)) return reply({ ok: false, message: `The Copilot CLI cannot switch to '${msg.mode}' now.` });
  const within = (p) => Promise.race([p, new Promise((_, no) => setTimeout(() => no(new Error(`no answer within ${MODE_SET_MS} ms`)), MODE_SET_MS))]);
  try {
    const r = await within(rpc.set({ mode: msg.mode }));
    if (r?.modeApplied === false) return reply({ ok: false, message: r.warning ?? r.message ?? "The Copilot CLI did not apply the mode." });
    const now = await within(rpc.get());
    if (now !== msg.mode) return reply({ ok: false, message: `The Copilot CLI stayed in '${now}'.` });
    reply({ ok: true, mode: now });
  } catch (e) {
    reply({ ok: false, message: `The Copilot CLI did not switch mode: ${e.message}` });
  }
}

// The CLI's hooks asked of the gateway: before each tool use (`tool.precheck`) and on each
// prompt (`prompt.apply`).

import { PRECHECK_TIMEOUT_MS, PROMPT_APPLY_TIMEOUT_MS } from "./limits.mjs";

/** The sections this host can place (as additional context); `safety` goes last. */
const SECTIONS = ["custom_instructions", "safety"];

export async function preToolUse(host, input) {
  if (!host.registered) return undefined;
  const args = input.toolArgs && typeof input.toolArgs === "object" && !Array.isArray(input.toolArgs) ? input.toolArgs : {};
  try {
    const d = await host.request({ type: "tool.precheck", sessionId: host.sessionId, tool: input.toolName, args }, PRECHECK_TIMEOUT_MS);
    if (d.decision === "deny") return { permissionDecision: "deny", permissionDecisionReason: d.reason ?? "Denied by a Tap provider." };
    if (d.decision === "context" && d.context) return { additionalContext: d.context };
  } catch (e) {
    // Without an answer the providers' rules cannot apply; their gates deny by themselves
    // when they must (fail-closed gates answer the gateway, not us).
    host.log(`Tap: no pre-tool-use decision for ${input.toolName} (${e.message}); allowed.`, "warning");
  }
  return undefined;
}

export async function promptSubmitted(host, input) {
  if (!host.registered) return undefined;
  try {
    const sections = Object.fromEntries(SECTIONS.map((s) => [s, ""]));
    const a = await host.request({ type: "prompt.apply", sessionId: host.sessionId, prompt: input.prompt, sections }, PROMPT_APPLY_TIMEOUT_MS);
    const parts = [a.sections?.custom_instructions, ...(a.context ?? []), a.sections?.safety].filter((p) => p && p.trim());
    if (parts.length > 0) return { additionalContext: parts.join("\n\n") };
  } catch (e) {
    host.log(`Tap: prompt transforms and context were not applied (${e.message}).`, "warning");
  }
  return undefined;
}

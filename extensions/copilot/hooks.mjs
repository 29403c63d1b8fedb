// The CLI's hooks asked of the gateway: before each tool use (`tool.precheck`) and on each
// prompt (`prompt.apply` for the context), and the section transforms, which land in the
// CLI's own system prompt sections (`joinSession({systemMessage})`, `systemSections`).

import { PRECHECK_TIMEOUT_MS, PROMPT_APPLY_TIMEOUT_MS } from "./limits.mjs";

/** The sections this host can place: the CLI's system prompt sections of the same names
 * (SystemMessageSection in the SDK's types). */
const SECTIONS = ["custom_instructions", "safety"];

/** `joinSession`'s `systemMessage`: each section's transform callback. The CLI calls it
 * with the section's text when it builds its system prompt (at the session's start and when
 * the mode or model changes; not per prompt: checked with CLI 1.0.102), and waits for the
 * answer: the providers' transforms of that text (`prompt.apply` with that one section and
 * no prompt, bounded by PROMPT_APPLY_TIMEOUT_MS; unchanged when the gateway is away). */
export function systemSections(host) {
  const sections = {};
  for (const name of SECTIONS) {
    sections[name] = {
      action: async (current) => {
        host.placedSections.add(name);
        if (!host.registered) return current;
        try {
          const a = await host.request({ type: "prompt.apply", sessionId: host.sessionId, sections: { [name]: current } }, PROMPT_APPLY_TIMEOUT_MS);
          return typeof a.sections?.[name] === "string" ? a.sections[name] : current;
        } catch (e) {
          host.log(`Tap: the providers' ${name} transforms were not applied (${e.message}).`, "warning");
          return current;
        }
      },
    };
  }
  return { mode: "customize", sections };
}

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

/** The providers' `startup_context` not yet given, taken: the session's start context,
 * given once with the first prompt after it arrived (the CLI has no hook to add context at a
 * time of the extension's choosing; a start hook runs before the gateway could answer). */
function takeStartContext(host) {
  return host.startContext.splice(0).map((c) => `Startup context from the Tap provider ${c.provider}:\n${c.text}`);
}

export async function promptSubmitted(host, input) {
  if (!host.registered) return undefined;
  let parts = takeStartContext(host);
  try {
    // A section the CLI has not built into its system prompt (yet) is transformed from empty
    // and goes with the context instead (safety last).
    const sections = Object.fromEntries(SECTIONS.filter((s) => !host.placedSections.has(s)).map((s) => [s, ""]));
    const a = await host.request({ type: "prompt.apply", sessionId: host.sessionId, prompt: input.prompt, sections }, PROMPT_APPLY_TIMEOUT_MS);
    parts = [...parts, a.sections?.custom_instructions, ...(a.context ?? []), a.sections?.safety];
  } catch (e) {
    host.log(`Tap: prompt transforms and context were not applied (${e.message}).`, "warning");
  }
  parts = parts.filter((p) => p && p.trim());
  return parts.length > 0 ? { additionalContext: parts.join("\n\n") } : undefined;
}

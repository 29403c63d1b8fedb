// The calls waiting for the user, and the answers a prompt gives: shared by the Approvals
// page and the prompt every page shows (components/ApprovalPrompt.tsx).

import type { ArgPattern, WaitingCall } from "../../generated";
import { store } from "../../store";
import { useMethod } from "../../method";
import { isSecretKey, looksSecret } from "./args";

/** One of a prompt's buttons. */
export type Answer = "once" | "session" | "hour" | "always" | "deny" | "denyAlways";

/** Each answer's button text, its keyboard shortcut (none for the two that remember for good), and what it does. */
export const ANSWERS: readonly { answer: Answer; label: string; key?: string; title: string }[] = [
  { answer: "once", label: "Approve once", key: "a", title: "Let this call through; the next one is asked again" },
  { answer: "session", label: "For this session", key: "s", title: "Let every call of this tool in this session through" },
  { answer: "hour", label: "For 1 hour", key: "h", title: "Let every call of this tool through for an hour" },
  { answer: "always", label: "Always", title: "Let every call of this tool through until the grant is revoked" },
  { answer: "deny", label: "Deny", key: "d", title: "Refuse this call; the next one is asked again" },
  { answer: "denyAlways", label: "Deny always", title: "Refuse this call and every later call of this tool (a remembered deny, revocable)" },
];

/**
 * Sends `answer` for `call` (`approvals.approve` or `approvals.deny`). `argsPattern`: the
 * grant an approval makes covers only calls whose arguments match (a deny is remembered for
 * the tool whatever its arguments, as `tap approvals deny --remember` does).
 */
export function answerCall(call: WaitingCall, answer: Answer, argsPattern: ArgPattern[] = []): Promise<unknown> {
  switch (answer) {
    case "once":
      return store.call("approvals.approve", { id: call.id });
    case "session":
      return store.call("approvals.approve", { id: call.id, for: "session", argsPattern });
    case "hour":
      return store.call("approvals.approve", { id: call.id, for: "minutes", minutes: 60, argsPattern });
    case "always":
      return store.call("approvals.approve", { id: call.id, for: "always", argsPattern });
    case "deny":
      return store.call("approvals.deny", { id: call.id });
    case "denyAlways":
      return store.call("approvals.deny", { id: call.id, remember: "always" });
  }
}

/**
 * The waiting calls, oldest first: `approvals.list`, asked again on every `approval.waiting`
 * and `approval.resolved` event (and after a reconnect), never on a timer.
 */
export function useWaitingCalls(): { waiting: WaitingCall[]; error: Error | null; refresh: () => void } {
  const { data, error, refresh } = useMethod("approvals.list", {}, { on: ["approval.waiting", "approval.resolved"] });
  return { waiting: data?.waiting ?? [], error, refresh };
}

/** A rule id for "ask for every tool of PROVIDER" (ids are unique in policy.json; this one says what it does). */
export const askProviderRuleId = (provider: string) => `ask-${provider}`.slice(0, 128);

/** A regex matching exactly `text` (for "only for this value"). */
export function exactly(text: string): string {
  return `^${text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`;
}

/**
 * The first top-level string argument as a pattern proposal (`/path` = `^/tmp/x$`), or an
 * empty one. Never a secret's (the proposal is shown in a field).
 */
export function proposedPattern(args: unknown): ArgPattern {
  if (args && typeof args === "object" && !Array.isArray(args)) {
    for (const [k, v] of Object.entries(args)) {
      if (typeof v === "string" && v.length <= 200 && !isSecretKey(k) && !looksSecret(v)) return { pointer: `/${k.replace(/~/g, "~0").replace(/\//g, "~1")}`, regex: exactly(v) };
    }
  }
  return { pointer: "", regex: "" };
}

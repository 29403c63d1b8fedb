import { useState } from "preact/hooks";
import type { PanelState } from "../store";
import { store } from "../store";
import { useMethod } from "../method";
import { plural } from "../format";
import { WaitingCard } from "./approvals/WaitingCard";
import { Grants } from "./approvals/Grants";
import { Rules } from "./approvals/Rules";
import { History } from "./approvals/History";
import { askProviderRuleId, useWaitingCalls } from "./approvals/model";

/**
 * Approvals (docs/approvals.md): the tool calls waiting for the user's answer, oldest first,
 * each with its arguments (secrets masked) and the answers (the keys A, S, H, D answer the
 * oldest, as on every page: `components/ApprovalPrompt.tsx`); the grants (remembered answers)
 * with Revoke; and the rules of policy.json, with a form and, from a waiting call, "ask for
 * every tool of this provider" in one click. Live from `approval.waiting` and
 * `approval.resolved`; the rules are asked again after this page changes them (the gateway
 * sends no event for policy.json, which `tap policy` or an editor may also change).
 *
 * Last, the history of decisions (`approvals.history`, from the calls' traces).
 */
export function Approvals({ state }: { state: PanelState }) {
  const live = state.phase.kind === "live";
  const { waiting, error } = useWaitingCalls();
  const policy = useMethod("policy.list", {}, {});
  const [ruleError, setRuleError] = useState<string | null>(null);
  const rules = policy.data ? { ...policy.data, rules: (policy.data.rules ?? []).map((r) => ({ ...r, match: { ...r.match, args: r.match?.args ?? [] } })) } : null;

  const askProvider = async (provider: string) => {
    setRuleError(null);
    try {
      await store.call("policy.set", { rule: { id: askProviderRuleId(provider), action: "ask", match: { provider, args: [] }, reason: `every tool of ${provider} is asked` } });
      policy.refresh();
    } catch (e) {
      setRuleError(e instanceof Error ? e.message : String(e));
    }
  };

  return (
    <div class="approvals">
      <section aria-labelledby="waiting-title">
        <div class="section-head">
          <h2 id="waiting-title">Waiting</h2>
        </div>
        <p class="small muted" role="status" data-testid="waiting-count">
          {plural(waiting.length, "call")} waiting · updated live · keys A approve once, S for this session, H for 1 hour, D deny (the oldest call)
        </p>
        {error && (
          <p class="error" role="alert">
            {error.message}
          </p>
        )}
        {ruleError && (
          <p class="error" role="alert">
            {ruleError}
          </p>
        )}
        {waiting.length === 0 && (
          <p class="empty" data-testid="waiting-empty">
            No call waits. A call the rules ask about (by default, a tool annotated <code>destructiveHint: true</code>) shows here and on every page until it is
            answered or times out.
          </p>
        )}
        <div class="waiting-list">
          {waiting.map((call) => {
            const ruled = rules?.rules.some((r) => r.id === askProviderRuleId(call.provider));
            return (
              <WaitingCard
                key={call.id}
                call={call}
                live={live}
                extra={
                  <p class="small">
                    <button
                      type="button"
                      class="btn link"
                      disabled={!live || ruled || !!rules?.error}
                      title="Add a rule to policy.json: every tool of this provider or MCP server is asked"
                      onClick={() => void askProvider(call.provider)}
                    >
                      {ruled ? `Every tool of ${call.provider} is asked (rule ${askProviderRuleId(call.provider)})` : `Ask for every tool of ${call.provider}`}
                    </button>
                  </p>
                }
              />
            );
          })}
        </div>
      </section>
      <Grants live={live} />
      <Rules list={rules} error={policy.error} live={live} onChanged={policy.refresh} />
      <History />
    </div>
  );
}

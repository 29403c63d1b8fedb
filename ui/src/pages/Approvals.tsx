import type { PanelState } from "../store";
import { useMethod } from "../method";
import { plural } from "../format";
import { WaitingCard } from "./approvals/WaitingCard";
import { Grants } from "./approvals/Grants";
import { Rules } from "./approvals/Rules";
import { History } from "./approvals/History";
import { useWaitingCalls } from "./approvals/model";
import { AskEveryTool } from "./approvals/AskEveryTool";

/**
 * Approvals (docs/approvals.md): the tool calls waiting for the user's answer, oldest first,
 * each with its arguments (secrets masked) and the answers (the keys A, S, H, D answer the
 * oldest, as on every page: `components/ApprovalPrompt.tsx`); the grants (remembered answers)
 * with Revoke; and the rules of policy.json, with a form and, from a waiting call, "ask for
 * every tool of this provider" in one click. Live from `approval.waiting` and
 * `approval.resolved`; the rules and grants are asked again on `policy.changed`, whichever
 * client changed them (this page, `tap policy`, `tap approvals`). A hand edit of policy.json
 * sends no event: it shows at the next `policy.list` (a visit, or any change).
 *
 * Last, the history of decisions (`approvals.history`, from the calls' traces).
 */
export function Approvals({ state }: { state: PanelState }) {
  const live = state.phase.kind === "live";
  const { waiting, error } = useWaitingCalls();
  const policy = useMethod("policy.list", {}, { on: ["policy.changed"] });
  const rules = policy.data ? { ...policy.data, rules: (policy.data.rules ?? []).map((r) => ({ ...r, match: { ...r.match, args: r.match?.args ?? [] } })) } : null;

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
        {waiting.length === 0 && (
          <p class="empty" data-testid="waiting-empty">
            No call waits. A call the rules ask about (by default, a tool annotated <code>destructiveHint: true</code>) shows here and on every page until it is
            answered or times out.
          </p>
        )}
        <div class="waiting-list">
          {waiting.map((call) => (
            <WaitingCard key={call.id} call={call} live={live} extra={<AskEveryTool provider={call.provider} live={live} policy={rules} onChanged={policy.refresh} />} />
          ))}
        </div>
      </section>
      <Grants live={live} />
      <Rules list={rules} error={policy.error} live={live} onChanged={policy.refresh} />
      <History />
    </div>
  );
}

import { useState } from "preact/hooks";
import type { PolicyList } from "../../generated";
import { store } from "../../store";
import { useMethod } from "../../method";
import { askProviderRuleId } from "./model";

/**
 * "Ask for every tool of PROVIDER" in one click: adds the rule `ask-PROVIDER` (`action: ask`,
 * `match.provider`) at the end of policy.json, or says it is there. Shown under a waiting call
 * (Approvals page) and in a server's row (Servers page). The rule list is read when shown and
 * after the click or a `policy.changed` (any client's change); a page that shows the rules
 * too passes its own `policy` (and `onChanged`), so both show the same list.
 */
export function AskEveryTool({ provider, live, policy: shared, onChanged }: { provider: string; live: boolean; policy?: PolicyList | null; onChanged?: () => void }) {
  const own = useMethod("policy.list", {}, { enabled: shared === undefined, on: ["policy.changed"] });
  const policy = shared === undefined ? own : { data: shared, refresh: onChanged ?? (() => {}) };
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const id = askProviderRuleId(provider);
  const ruled = policy.data?.rules?.some((r) => r.id === id) ?? false;
  const add = async () => {
    setBusy(true);
    setError(null);
    try {
      await store.call("policy.set", { rule: { id, action: "ask", match: { provider }, reason: `every tool of ${provider} is asked` } });
      policy.refresh();
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <p class="small" data-testid="ask-every-tool">
      {ruled ? (
        <span>
          Every tool of <span class="mono">{provider}</span> is asked before it runs (rule <span class="mono">{id}</span>, on the{" "}
          <a href="#/approvals">Approvals</a> page).
        </span>
      ) : (
        <button
          type="button"
          class="btn"
          disabled={!live || busy || !policy.data || !!policy.data.error}
          title="Add a rule to policy.json: every call of this provider's or server's tools waits for your approval"
          onClick={() => void add()}
        >
          Ask for every tool of {provider}
        </button>
      )}
      {error && (
        <span class="error" role="alert">
          {" "}
          {error}
        </span>
      )}
    </p>
  );
}

import { useState } from "preact/hooks";
import type { PolicyAction, PolicyList, PolicyRule } from "../../generated";
import { plural } from "../../format";
import { store } from "../../store";
import { ConfirmButton } from "../../components/ConfirmButton";

/** What each key of a rule's match shows as. */
const MATCH_KEYS = ["tool", "provider", "session", "client", "profile"] as const;

/** A rule's match in one line: `tool=rm provider=files`, or `every call`. */
export function matchText(rule: PolicyRule): string {
  const match = rule.match ?? {};
  const parts: string[] = MATCH_KEYS.filter((k) => match[k]).map((k) => `${k}=${match[k]}`);
  for (const a of match.args ?? []) parts.push(`${a.pointer} ~ ${a.regex}`);
  return parts.length ? parts.join(" ") : "every call";
}

/**
 * The rules of `$TAP_HOME/policy.json` (`policy.list`), in order (the first that applies
 * decides), each removable, and a small form that adds one (`policy.set`: a rule of an id
 * already there replaces it in place). `list` and `onChanged` belong to the page, which also
 * adds "ask for every tool of this provider" from a waiting call.
 */
export function Rules({ list, error, live, onChanged }: { list: PolicyList | null; error: Error | null; live: boolean; onChanged: () => void }) {
  const rules = list?.rules ?? [];
  return (
    <section aria-labelledby="rules-title">
      <div class="section-head">
        <h2 id="rules-title">Rules</h2>
      </div>
      <p class="small muted" data-testid="rules-count">
        {list ? (
          <>
            {plural(rules.length, "rule")} in <span class="mono">{list.path}</span> · the first that applies decides · with none, tools annotated{" "}
            <code>destructiveHint: true</code> are asked and the rest allowed · a call waits {list.approvalTimeoutSecs} s for an answer
          </>
        ) : (
          ""
        )}
      </p>
      {(error || list?.error) && (
        <p class="error" role="alert">
          {error?.message ?? `policy.json cannot be used, so every call of a provider's tool is asked: ${list?.error}`}
        </p>
      )}
      {rules.length > 0 && (
        <div class="table-wrap">
          <table class="rules-table" data-testid="rules">
            <thead>
              <tr>
                <th>Id</th>
                <th>Action</th>
                <th>Applies to</th>
                <th>Reason</th>
                <th>
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rules.map((r) => (
                <tr key={r.id} data-testid="rule" data-id={r.id}>
                  <td class="mono">{r.id}</td>
                  <td>
                    <span class={`badge${r.action === "deny" ? " attention" : ""}`}>{r.action}</span>
                  </td>
                  <td class="mono small">{matchText(r)}</td>
                  <td class="small">{r.reason ?? ""}</td>
                  <td>
                    {live && (
                      <ConfirmButton
                        label="Remove"
                        ariaLabel={`Remove rule ${r.id}`}
                        question="Remove this rule?"
                        confirmLabel="Yes, remove"
                        onConfirm={async () => {
                          await store.call("policy.remove", { id: r.id });
                          onChanged();
                        }}
                      />
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {live && list && !list.error && <RuleForm taken={rules.map((r) => r.id)} onAdded={onChanged} />}
    </section>
  );
}

/** Adds a rule: an id, an action, and the match keys filled in (an empty one matches anything). */
function RuleForm({ taken, onAdded }: { taken: string[]; onAdded: () => void }) {
  const [id, setId] = useState("");
  const [action, setAction] = useState<PolicyAction>("ask");
  const [fields, setFields] = useState<Record<(typeof MATCH_KEYS)[number], string>>({ tool: "", provider: "", session: "", client: "", profile: "" });
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    const match: NonNullable<PolicyRule["match"]> = {};
    for (const k of MATCH_KEYS) if (fields[k].trim()) match[k] = fields[k].trim();
    try {
      await store.call("policy.set", { rule: { id: id.trim(), action, match, ...(reason.trim() ? { reason: reason.trim() } : {}) } });
      setId("");
      setReason("");
      setFields({ tool: "", provider: "", session: "", client: "", profile: "" });
      onAdded();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  const replaces = taken.includes(id.trim());
  return (
    <form class="rule-form" aria-label="Add a rule" onSubmit={(e) => void submit(e)}>
      <div class="form-grid">
        <label class="field">
          <span>Id</span>
          <input required value={id} maxLength={128} placeholder="ask-github" onInput={(e) => setId(e.currentTarget.value)} />
        </label>
        <label class="field">
          <span>Action</span>
          <select value={action} onChange={(e) => setAction(e.currentTarget.value as PolicyAction)}>
            <option value="ask">ask</option>
            <option value="allow">allow</option>
            <option value="deny">deny</option>
          </select>
        </label>
        {MATCH_KEYS.map((k) => (
          <label key={k} class="field">
            <span>{k === "tool" ? "Tool (glob)" : k[0].toUpperCase() + k.slice(1)}</span>
            <input value={fields[k]} placeholder="any" onInput={(e) => setFields({ ...fields, [k]: e.currentTarget.value })} />
          </label>
        ))}
        <label class="field">
          <span>Reason</span>
          <input value={reason} placeholder="shown when it asks or denies" onInput={(e) => setReason(e.currentTarget.value)} />
        </label>
      </div>
      <div class="form-foot">
        <button type="submit" class="btn" disabled={busy || !id.trim()}>
          {replaces ? "Replace rule" : "Add rule"}
        </button>
        <span class="small muted">Added at the end; argument patterns: <code>tap policy set … --args /path=^/etc/</code>.</span>
        {error && (
          <span class="error" role="alert">
            {error}
          </span>
        )}
      </div>
    </form>
  );
}

import type { Grant } from "../../generated";
import { relative } from "../../format";
import { store, useNow } from "../../store";
import { useMethod } from "../../method";
import { ConfirmButton } from "../../components/ConfirmButton";

const SCOPE: Record<Grant["scope"], string> = { call: "this call", session: "this session", minutes: "until", always: "always" };

/**
 * The remembered answers (`approvals.grants`, `$TAP_HOME/grants.json`): each grant's decision,
 * tool and provider, scope (session, until a time, always), argument patterns, and Revoke.
 * Asked again when one is made or revoked (`policy.changed`, from any client) and after a
 * revoke here.
 */
export function Grants({ live }: { live: boolean }) {
  const { data, error, refresh } = useMethod("approvals.grants", {}, { on: ["policy.changed"] });
  const now = useNow(30_000);
  const grants = (data?.grants ?? []).map((g) => ({ ...g, args: g.args ?? [] }));
  return (
    <section aria-labelledby="grants-title">
      <div class="section-head">
        <h2 id="grants-title">Grants</h2>
      </div>
      <p class="small muted" data-testid="grants-count">
        Answers remembered for a session, a while or always; a grant wins over the rules until revoked. Made from the answers above or{" "}
        <code>tap approvals approve ID --for …</code>.
      </p>
      {error && (
        <p class="error" role="alert">
          {error.message}
        </p>
      )}
      {data && grants.length === 0 && <p class="empty">No grant: every call is decided by the rules below.</p>}
      {grants.length > 0 && (
        <div class="table-wrap">
          <table class="grants-table" data-testid="grants">
            <thead>
              <tr>
                <th>Decision</th>
                <th>Tool</th>
                <th>Provider</th>
                <th>Scope</th>
                <th>Arguments</th>
                <th>Made</th>
                <th>
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {grants.map((g) => (
                <tr key={g.id} data-testid="grant" data-id={g.id}>
                  <td>
                    <span class={`badge${g.decision === "deny" ? " attention" : ""}`}>{g.decision === "allow" ? "allow" : "deny"}</span>
                  </td>
                  <td class="mono">{g.tool}</td>
                  <td class="mono">{g.provider}</td>
                  <td>
                    {SCOPE[g.scope]}
                    {g.scope === "session" && g.session && <span class="mono small"> {g.session}</span>}
                    {g.scope === "minutes" && g.expiresAt && <span title={g.expiresAt}> {new Date(g.expiresAt).toLocaleTimeString()}</span>}
                  </td>
                  <td class="mono small">{g.args.length ? g.args.map((a) => `${a.pointer} ~ ${a.regex}`).join(", ") : "any"}</td>
                  <td class="small" title={g.createdAt}>
                    {relative(g.createdAt, now)}
                  </td>
                  <td>
                    {live && (
                      <ConfirmButton
                        label="Revoke"
                        ariaLabel={`Revoke the grant for ${g.tool}`}
                        question="Revoke? Its calls are decided by the rules again."
                        confirmLabel="Yes, revoke"
                        onConfirm={async () => {
                          await store.call("approvals.revoke", { grant: g.id });
                          refresh();
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
    </section>
  );
}

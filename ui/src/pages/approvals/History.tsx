import { useMethod } from "../../method";
import { isoUs } from "../../format";
import { shortId } from "../../components/IdText";

/** How each `by` reads in a sentence. */
const BY: Record<string, string> = {
  user: "you",
  rule: "rule",
  grant: "grant",
  timeout: "nobody answered in time",
  cancelled: "the caller cancelled",
  "session-ended": "the session ended",
  limit: "too many calls waiting",
  "policy-error": "policy.json unusable",
};

/**
 * The decisions the ledger kept (`approvals.history`, read from each tool call's trace),
 * newest first: every call a rule, a grant or the user decided, asked or not (the defaults'
 * silent allows are every other call, so they are left out). Followed with the traces'
 * `traces.changed`, as the Traces page is: a call's span is committed when it ends, a moment
 * after its answer.
 */
export function History() {
  const { data, error } = useMethod("approvals.history", { limit: 50 }, { follow: "traces", on: ["traces.changed"] });
  const decisions = data?.decisions ?? [];
  return (
    <section aria-labelledby="history-title">
      <div class="section-head">
        <h2 id="history-title">History</h2>
      </div>
      <p class="small muted">
        The newest 50 decisions other than the defaults' silent allows, from the calls' traces{data && !data.ledger.durable ? " (kept in memory only: the history database cannot be written)" : ""}.
      </p>
      {error && (
        <p class="error" role="alert">
          {error.message}
        </p>
      )}
      {data && decisions.length === 0 && <p class="empty">No decision yet.</p>}
      {decisions.length > 0 && (
        <div class="table-wrap">
          <table data-testid="history">
            <thead>
              <tr>
                <th>Time</th>
                <th>Tool</th>
                <th>Provider</th>
                <th>Session</th>
                <th>Decision</th>
                <th>By</th>
                <th>Trace</th>
              </tr>
            </thead>
            <tbody>
              {decisions.map((d) => (
                <tr key={d.traceId} data-testid="decision">
                  <td class="small nowrap" title={isoUs(d.startUs)}>
                    {new Date(d.startUs / 1000).toLocaleTimeString([], { hour12: false })}
                  </td>
                  <td class="mono">{d.tool}</td>
                  <td class="mono">{d.provider ?? ""}</td>
                  <td class="mono small">{d.sessionId ?? ""}</td>
                  <td>
                    <span class={`badge${d.decision === "deny" ? " attention" : ""}`}>{d.decision}</span>
                  </td>
                  <td class="small">
                    {BY[d.by] ?? d.by}
                    {d.rule && <span class="mono"> {d.rule}</span>}
                    {d.grant && <span class="mono"> {d.grant}</span>}
                    {d.asked && <span class="muted"> (asked by {d.asked === "default" ? "the default" : "a rule"})</span>}
                  </td>
                  <td>
                    <a class="mono small" href={`#/traces/${d.traceId}`}>
                      {shortId(d.traceId)}
                    </a>
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

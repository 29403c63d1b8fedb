// The Overview's activity: tool calls, errors and p50/p95 latency over a chosen window
// (15 min, 1 h, 24 h, 7 d) as one chart, then the same figures per provider or server, per
// tool or per client, one row each with a sparkline. A row with errors in the window is red;
// a row opens the Traces page filtered to it. From `activity.query` (aggregated by the
// engine), refreshed by `traces.changed` at most once a second, never on a timer; between
// queries the window moves on locally at each bucket's end (activity.ts `useSliding`).

import { useEffect, useRef } from "preact/hooks";
import type { ActivityBy } from "../../generated";
import type { MethodState } from "../../method";
import { reportLedger } from "../../ledger";
import { isApproximate, rowName, WINDOWS, type ActivityReport, type ActivityRow, type ActivityWindow } from "../../activity";
import { TimeChart } from "../../components/charts/TimeChart";
import { Sparkline } from "../../components/charts/Sparkline";
import { bucketName, latency } from "../../components/charts/scale";
import { tracesHref } from "./links";
import "./overview.css";

export const GROUPS: readonly { id: ActivityBy; label: string; column: string }[] = [
  { id: "provider", label: "Providers and servers", column: "Provider or server" },
  { id: "tool", label: "Tools", column: "Tool" },
  { id: "client", label: "Clients", column: "Client" },
];

/** The view's choice; the Overview holds it (and the query) so Needs attention can share the answer. */
export interface ActivityChoice {
  window: ActivityWindow;
  by: ActivityBy;
  setWindow(w: ActivityWindow): void;
  setBy(b: ActivityBy): void;
}

export function Activity({ choice, answer }: { choice: ActivityChoice; answer: MethodState<ActivityReport> }) {
  const { setWindow, setBy } = choice;
  const { data, error } = answer;
  useEffect(() => reportLedger(data?.ledger), [data]);
  // While a new window or grouping is on its way, the last answer stays (dimmed) rather than
  // the block shrinking to "Loading…" and moving the controls under the pointer.
  const shown = useRef<{ report: ActivityReport; window: ActivityWindow; by: ActivityBy } | null>(null);
  if (data) shown.current = { report: data, window: choice.window, by: choice.by };
  const report = shown.current?.report ?? null;
  const window = shown.current?.window ?? choice.window;
  const by = shown.current?.by ?? choice.by;
  const stale = !data && report !== null;
  const chosen = WINDOWS.find((w) => w.id === window)!;

  return (
    <section class={`activity${stale ? " stale" : ""}`} aria-labelledby="activity-heading" aria-busy={stale} data-testid="overview-activity">
      <div class="activity-head">
        <h2 id="activity-heading">Activity</h2>
        <Choice name="activity-window" label="Window" options={WINDOWS.map((w) => ({ id: w.id, label: w.label }))} value={choice.window} onChange={setWindow} />
      </div>
      {error && (
        <p class="error" role="alert">
          {error.message}
        </p>
      )}
      {report ? (
        <>
          <Totals report={report} windowLabel={chosen.long} />
          <TimeChart buckets={report.total.buckets} fromMs={Date.parse(report.from)} bucketSecs={report.bucketSecs} title="Tool calls" windowLabel={chosen.long} />
          <div class="activity-head">
            <h3 id="breakdown-heading">By {GROUPS.find((g) => g.id === by)!.column.toLowerCase()}</h3>
            <Choice name="activity-by" label="Group by" options={GROUPS} value={choice.by} onChange={setBy} />
          </div>
          <Rows report={report} by={by} window={window} windowLabel={chosen.long} />
        </>
      ) : (
        !error && <p class="muted small">Loading…</p>
      )}
    </section>
  );
}

/** Radio buttons drawn as a segmented control (the keyboard and screen readers get radios). */
function Choice<T extends string>(props: { name: string; label: string; options: readonly { id: T; label: string }[]; value: T; onChange: (v: T) => void }) {
  return (
    <fieldset class="segmented" data-testid={props.name}>
      <legend class="sr-only">{props.label}</legend>
      {props.options.map((o) => (
        <label key={o.id} class={o.id === props.value ? "on" : undefined}>
          <input type="radio" name={props.name} value={o.id} checked={o.id === props.value} onChange={() => props.onChange(o.id)} />
          {o.label}
        </label>
      ))}
    </fieldset>
  );
}

/** "≈" before a p50/p95 the engine gave for a window that has moved on since (the calls that
 * left it still count there), until the next query. */
const APPROX_TITLE = "Counts calls that have since left the window: exact again with the next call";
const approx = (row: ActivityRow) => (isApproximate(row) ? "≈" : "");

function Totals({ report, windowLabel }: { report: ActivityReport; windowLabel: string }) {
  const t = report.total;
  const title = isApproximate(t) ? APPROX_TITLE : undefined;
  return (
    <p class="activity-totals" data-testid="activity-totals" data-calls={t.calls} data-errors={t.errors}>
      <span>
        <strong>{t.calls}</strong> {t.calls === 1 ? "tool call" : "tool calls"}
      </span>
      <span class={t.errors > 0 ? "error" : undefined}>
        <strong>{t.errors}</strong> {t.errors === 1 ? "error" : "errors"}
      </span>
      <span title={title}>
        p50 <strong>{approx(t)}{latency(t.p50Ms)}</strong>
      </span>
      <span title={title}>
        p95 <strong>{approx(t)}{latency(t.p95Ms)}</strong>
      </span>
      <span class="muted small">
        {windowLabel}, per {bucketName(report.bucketSecs)}
        {!report.ledger.durable && " · since the gateway started (history in memory only)"}
      </span>
    </p>
  );
}

function Rows({ report, by, window, windowLabel }: { report: ActivityReport; by: ActivityBy; window: ActivityWindow; windowLabel: string }) {
  const group = GROUPS.find((g) => g.id === by)!;
  if (report.rows.length === 0) return <p class="empty small">No tool calls in the {windowLabel}.</p>;
  return (
    <div class="table-wrap">
      <table class="activity-rows" aria-labelledby="breakdown-heading" data-testid="activity-rows" data-by={by}>
        <thead>
          <tr>
            <th scope="col">{group.column}</th>
            <th scope="col">
              <span class="sr-only">Calls over time</span>
            </th>
            <th scope="col" class="num">
              Calls
            </th>
            <th scope="col" class="num">
              Errors
            </th>
            <th scope="col" class="num">
              p95
            </th>
          </tr>
        </thead>
        <tbody>
          {report.rows.map((r) => (
            <Row key={r.key ?? ""} r={r} by={by} window={window} windowLabel={windowLabel} />
          ))}
        </tbody>
      </table>
      {report.truncated && <p class="small muted">Only the busiest {report.rows.length} are listed.</p>}
    </div>
  );
}

/** The Traces page for this row, or none ("other": calls no provider answered, or from no client). */
function rowHref(r: ActivityRow, by: ActivityBy, window: ActivityWindow): string | null {
  if (!r.key) return null;
  return tracesHref({ [by]: r.key, range: window });
}

function Row({ r, by, window, windowLabel }: { r: ActivityRow; by: ActivityBy; window: ActivityWindow; windowLabel: string }) {
  const name = rowName(r);
  const href = rowHref(r, by, window);
  const bad = r.errors > 0;
  return (
    <tr
      class={`${bad ? "row-error" : ""}${href ? " row-link" : ""}`}
      data-key={r.key ?? ""}
      data-calls={r.calls}
      data-errors={r.errors}
      onClick={(e) => {
        // The name is the link (keyboard and screen readers); the rest of the row is a bigger target.
        if (href && !(e.target as HTMLElement).closest("a")) location.hash = href.slice(1);
      }}
    >
      <th scope="row" class="breakable">
        {href ? (
          <a href={href} title={`Traces of ${name}, ${windowLabel}`}>
            {name}
          </a>
        ) : (
          <span class={r.key ? "" : "muted"}>{name}</span>
        )}
        {bad && <span class="sr-only"> (has errors)</span>}
      </th>
      <td class="spark-cell">
        <Sparkline buckets={r.buckets} label={`${name}, ${windowLabel}`} />
      </td>
      <td class="num">{r.calls}</td>
      <td class={`num${bad ? " error strong" : ""}`} data-testid="row-errors">
        {r.errors}
      </td>
      <td class="num nowrap" title={`p50 ${approx(r)}${latency(r.p50Ms)}${isApproximate(r) ? `. ${APPROX_TITLE}` : ""}`}>
        {approx(r)}
        {latency(r.p95Ms)}
      </td>
    </tr>
  );
}

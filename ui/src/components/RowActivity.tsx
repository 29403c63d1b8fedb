// Activity per row on the Providers, Servers and Clients pages (issue 42): each row of those
// tables gets a sparkline of its tool calls and errors over the chosen window, the counts and
// the p95, red when some failed; a click opens the Traces page filtered to it.
//
// One `activity.query` per page, grouped by the page's key (`by`), not one per row: the rows
// look themselves up in its answer. It is asked again on `traces.changed` (throttled, in
// `useActivity`), never on a timer; between queries the window moves on at each bucket's end
// (`useSliding`). The window is chosen on each page and kept for the tab, so going from page
// to page compares the same span of time.

import { useState } from "preact/hooks";
import { isApproximate, useActivity, useSliding, WINDOWS, type ActivityParams, type ActivityReport, type ActivityRow, type ActivityWindow } from "../activity";
import { Sparkline } from "./charts/Sparkline";
import { count, latency } from "./charts/scale";
import { tracesHref, type TraceFilter } from "../pages/overview/links";
import "./row-activity.css";

/** The window the pages' rows show, shared by the pages for the tab's life. */
let chosen: ActivityWindow = "1h";

/** The provider name an MCP server's tools are offered under (the gateway's `MCP_SERVER_PROVIDER_PREFIX`). */
export const serverProvider = (name: string) => `mcp-${name}`;

export interface RowActivity {
  window: ActivityWindow;
  setWindow: (w: ActivityWindow) => void;
  /** The row of `key`, or an empty one (no calls in the window). */
  row: (key: string) => ActivityRow;
  report: ActivityReport | null;
  error: Error | null;
}

/**
 * The page's one query: rows grouped by `by` (optionally within `filter`); `given`, a window
 * chosen elsewhere on the page (a server's tools follow the servers' table).
 */
export function useRowActivity(by: NonNullable<ActivityParams["by"]>, filter: Omit<ActivityParams, "window" | "by"> = {}, given?: ActivityWindow): RowActivity {
  const [own, set] = useState<ActivityWindow>(chosen);
  const window = given ?? own;
  const { data, error } = useActivity({ window, by, ...filter });
  // The answer may still be the previous window's while the new one is on its way.
  const report = useSliding(data && data.window === window ? data : null);
  const byKey = new Map((report?.rows ?? []).map((r) => [r.key ?? "", r]));
  const empty: ActivityRow = { key: null, calls: 0, errors: 0, p50Ms: null, p95Ms: null, buckets: report?.total.buckets.map(() => ({ calls: 0, errors: 0, p50Ms: null, p95Ms: null })) ?? [] };
  return {
    window,
    setWindow: (w) => {
      chosen = w;
      set(w);
    },
    row: (key) => byKey.get(key) ?? { ...empty, key },
    report,
    error,
  };
}

/** The window selector above a table: a small select, labelled. */
export function WindowSelect({ activity }: { activity: RowActivity }) {
  return (
    <label class="row-window small">
      Activity over{" "}
      <select value={activity.window} onChange={(e) => activity.setWindow((e.currentTarget as HTMLSelectElement).value as ActivityWindow)}>
        {WINDOWS.map((w) => (
          <option key={w.id} value={w.id}>
            the {w.long}
          </option>
        ))}
      </select>
      {activity.error && (
        <span class="error" role="alert">
          {" "}
          {activity.error.message}
        </span>
      )}
      {activity.report?.truncated && <span class="muted"> (only the busiest {activity.report.rows.length} have figures)</span>}
    </label>
  );
}

/** The `<tr>` class for a row with these figures: red when a call failed in the window. */
export const rowClass = (row: ActivityRow) => (row.errors > 0 ? "row-failing" : "");

/**
 * A table cell (or, `as="div"`, a block in a list item): the sparkline, `N calls · E errors`,
 * `p95 X`; a link to the row's traces when `filter` is given.
 */
export function ActivityCell({ row, name, window, filter, as: Tag = "td" }: { row: ActivityRow; name: string; window: ActivityWindow; filter?: TraceFilter; as?: "td" | "div" }) {
  const long = WINDOWS.find((w) => w.id === window)!.long;
  const href = filter ? tracesHref({ ...filter, range: window }) : null;
  const figures = (
    <>
      <Sparkline buckets={row.buckets} label={`${name}, ${long}`} width={80} />
      <span class="row-figures small">
        <span data-testid="row-calls">{count(row.calls, "call")}</span>
        {row.errors > 0 && (
          <>
            {" · "}
            <span class="error strong" data-testid="row-errors">
              {count(row.errors, "error")}
            </span>
          </>
        )}
        {/* On a line of its own: the column stays narrow beside the tables' other columns. */}
        {row.calls > 0 && (
          <span class="row-p95 muted" title={`p50 ${latency(row.p50Ms)}${isApproximate(row) ? " (≈: counts calls that have since left the window)" : ""}`}>
            p95 {isApproximate(row) ? "≈" : ""}
            {latency(row.p95Ms)}
          </span>
        )}
      </span>
    </>
  );
  return (
    <Tag class="row-activity" data-testid="row-activity" data-calls={row.calls} data-errors={row.errors}>
      {href ? (
        <a href={href} title={`Tool calls of ${name}, ${long}, on the Traces page`} aria-label={`Traces of ${name}: ${count(row.calls, "call")}, ${count(row.errors, "error")} in the ${long}`}>
          {figures}
        </a>
      ) : (
        figures
      )}
    </Tag>
  );
}

// Activity figures (issue 42): tool calls, errors and latency per time bucket, aggregated by
// the engine (`activity.query`), never by the browser scanning traces.
//
// `useActivity(params)` asks once connected, again when the params change, after a
// reconnect, and when the ledger says traces changed (`traces.changed`, which the panel
// follows while a chart is shown). Those events are throttled here to at most one query a
// second: a busy gateway sends up to four a second and a chart needs no more. There is no
// timer that asks on its own: an idle gateway costs nothing. The range still moves on while
// idle (`useSliding`): at each bucket's end the panel's clock (`useNow`) shifts the window
// itself, the oldest bucket out and an empty one in, since no `traces.changed` means no new
// call to count (issue 42).

import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { useMethod, type MethodState } from "./method";
import { useControlEvents, useNow } from "./store";
import type { Params, Result } from "./transport";

export type ActivityParams = Params<"activity.query">;
export type ActivityReport = Result<"activity.query">;
export type ActivityRow = ActivityReport["total"];
export type ActivityWindow = ActivityParams["window"];

/** The windows the panel offers, shortest first. */
export const WINDOWS: readonly { id: ActivityWindow; label: string; long: string }[] = [
  { id: "15m", label: "15 min", long: "last 15 minutes" },
  { id: "1h", label: "1 h", long: "last hour" },
  { id: "24h", label: "24 h", long: "last 24 hours" },
  { id: "7d", label: "7 d", long: "last 7 days" },
];

/** The least time between two queries caused by `traces.changed`. */
export const ACTIVITY_THROTTLE_MS = 1000;

/**
 * `traces.changed`, at most once per `ms`: the first event of a quiet spell at once, the
 * ones within `ms` of the last answer as one, `ms` after it. Returns a number that changes
 * each time (a `useMethod` watch value).
 */
function useThrottledTracesChanged(ms: number): number {
  const [tick, setTick] = useState(0);
  const last = useRef(0);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
    },
    [],
  );
  useControlEvents((event) => {
    if (event.kind !== "traces.changed" || timer.current) return;
    const wait = last.current + ms - performance.now();
    const fire = () => {
      timer.current = null;
      last.current = performance.now();
      setTick((t) => t + 1);
    };
    if (wait <= 0) fire();
    else timer.current = setTimeout(fire, wait);
  });
  return tick;
}

/** `activity.query(params)`, kept current by `traces.changed` (throttled), never polled. */
export function useActivity(params: ActivityParams, options: { enabled?: boolean } = {}): MethodState<ActivityReport> {
  const tick = useThrottledTracesChanged(ACTIVITY_THROTTLE_MS);
  return useMethod("activity.query", params, { follow: "traces", watch: [tick], enabled: options.enabled });
}

/** A row's name as shown: calls with no client are "other". */
export function rowName(row: ActivityRow): string {
  return row.key === null ? "all" : row.key === "" ? "other" : row.key;
}

const EMPTY_BUCKET: ActivityRow["buckets"][number] = { calls: 0, errors: 0, p50Ms: null, p95Ms: null };

/** Rows whose p50/p95 still count calls that have left the window (the engine's figure
 * over the whole window cannot be split by bucket here): shown as approximate. */
const approximate = new WeakSet<ActivityRow>();

/** Whether `row`'s p50/p95 are the engine's over a window that has since moved on. */
export const isApproximate = (row: ActivityRow) => approximate.has(row);

/**
 * `report` with its window moved on by `shift` buckets: the oldest leave, as many empty ones
 * come in at the end, and the counts lose the calls that left. Nothing new is counted: a call
 * would have been told (`traces.changed`) and asked for. Rows left with no call go, as the
 * engine leaves them out.
 */
export function slide(report: ActivityReport, shift: number): ActivityReport {
  if (shift <= 0) return report;
  const ms = report.bucketSecs * 1000;
  const moved = (iso: string) => new Date(Date.parse(iso) + shift * ms).toISOString();
  const row = (r: ActivityRow): ActivityRow => {
    const out = Math.min(shift, r.buckets.length);
    const gone = r.buckets.slice(0, out);
    const goneCalls = gone.reduce((n, b) => n + b.calls, 0);
    const calls = Math.max(0, r.calls - goneCalls);
    const errors = Math.max(0, r.errors - gone.reduce((n, b) => n + b.errors, 0));
    const buckets = [...r.buckets.slice(out), ...Array.from({ length: out }, () => EMPTY_BUCKET)];
    const next = { ...r, calls, errors, buckets, p50Ms: calls > 0 ? r.p50Ms : null, p95Ms: calls > 0 ? r.p95Ms : null };
    if (calls > 0 && (goneCalls > 0 || approximate.has(r))) approximate.add(next);
    return next;
  };
  return { ...report, from: moved(report.from), to: moved(report.to), total: row(report.total), rows: report.rows.map(row).filter((r) => r.calls > 0) };
}

/**
 * `report` as of now: moved on by the buckets that ended since the engine answered
 * (`slide`), redrawn at each bucket's end by the panel's one clock, which asks nothing.
 */
export function useSliding(report: ActivityReport | null): ActivityReport | null {
  const to = report ? Date.parse(report.to) : Number.NaN;
  const ms = (report?.bucketSecs ?? 60) * 1000;
  const shift = useNow(1000, (now) => (report && now >= to ? Math.floor((now - to) / ms) + 1 : 0));
  return useMemo(() => (report ? slide(report, shift) : null), [report, shift]);
}

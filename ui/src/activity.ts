// Activity figures (issue 42): tool calls, errors and latency per time bucket, aggregated by
// the engine (`activity.query`), never by the browser scanning traces.
//
// `useActivity(params)` asks once connected, again when the params change, after a
// reconnect, and when the ledger says traces changed (`traces.changed`, which the panel
// follows while a chart is shown). Those events are throttled here to at most one query a
// second: a busy gateway sends up to four a second and a chart needs no more. There is no
// timer that asks on its own: an idle gateway costs nothing, and the range moves on with
// the next call, reconnect or change of window.

import { useEffect, useRef, useState } from "preact/hooks";
import { useMethod, type MethodState } from "./method";
import { useControlEvents } from "./store";
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

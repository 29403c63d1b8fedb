import { useEffect, useRef, useState } from "preact/hooks";
import type { Bucket } from "./scale";
import { bucketName, count, latency, niceMax, rangeLabel, tickLabel } from "./scale";
import "./charts.css";

/** Left margin (the y labels), right margin, in CSS px. */
const ML = 52;
const MR = 10;
/** The calls chart's plot height and the latency chart's; the x labels' row below the latter. */
const CALLS_H = 104;
const LAT_H = 64;
const AXIS_H = 20;
const PAD_TOP = 8;
/** Room each x label needs, for how many fit. */
const TICK_PX = 84;

export interface TimeChartProps {
  /** One per bucket, oldest first, from `fromMs`. */
  buckets: readonly Bucket[];
  fromMs: number;
  bucketSecs: number;
  /** What is counted, for labels ("Tool calls"). */
  title: string;
  /** The window in words ("last hour"), for labels. */
  windowLabel: string;
}

/** The width of `ref`'s element, followed with a ResizeObserver (told, not polled). */
function useWidth(fallback: number) {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(fallback);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const measure = () => setWidth(Math.max(240, Math.floor(el.clientWidth)));
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  return { ref, width };
}

/** An SVG path through the points, broken where a value is missing. */
function linePath(values: (number | null)[], x: (i: number) => number, y: (v: number) => number): string {
  let d = "";
  let open = false;
  values.forEach((v, i) => {
    if (v === null) {
      open = false;
      return;
    }
    d += `${open ? "L" : "M"}${x(i).toFixed(1)},${y(v).toFixed(1)}`;
    open = true;
  });
  return d;
}

/** The smallest round number of buckets at or above `raw` (5 min, 15 min, 1 h, 6 h, a day…). */
function niceEvery(raw: number, bucketSecs: number): number {
  const secs = [60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800];
  for (const s of secs) if (s >= bucketSecs && s % bucketSecs === 0 && s / bucketSecs >= raw) return s / bucketSecs;
  return Math.max(1, raw);
}

/** Whether `ms` falls on a multiple of `secs` in local time (so "08:00", "Sun 00:00"). */
function isRound(ms: number, secs: number): boolean {
  const local = ms / 1000 - new Date(ms).getTimezoneOffset() * 60;
  return Math.round(local) % secs === 0;
}

const value = (v: number | null | undefined) => (v === null || v === undefined || !Number.isFinite(v) ? null : v);

/**
 * Calls per bucket as bars (errors the red part at the bottom of each bar, with a red dot
 * above it so one error among many still shows), and below on its own axis the p50 and p95
 * latency per bucket as lines. Hover or arrow keys (the chart is focusable) show a bucket's
 * figures; screen readers get a summary per chart and the figures as a table.
 */
export function TimeChart({ buckets, fromMs, bucketSecs, title, windowLabel }: TimeChartProps) {
  const { ref, width } = useWidth(640);
  const [at, setAt] = useState<number | null>(null);
  const n = Math.max(buckets.length, 1);
  const plotW = Math.max(40, width - ML - MR);
  const step = plotW / n;
  const spanSecs = n * bucketSecs;
  const per = bucketName(bucketSecs);
  const startOf = (i: number) => fromMs + i * bucketSecs * 1000;
  const cx = (i: number) => ML + (i + 0.5) * step;

  const calls = buckets.reduce((s, b) => s + b.calls, 0);
  const errors = buckets.reduce((s, b) => s + b.errors, 0);
  const callsTop = niceMax(Math.max(0, ...buckets.map((b) => b.calls)));
  const p50 = buckets.map((b) => value(b.p50Ms));
  const p95 = buckets.map((b) => value(b.p95Ms));
  const latMax = Math.max(0, ...p50.map((v) => v ?? 0), ...p95.map((v) => v ?? 0));
  const latTop = niceMax(latMax, 1);
  const yCalls = (v: number) => PAD_TOP + CALLS_H - (v / callsTop) * CALLS_H;
  const yLat = (v: number) => PAD_TOP + LAT_H - (v / latTop) * LAT_H;
  const busiest = buckets.reduce((best, b, i) => (b.calls > (buckets[best]?.calls ?? -1) ? i : best), 0);

  // x labels on bucket edges at round times (every 5 min, 1 h, a day…), as many as fit,
  // the window's end always, and the start when there is room.
  const every = niceEvery(Math.ceil(n / Math.max(2, Math.floor(plotW / TICK_PX))), bucketSecs);
  const roomy = (a: number, b: number) => Math.abs(b - a) * step >= TICK_PX * 0.8;
  const ticks: number[] = [];
  for (let i = 0; i < n; i++) if (isRound(startOf(i), every * bucketSecs) && (ticks.length === 0 || roomy(ticks[ticks.length - 1], i))) ticks.push(i);
  while (ticks.length > 0 && !roomy(ticks[ticks.length - 1], n)) ticks.pop();
  ticks.push(n);
  if (ticks[0] !== 0 && roomy(0, ticks[0])) ticks.unshift(0);
  const callTicks = callsTop >= 2 ? [0, callsTop / 2, callsTop] : [0, callsTop];
  const latTicks = [0, latTop / 2, latTop];

  const pick = (clientX: number) => {
    const box = ref.current?.getBoundingClientRect();
    if (!box) return;
    const i = Math.floor((clientX - box.left - ML) / step);
    setAt(i >= 0 && i < buckets.length ? i : null);
  };
  const onKey = (e: KeyboardEvent) => {
    const last = buckets.length - 1;
    const cur = at ?? last;
    const next = e.key === "ArrowLeft" ? cur - 1 : e.key === "ArrowRight" ? cur + 1 : e.key === "Home" ? 0 : e.key === "End" ? last : null;
    if (e.key === "Escape") setAt(null);
    if (next === null) return;
    e.preventDefault();
    setAt(Math.min(last, Math.max(0, next)));
  };

  const hovered = at !== null && at < buckets.length ? buckets[at] : null;
  const tipLeft = at === null ? 0 : Math.min(Math.max(cx(at), ML + 70), width - 80);
  const summary = `${title} per ${per}, ${windowLabel}: ${count(calls, "call")}, ${count(errors, "error")}${calls > 0 ? `, busiest ${per} ${tickLabel(startOf(busiest), spanSecs)} with ${buckets[busiest].calls}` : ""}`;
  const xAt = (i: number) => ML + i * step;

  return (
    <figure class="timechart" data-testid="timechart" data-bucket-secs={bucketSecs} data-from={fromMs} data-buckets={buckets.length} data-calls={calls} data-errors={errors}>
      <figcaption class="tc-legend small">
        <span>
          <i class="key key-calls" aria-hidden="true" /> calls per {per}
        </span>
        <span>
          <i class="key key-errors" aria-hidden="true" /> errors
        </span>
        <span>
          <i class="key key-p50" aria-hidden="true" /> p50 latency
        </span>
        <span>
          <i class="key key-p95" aria-hidden="true" /> p95 latency
        </span>
      </figcaption>
      <div
        ref={ref}
        class="tc-plot"
        tabIndex={0}
        role="group"
        aria-label={`${summary}. Arrow keys step through the ${per}s.`}
        onMouseMove={(e) => pick(e.clientX)}
        onMouseLeave={() => setAt(null)}
        onBlur={() => setAt(null)}
        onKeyDown={onKey}
      >
        <svg class="tc-calls" width={width} height={PAD_TOP + CALLS_H + 10} role="img" aria-label={summary}>
          {callTicks.map((t) => (
            <g key={t} class="tc-ytick">
              <line class="tc-grid" x1={ML} x2={width - MR} y1={yCalls(t)} y2={yCalls(t)} />
              <text x={ML - 6} y={yCalls(t) + 4} text-anchor="end">
                {Number.isInteger(t) ? t : t.toFixed(1)}
              </text>
            </g>
          ))}
          {at !== null && <rect class="tc-hover" x={xAt(at)} y={PAD_TOP} width={step} height={CALLS_H} />}
          {buckets.map((b, i) => {
            if (b.calls <= 0 && b.errors <= 0) return null;
            const top = yCalls(Math.max(b.calls, b.errors));
            const errTop = yCalls(b.errors);
            const base = yCalls(0);
            const w = Math.max(1, step * 0.8);
            const x = xAt(i) + (step - w) / 2;
            return (
              <g key={i} class="tc-bar" data-i={i} data-calls={b.calls} data-errors={b.errors}>
                <rect class="tc-ok" x={x} y={top} width={w} height={Math.max(1, base - top)} />
                {b.errors > 0 && (
                  <>
                    <rect class="tc-err" x={x} y={errTop} width={w} height={Math.max(1.5, base - errTop)} />
                    <circle class="tc-err-dot" cx={cx(i)} cy={Math.max(PAD_TOP - 2, top - 5)} r={2.5} />
                  </>
                )}
              </g>
            );
          })}
          {calls === 0 && (
            <text class="tc-empty" x={ML + plotW / 2} y={PAD_TOP + CALLS_H / 2} text-anchor="middle">
              No tool calls in the {windowLabel}
            </text>
          )}
        </svg>
        <svg class="tc-latency" width={width} height={PAD_TOP + LAT_H + AXIS_H} role="img" aria-label={`p50 and p95 latency per ${per}, ${windowLabel}`}>
          {latTicks.map((t) => (
            <g key={t} class="tc-ytick">
              <line class="tc-grid" x1={ML} x2={width - MR} y1={yLat(t)} y2={yLat(t)} />
              <text x={ML - 6} y={yLat(t) + 4} text-anchor="end">
                {t === 0 ? "0" : latency(t)}
              </text>
            </g>
          ))}
          {at !== null && <rect class="tc-hover" x={xAt(at)} y={PAD_TOP} width={step} height={LAT_H} />}
          <path class="tc-p95" d={linePath(p95, cx, yLat)} />
          <path class="tc-p50" d={linePath(p50, cx, yLat)} />
          {p95.map((v, i) => v !== null && <circle key={`95-${i}`} class="tc-p95-dot" cx={cx(i)} cy={yLat(v)} r={2} />)}
          {p50.map((v, i) => v !== null && <circle key={`50-${i}`} class="tc-p50-dot" cx={cx(i)} cy={yLat(v)} r={2} />)}
          <g class="tc-xaxis" data-testid="timechart-xaxis">
            {ticks.map((i) => (
              <text key={i} class="tc-xtick" x={xAt(i)} y={PAD_TOP + LAT_H + 15} text-anchor={i === 0 ? "start" : i === n ? "end" : "middle"}>
                {tickLabel(startOf(i), spanSecs)}
              </text>
            ))}
          </g>
        </svg>
        {hovered && at !== null && (
          <div class="tc-tip" style={{ left: `${tipLeft}px` }} role="status" data-testid="timechart-tip">
            <div class="strong">{rangeLabel(startOf(at), bucketSecs, spanSecs)}</div>
            <div>{count(hovered.calls, "call")}</div>
            <div class={hovered.errors > 0 ? "error" : "muted"}>{count(hovered.errors, "error")}</div>
            <div class="muted">
              p50 {latency(hovered.p50Ms)} · p95 {latency(hovered.p95Ms)}
            </div>
          </div>
        )}
      </div>
      <table class="sr-only">
        <caption>
          {title} per {per}, {windowLabel}
        </caption>
        <thead>
          <tr>
            <th scope="col">From</th>
            <th scope="col">Calls</th>
            <th scope="col">Errors</th>
            <th scope="col">p50</th>
            <th scope="col">p95</th>
          </tr>
        </thead>
        <tbody>
          {buckets.map((b, i) =>
            b.calls > 0 ? (
              <tr key={i}>
                <th scope="row">{tickLabel(startOf(i), spanSecs)}</th>
                <td>{b.calls}</td>
                <td>{b.errors}</td>
                <td>{latency(b.p50Ms)}</td>
                <td>{latency(b.p95Ms)}</td>
              </tr>
            ) : null,
          )}
        </tbody>
      </table>
    </figure>
  );
}

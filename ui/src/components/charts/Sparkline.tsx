import type { Bucket } from "./scale";
import { count } from "./scale";
import "./charts.css";

/**
 * A tiny inline chart of calls per bucket (bars, oldest left), the errors among them in red
 * from the bottom of each bar. Scaled to the row's own busiest bucket: it shows a row's
 * shape, the numbers beside it give the size. One SVG, no interaction; what it shows is
 * said in its label.
 */
export function Sparkline({ buckets, label, width = 96, height = 22 }: { buckets: readonly Bucket[]; label: string; width?: number; height?: number }) {
  const n = Math.max(buckets.length, 1);
  const max = Math.max(1, ...buckets.map((b) => b.calls));
  const step = width / n;
  // At least 2 px, so a red part shows even with 60 buckets in 96 px (neighbours may touch).
  const bar = Math.max(2, step - (step > 3 ? 1 : 0));
  const calls = buckets.reduce((s, b) => s + b.calls, 0);
  const errors = buckets.reduce((s, b) => s + b.errors, 0);
  const h = (v: number) => (v <= 0 ? 0 : Math.max(1.5, (v / max) * (height - 1)));
  return (
    <svg
      class={`sparkline${errors > 0 ? " has-errors" : ""}`}
      width={width}
      height={height}
      viewBox={`0 0 ${width} ${height}`}
      role="img"
      aria-label={`${label}: ${count(calls, "call")}, ${count(errors, "error")} in ${n} buckets`}
      data-calls={calls}
      data-errors={errors}
    >
      <line class="spark-base" x1={0} x2={width} y1={height - 0.5} y2={height - 0.5} />
      {buckets.map((b, i) => {
        if (b.calls <= 0 && b.errors <= 0) return null;
        const x = i * step;
        const total = h(Math.max(b.calls, b.errors));
        const bad = b.errors > 0 ? Math.max(3, h(b.errors)) : 0;
        return (
          <g key={i}>
            <rect class="spark-calls" x={x} y={height - total} width={bar} height={total} />
            {bad > 0 && <rect class="spark-errors" x={x} y={height - bad} width={bar} height={bad} />}
          </g>
        );
      })}
    </svg>
  );
}

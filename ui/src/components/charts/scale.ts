// What the charts share: the bucket shape they draw, scales, and how times and latencies read.

/** One time bucket, as `activity.query` reports it (any extra fields are ignored). */
export interface Bucket {
  calls: number;
  errors: number;
  p50Ms?: number | null;
  p95Ms?: number | null;
}

/** The smallest of 1, 2, 2.5, 5 × 10^k at or above `v` (at least `min`): an axis top that reads well. */
export function niceMax(v: number, min = 1): number {
  const x = Math.max(v, min);
  const p = 10 ** Math.floor(Math.log10(x));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= x) return m * p;
  return 10 * p;
}

/** A latency: "0.4 ms", "12 ms", "1.2 s"; "—" when there is none. */
export function latency(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "—";
  if (ms < 10) return `${ms.toFixed(1)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  return `${(ms / 60_000).toFixed(1)} min`;
}

/** "minute", "30 min", "3 h": what one bucket is, for titles ("calls per minute"). */
export function bucketName(secs: number): string {
  if (secs === 60) return "minute";
  if (secs === 3600) return "hour";
  if (secs === 86400) return "day";
  if (secs < 3600) return `${Math.round(secs / 60)} min`;
  if (secs < 86400) return `${+(secs / 3600).toFixed(1)} h`;
  return `${+(secs / 86400).toFixed(1)} d`;
}

const pad = (n: number) => String(n).padStart(2, "0");
const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

/** An axis label for a bucket start: "14:05" within a day, "Sat 09:00" across days (local time). */
export function tickLabel(ms: number, spanSecs: number): string {
  const d = new Date(ms);
  const hm = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  return spanSecs > 86400 ? `${DAYS[d.getDay()]} ${hm}` : hm;
}

/** A bucket's time range for a tooltip: "14:05–14:06", or "Sat 09:00–12:00". */
export function rangeLabel(startMs: number, bucketSecs: number, spanSecs: number): string {
  const end = new Date(startMs + bucketSecs * 1000);
  return `${tickLabel(startMs, spanSecs)}–${pad(end.getHours())}:${pad(end.getMinutes())}`;
}

/** "1 call", "3 calls". */
export function count(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

// Small, dependency-free formatting for times and durations.

/** `1d 2h`, `3h 04m`, `5m 06s`, `7s`. */
export function duration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  const pad = (n: number) => String(n).padStart(2, "0");
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${pad(m)}m`;
  if (m > 0) return `${m}m ${pad(sec)}s`;
  return `${sec}s`;
}

/** `4:07` for a countdown. */
export function countdown(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/** Local wall-clock time of an RFC 3339 timestamp, `14:03:27`. */
export function clock(rfc3339: string): string {
  const t = new Date(rfc3339);
  return Number.isNaN(t.getTime()) ? rfc3339 : t.toLocaleTimeString([], { hour12: false });
}

/** Local time with milliseconds, for stream events: `14:03:27.120`. */
export function clockMs(rfc3339: string): string {
  const t = new Date(rfc3339);
  if (Number.isNaN(t.getTime())) return rfc3339;
  return `${t.toLocaleTimeString([], { hour12: false })}.${String(t.getMilliseconds()).padStart(3, "0")}`;
}

/** `3m 10s ago`, relative to `now`. */
export function ago(rfc3339: string, now: number): string {
  const t = Date.parse(rfc3339);
  return Number.isNaN(t) ? rfc3339 : `${duration(now - t)} ago`;
}

/** `2d 3h`, `1h 04m`, `52m`, `40s`: a duration to the minute once it is one. */
export function roughDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m}m`;
  return duration(m * 60_000);
}

/** `in 52m` for a time to come, `3m ago` for one gone, relative to `now`, to the minute. */
export function relative(rfc3339: string, now: number): string {
  const t = Date.parse(rfc3339);
  if (Number.isNaN(t)) return rfc3339;
  return t >= now ? `in ${roughDuration(t - now)}` : `${roughDuration(now - t)} ago`;
}

/** Full local date and time, for tooltips. */
export function fullTime(rfc3339: string): string {
  const t = new Date(rfc3339);
  return Number.isNaN(t.getTime()) ? rfc3339 : t.toLocaleString();
}

/** Compact one-line JSON, cut to `max` characters. */
export function shortJson(value: unknown, max = 160): string {
  const text = JSON.stringify(value) ?? "";
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * `text` split after `_ . - / :` so that long names and tool names wrap at their
 * separators; render each part followed by a <wbr>.
 */
export function breakParts(text: string): string[] {
  return text.split(/(?<=[_.\-/:])/);
}

/** A session as the panel names it in pickers: its label with its id, or the id alone. */
export function sessionName(s: { id: string; label?: string | null }): string {
  return s.label ? `${s.label} (${s.id})` : s.id;
}

/** A span or trace duration in microseconds: `850 µs`, `12.4 ms`, `3.20 s`. */
export function durationUs(us: number): string {
  if (us < 1000) return `${Math.round(us)} µs`;
  if (us < 10_000) return `${(us / 1000).toFixed(2)} ms`;
  if (us < 1_000_000) return `${(us / 1000).toFixed(1)} ms`;
  if (us < 60_000_000) return `${(us / 1_000_000).toFixed(2)} s`;
  return duration(us / 1000);
}

/** A time in microseconds since the epoch as RFC 3339 (millisecond precision). */
export function isoUs(us: number): string {
  return new Date(Math.floor(us / 1000)).toISOString();
}

/** Bytes as `812 B`, `4.2 KiB`, `17.0 MiB`, `1.20 GiB`. */
export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

/** `1 event`, `3 events`. */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

import { useState } from "preact/hooks";
import type { EmitterInfo, EmitterRun } from "../../generated";
import { clock, clockMs, duration, fullTime } from "../../format";

/** The Streams page on one session's stream (the panel cannot filter a stream by run). */
export function streamLink(sessionId: string, stream: string): string {
  return `#/streams/${encodeURIComponent(sessionId)}?stream=${encodeURIComponent(stream)}`;
}

/** How a run ended, for its colour: exited 0 (or a delivered prompt), non-zero, stopped, error, running. */
export type RunOutcome = "ok" | "failed" | "stopped" | "error" | "running";

export function runOutcome(r: EmitterRun): RunOutcome {
  switch (r.status) {
    case "running":
    case "stopping":
    case "queued":
    case "waiting":
      return r.endedAt ? "stopped" : "running";
    case "stopped":
      return "stopped";
    case "error":
      return "error";
    default:
      return (r.exitCode ?? 0) === 0 && r.signal === undefined && !r.error ? "ok" : "failed";
  }
}

const OUTCOME_TEXT: Record<RunOutcome, string> = {
  ok: "exited 0",
  failed: "failed",
  stopped: "stopped",
  error: "error",
  running: "running",
};

/** `exited 0`, `exited 2`, `killed by signal 9`, `stopped`, `error`, `running`, `delivered`. */
export function runResult(r: EmitterRun): string {
  if (r.status === "completed" && r.exitCode === undefined) return "delivered";
  if (r.signal !== undefined && r.status !== "stopped") return `killed by signal ${r.signal}`;
  if (r.exitCode !== undefined && r.status !== "stopped" && r.status !== "error") return `exited ${r.exitCode}`;
  return OUTCOME_TEXT[runOutcome(r)];
}

/**
 * Start and end of a run in ms since the epoch. A run without an end is still going: it
 * ends now (its `durationMs` is as old as the last answer, and runs are asked for again
 * only when the emitter's counters move).
 */
function span(r: EmitterRun, now: number): [number, number] {
  const start = Date.parse(r.startedAt);
  const end = r.endedAt ? Date.parse(r.endedAt) : runOutcome(r) === "running" ? now : start + (r.durationMs ?? 0);
  return [start, Math.max(start, end)];
}

function runDuration(r: EmitterRun, now: number): number {
  if (r.durationMs !== undefined && r.endedAt) return r.durationMs;
  const [s, e] = span(r, now);
  return e - s;
}

/** `850 ms`, `3.2 s`, `4m 05s`. */
function ms(n: number): string {
  if (n < 1000) return `${Math.round(n)} ms`;
  if (n < 60_000) return `${(n / 1000).toFixed(1)} s`;
  return duration(n);
}

function linesText(r: EmitterRun): string {
  const l = r.lines;
  return `${l.lines} lines: ${l.kept} kept, ${l.dropped} dropped, ${l.surfaced} surfaced, ${l.injected} injected`;
}

/**
 * An emitter's runs on one time axis: a bar per run placed by its start and as wide as it
 * lasted, scaled to the window from the oldest run shown to now (or to the next run, when
 * one is scheduled); coloured by how the run ended. Hovering or focusing a bar shows its
 * details below; clicking one keeps them there. The details link to the run's trace and to
 * the emitter's stream.
 */
export function RunTimeline({ emitter, runs, now }: { emitter: EmitterInfo; runs: EmitterRun[]; now: number }) {
  const [picked, setPicked] = useState<number | null>(null);
  const [hovered, setHovered] = useState<number | null>(null);

  if (runs.length === 0) {
    return <p class="small muted run-none">No runs yet.</p>;
  }

  const spans = runs.map((r) => span(r, now));
  const next = emitter.nextRunAt ? Date.parse(emitter.nextRunAt) : NaN;
  const from = Math.min(...spans.map(([s]) => s));
  const to = Math.max(now, ...spans.map(([, e]) => e), Number.isNaN(next) ? 0 : next);
  const width = Math.max(1000, to - from);
  const pct = (t: number) => ((t - from) / width) * 100;

  const shown = runs.find((r) => r.run === hovered) ?? runs.find((r) => r.run === picked) ?? runs[0];

  return (
    <div class="run-timeline" data-testid="run-timeline">
      <div class="run-track" role="group" aria-label={`Runs of ${emitter.name}, oldest on the left`}>
        {runs.map((r, i) => {
          const [s, e] = spans[i];
          const outcome = runOutcome(r);
          const left = pct(s);
          return (
            <button
              key={r.run}
              type="button"
              class={`run-bar run-${outcome}${r === shown ? " selected" : ""}`}
              style={{ left: `${left}%`, width: `${Math.min(100 - left, pct(e) - left)}%` }}
              data-run={r.run}
              aria-pressed={r.run === picked}
              aria-label={`Run ${r.run}: ${runResult(r)}, started ${clock(r.startedAt)}, ${ms(runDuration(r, now))}`}
              title={`Run ${r.run} · ${runResult(r)} · ${ms(runDuration(r, now))}`}
              onClick={() => setPicked(r.run === picked ? null : r.run)}
              onMouseEnter={() => setHovered(r.run)}
              onMouseLeave={() => setHovered(null)}
              onFocus={() => setHovered(r.run)}
              onBlur={() => setHovered(null)}
            />
          );
        })}
        {!Number.isNaN(next) && next > now && <span class="run-next" style={{ left: `${pct(next)}%` }} title={`Next run at ${fullTime(emitter.nextRunAt!)}`} />}
      </div>
      <div class="run-axis small muted" aria-hidden="true">
        <span>{clock(new Date(from).toISOString())}</span>
        <span>{!Number.isNaN(next) && next > now ? `next run ${clock(emitter.nextRunAt!)}` : "now"}</span>
      </div>
      <RunDetails run={shown} emitter={emitter} now={now} />
      <ul class="run-legend small muted plain" aria-label="Colours">
        {(["ok", "failed", "stopped", "error", "running"] as const).map((o) => (
          <li key={o}>
            <span class={`run-swatch run-${o}`} aria-hidden="true" />
            {o === "failed" ? "exited non-zero" : OUTCOME_TEXT[o]}
          </li>
        ))}
      </ul>
    </div>
  );
}

function RunDetails({ run: r, emitter, now }: { run: EmitterRun; emitter: EmitterInfo; now: number }) {
  const outcome = runOutcome(r);
  return (
    <div class="run-details" data-testid="run-details" data-run={r.run}>
      <span class="strong">Run {r.run}</span>
      <span class={`pill run-pill run-${outcome}`}>{runResult(r)}</span>
      <span class="small">
        {r.trigger === "start" ? "at start" : r.trigger === "schedule" ? "scheduled" : r.trigger === "idle" ? "session idle" : "restart after a failure"}
      </span>
      <span class="small mono" title={fullTime(r.startedAt)}>
        {clockMs(r.startedAt)}
      </span>
      <span class="small" data-testid="run-duration">
        {ms(runDuration(r, now))}
      </span>
      <span class="small" data-testid="run-lines">
        {linesText(r)}
      </span>
      <span class="run-links small">
        <a href={`#/traces/${r.traceId}`} data-trace-id={r.traceId} title={`Open trace ${r.traceId}`}>
          trace
        </a>
        <a href={streamLink(emitter.sessionId, emitter.stream)} title={`The ${emitter.stream} stream on the Streams page`}>
          lines in {emitter.stream}
        </a>
      </span>
      {r.error && <span class="error small run-message">{r.error}</span>}
    </div>
  );
}

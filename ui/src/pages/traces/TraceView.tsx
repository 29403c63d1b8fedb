/** One trace: its waterfall of spans (tree order, bars on the trace's time range) and the
 * side panel of the span picked. */
import { Fragment } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import type { JsonValue } from "../../generated/serde_json/JsonValue";
import type { Span, SpanStatus, Trace, TraceSummary } from "../../generated";
import { useMethod } from "../../method";
import { RpcError } from "../../transport";
import { labelOf, type KnownSession } from "../../ledger";
import { clockMs, durationUs, fullTime, isoUs, plural } from "../../format";
import { IdText } from "../../components/IdText";
import { Breakable } from "../../components/Breakable";

export function SessionCell({ id, sessions }: { id?: string; sessions: KnownSession[] }) {
  if (!id) return <span class="muted">—</span>;
  const label = labelOf(id, sessions);
  return label ? (
    <span class="breakable" title={id}>
      <Breakable text={label} />
    </span>
  ) : (
    <IdText id={id} />
  );
}

export function StatusPill({ status, code }: { status: SpanStatus; code?: string }) {
  return status === "error" ? (
    <span class="pill danger" title={code}>
      error{code ? ` · ${code}` : ""}
    </span>
  ) : (
    <span class="pill ok">ok</span>
  );
}

interface Row {
  span: Span;
  depth: number;
}

/** The spans in tree order: each under its parent, siblings by start; orphans are roots. */
export function treeOrder(spans: Span[]): Row[] {
  const ids = new Set(spans.map((s) => s.spanId));
  const children = new Map<string, Span[]>();
  const roots: Span[] = [];
  for (const s of spans) {
    if (s.parentSpanId && ids.has(s.parentSpanId) && s.parentSpanId !== s.spanId) {
      const list = children.get(s.parentSpanId) ?? [];
      list.push(s);
      children.set(s.parentSpanId, list);
    } else {
      roots.push(s);
    }
  }
  const byStart = (a: Span, b: Span) => a.startUs - b.startUs;
  const out: Row[] = [];
  const seen = new Set<string>();
  const walk = (s: Span, depth: number) => {
    if (seen.has(s.spanId)) return;
    seen.add(s.spanId);
    out.push({ span: s, depth });
    for (const c of (children.get(s.spanId) ?? []).sort(byStart)) walk(c, depth + 1);
  };
  for (const r of roots.sort(byStart)) walk(r, 0);
  // A cycle of parents leaves spans unvisited: show them as roots rather than lose them.
  for (const s of spans) if (!seen.has(s.spanId)) walk(s, 0);
  return out;
}

/** One trace: the waterfall of its spans and the selected span's details. */
export function TraceView({ traceId, summary, sessions, live }: { traceId: string; summary?: TraceSummary; sessions: KnownSession[]; live: boolean }) {
  const [spanId, setSpanId] = useState<string | null>(null);
  // Asked again when the list says the trace gained spans (the list follows
  // `traces.changed`), or on Refresh.
  const got = useMethod("traces.get", { traceId }, { watch: [summary?.spans] });
  const trace: Trace | null = got.data;
  const error = got.error
    ? got.error instanceof RpcError && got.error.code === "NOT_FOUND"
      ? `Trace ${traceId} is not in the history (it may be older than the history keeps).`
      : got.error.message
    : null;

  useEffect(() => setSpanId(null), [traceId]);

  const rows = useMemo(() => (trace ? treeOrder(trace.spans) : []), [trace]);
  const start = rows.length ? Math.min(...rows.map((r) => r.span.startUs)) : 0;
  const end = rows.length ? Math.max(...rows.map((r) => r.span.startUs + r.span.durationUs)) : 0;
  const total = Math.max(1, end - start);
  const picked = rows.find((r) => r.span.spanId === spanId)?.span;
  const root = rows[0]?.span;
  const session = summary?.sessionId ?? root?.attributes["session.id"];

  return (
    <section class="trace" aria-labelledby="trace-heading" data-testid="trace-view">
      <div class="section-head">
        <h2 id="trace-heading">
          {root ? <Breakable text={root.name} /> : "Trace"} <IdText id={traceId} class="muted" />
        </h2>
        <span class="trace-actions">
          <button type="button" class="btn" onClick={() => got.refresh()} disabled={!live}>
            Refresh
          </button>
          <a class="btn" href="#/traces">
            Close
          </a>
        </span>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {!trace && !error && <p class="muted">Loading…</p>}
      {trace && (
        <>
          <p class="small muted" data-testid="trace-facts">
            Started {fullTime(isoUs(start))} · {durationUs(end - start)} · {plural(rows.length, "span")}
            {typeof session === "string" && (
              <>
                {" "}
                · session <SessionCell id={session} sessions={sessions} />
              </>
            )}
          </p>
          <div class={`trace-body${picked ? " with-detail" : ""}`}>
            <div class="waterfall" role="group" aria-label="Spans, in tree order">
              <div class="wf-row wf-axis" aria-hidden="true">
                <span>Span</span>
                <span class="wf-ticks">
                  {[0, 0.25, 0.5, 0.75, 1].map((f) => (
                    <span key={f} style={{ left: `${f * 100}%` }}>
                      {durationUs(total * f)}
                    </span>
                  ))}
                </span>
              </div>
              <ol class="plain">
                {rows.map(({ span, depth }) => {
                  const offset = span.startUs - start;
                  const left = (offset / total) * 100;
                  const width = Math.max((span.durationUs / total) * 100, 0.4);
                  const tip = `${span.name}: starts at +${durationUs(offset)}, lasts ${durationUs(span.durationUs)}${span.status === "error" ? ` · error ${span.errorCode ?? ""}` : ""}`;
                  return (
                    <li
                      key={span.spanId}
                      class={`wf-row${span.status === "error" ? " error" : ""}${span.spanId === spanId ? " selected" : ""}`}
                      data-span-id={span.spanId}
                      data-depth={depth}
                      title={tip}
                    >
                      <button
                        type="button"
                        class="wf-name"
                        style={{ paddingLeft: `${6 + depth * 16}px` }}
                        aria-pressed={span.spanId === spanId}
                        aria-label={`${span.name}, +${durationUs(offset)}, ${durationUs(span.durationUs)}${span.status === "error" ? ", error" : ""}`}
                        onClick={() => setSpanId(span.spanId === spanId ? null : span.spanId)}
                      >
                        {depth > 0 && <span class="wf-indent" aria-hidden="true" />}
                        <span class="ellipsis">{span.name}</span>
                      </button>
                      <span class="wf-track">
                        <span class="wf-bar" style={{ left: `${Math.min(left, 99.6)}%`, width: `${Math.min(width, 100 - Math.min(left, 99.6))}%` }} />
                        {span.events.map((ev, i) => (
                          <span
                            key={i}
                            class="wf-event"
                            style={{ left: `${Math.min(((ev.atUs - start) / total) * 100, 100)}%` }}
                            aria-hidden="true"
                          />
                        ))}
                      </span>
                      <span class="wf-dur mono small">{durationUs(span.durationUs)}</span>
                    </li>
                  );
                })}
              </ol>
            </div>
            {picked && <SpanDetail span={picked} traceStart={start} onClose={() => setSpanId(null)} />}
          </div>
          {!picked && <p class="small muted">Select a span for its attributes and events.</p>}
        </>
      )}
    </section>
  );
}

function value(v: JsonValue | undefined): string {
  return typeof v === "string" ? v : JSON.stringify(v);
}

function SpanDetail({ span, traceStart, onClose }: { span: Span; traceStart: number; onClose: () => void }) {
  const attrs = Object.entries(span.attributes);
  return (
    <aside class="span-detail" aria-label={`Span ${span.name}`} data-testid="span-detail">
      <div class="section-head">
        <h3 class="breakable">
          <Breakable text={span.name} />
        </h3>
        <button type="button" class="btn" onClick={onClose}>
          Close
        </button>
      </div>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <StatusPill status={span.status} code={span.errorCode} />
        </dd>
        {span.errorCode && (
          <>
            <dt>Error code</dt>
            <dd class="mono">{span.errorCode}</dd>
          </>
        )}
        {span.message && (
          <>
            <dt>Message</dt>
            <dd>{span.message}</dd>
          </>
        )}
        <dt>Start</dt>
        <dd>
          +{durationUs(span.startUs - traceStart)} <span class="muted small">({clockMs(isoUs(span.startUs))})</span>
        </dd>
        <dt>Duration</dt>
        <dd>{durationUs(span.durationUs)}</dd>
        <dt>Span id</dt>
        <dd class="mono small">{span.spanId}</dd>
        {span.parentSpanId && (
          <>
            <dt>Parent</dt>
            <dd class="mono small">
              {span.parentSpanId}
              {span.remoteParent && <span class="pill muted">remote</span>}
            </dd>
          </>
        )}
      </dl>
      <h4>Attributes ({attrs.length})</h4>
      {attrs.length === 0 ? (
        <p class="small muted">None.</p>
      ) : (
        <dl class="facts attrs" data-testid="span-attributes">
          {attrs.map(([k, v]) => (
            <Fragment key={k}>
              <dt class="mono">{k}</dt>
              <dd class="mono small">{value(v)}</dd>
            </Fragment>
          ))}
        </dl>
      )}
      <h4>Events ({span.events.length})</h4>
      {span.events.length === 0 ? (
        <p class="small muted">None.</p>
      ) : (
        <ol class="plain span-events">
          {span.events.map((ev, i) => (
            <li key={i}>
              <span class="mono small">+{durationUs(ev.atUs - span.startUs)}</span> <strong>{ev.name}</strong>
              {Object.keys(ev.attributes).length > 0 && (
                <dl class="facts attrs">
                  {Object.entries(ev.attributes).map(([k, v]) => (
                    <Fragment key={k}>
                      <dt class="mono">{k}</dt>
                      <dd class="mono small">{value(v)}</dd>
                    </Fragment>
                  ))}
                </dl>
              )}
            </li>
          ))}
        </ol>
      )}
    </aside>
  );
}

import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { SpanStatus, TraceSummary, TracesListParams } from "../generated";
import { store, type PanelState } from "../store";
import { useMethod } from "../method";
import { knownName, knownSessions, reportLedger, useLedgerSessions, type KnownSession } from "../ledger";
import { clockMs, durationUs, fullTime, isoUs, plural } from "../format";
import { SessionCell, StatusPill, TraceView } from "./traces/TraceView";
import { Breakable } from "../components/Breakable";

/** Traces a page holds (the list's first page and each "Load older"). */
const PAGE = 100;
/** Text filters wait this long after the last keystroke. */
const DEBOUNCE_MS = 300;

const RANGES = [
  { id: "any", label: "Any time", ms: 0 },
  { id: "15m", label: "Last 15 minutes", ms: 15 * 60_000 },
  { id: "1h", label: "Last hour", ms: 3_600_000 },
  { id: "24h", label: "Last 24 hours", ms: 86_400_000 },
  { id: "7d", label: "Last 7 days", ms: 7 * 86_400_000 },
] as const;

/** What a trace's root span can be (docs/history-and-traces.md), for the Kind filter. */
const KINDS = ["tool.call", "tool.precheck", "push", "prompt.apply", "pairing.request", "session.start", "session.end"] as const;

interface Filters {
  kind: "all" | (typeof KINDS)[number];
  session: string;
  provider: string;
  tool: string;
  /** A client's name as the activity's client rows carry it (`session.client`). */
  client: string;
  status: "all" | SpanStatus;
  minMs: string;
  range: (typeof RANGES)[number]["id"];
}

const NO_FILTERS: Filters = { kind: "all", session: "all", provider: "all", tool: "", client: "", status: "all", minMs: "", range: "any" };

/**
 * Filters given in the address (`#/traces?provider=good&status=error&range=1h`), as the
 * Overview's activity rows link here; anything unknown is left at "all".
 */
function fromQuery(q: URLSearchParams | undefined): Filters {
  const f: Filters = { ...NO_FILTERS };
  if (!q) return f;
  const kind = q.get("kind");
  if (kind && (KINDS as readonly string[]).includes(kind)) f.kind = kind as Filters["kind"];
  const status = q.get("status");
  if (status === "ok" || status === "error") f.status = status;
  const range = q.get("range");
  if (range && RANGES.some((r) => r.id === range)) f.range = range as Filters["range"];
  f.session = q.get("session") || f.session;
  f.provider = q.get("provider") || f.provider;
  f.tool = q.get("tool") ?? f.tool;
  f.client = q.get("client") ?? f.client;
  f.minMs = q.get("minMs") ?? f.minMs;
  return f;
}

function params(f: Filters): TracesListParams {
  const p: TracesListParams = { limit: PAGE };
  if (f.kind !== "all") p.name = f.kind;
  if (f.session !== "all") p.sessionId = f.session;
  if (f.provider !== "all") p.provider = f.provider;
  if (f.tool.trim()) p.tool = f.tool.trim();
  if (f.client.trim()) p.client = f.client.trim();
  if (f.status !== "all") p.status = f.status;
  const min = Number(f.minMs);
  if (f.minMs.trim() && Number.isFinite(min) && min > 0) p.minDurationUs = Math.round(min * 1000);
  const range = RANGES.find((r) => r.id === f.range)!;
  if (range.ms > 0) p.sinceUs = (Date.now() - range.ms) * 1000;
  return p;
}

/** `a` with `newer` (newest first) merged in by trace id; the same array when nothing changed. */
function merge(list: TraceSummary[], newer: TraceSummary[]): TraceSummary[] {
  const byId = new Map(list.map((t, i) => [t.traceId, i]));
  let changed = false;
  const updated = [...list];
  const added: TraceSummary[] = [];
  for (const t of newer) {
    const i = byId.get(t.traceId);
    if (i === undefined) {
      added.push(t);
      changed = true;
    } else if (JSON.stringify(updated[i]) !== JSON.stringify(t)) {
      updated[i] = t;
      changed = true;
    }
  }
  if (!changed) return list;
  return [...added, ...updated].sort((a, b) => b.startUs - a.startUs);
}

/**
 * The ledger's traces (`traces.list`), newest first, filtered, paged back with "Load older"
 * and kept current by `traces.changed` events; `#/traces/<id>` opens one as a
 * waterfall of its spans, a span's attributes and events in the side panel.
 */
export function Traces({ state, traceId, given }: { state: PanelState; traceId?: string; given?: URLSearchParams }) {
  const live = state.phase.kind === "live";
  const { records } = useLedgerSessions();
  const sessions = useMemo(() => knownSessions(state.status!.sessions, records?.sessions ?? [], []), [state.status, records]);
  const [filters, setFilters] = useState<Filters>(() => fromQuery(given));
  const [applied, setApplied] = useState<Filters>(() => fromQuery(given));
  // New filters in the address (a link followed while the page is open) replace the shown
  // ones; a trace opened from the list (`#/traces/<id>`, no filters) keeps them.
  const givenKey = given?.toString() ?? "";
  const lastGiven = useRef(givenKey);
  useEffect(() => {
    if (givenKey === lastGiven.current) return;
    lastGiven.current = givenKey;
    if (givenKey) setFilters(fromQuery(given));
  }, [givenKey]);
  const [traces, setTraces] = useState<TraceSummary[]>([]);
  const [older, setOlder] = useState<number | undefined>(undefined);
  const [olderLoading, setOlderLoading] = useState(false);
  const [olderError, setOlderError] = useState<string | null>(null);
  const listRef = useRef(traces);
  listRef.current = traces;

  // Text and number filters apply after a pause in typing; the lists at once.
  useEffect(() => {
    const wait = filters.tool !== applied.tool || filters.client !== applied.client || filters.minMs !== applied.minMs;
    const t = setTimeout(() => setApplied(filters), wait ? DEBOUNCE_MS : 0);
    return () => clearTimeout(t);
  }, [filters]);

  // The newest page for the applied filters, asked again on `traces.changed` (followed while
  // the page is open: the gateway sends it at most four a second, once the spans are
  // committed). No polling.
  const query = useMemo(() => params(applied), [applied]);
  const newest = useMethod("traces.list", query, { follow: "traces", on: ["traces.changed"] });
  /** Which connection and filters `traces` belongs to. */
  const shownFor = useRef<string | null>(null);
  useEffect(() => {
    const page = newest.data;
    if (!page) return;
    reportLedger(page.ledger);
    const owner = `${state.generation}:${JSON.stringify(query)}`;
    const first = listRef.current[0]?.startUs;
    // New filters, a new connection, or more than a page newer than what is shown: start
    // over from this page; otherwise merge it in (new traces, and traces that gained spans).
    if (shownFor.current !== owner || (page.nextBeforeUs !== undefined && first !== undefined && page.traces.every((t) => t.startUs > first))) {
      shownFor.current = owner;
      setTraces(page.traces);
      setOlder(page.nextBeforeUs);
    } else {
      setTraces((list) => merge(list, page.traces));
    }
  }, [newest.data]);
  const loaded = shownFor.current !== null && newest.data !== null;
  const error = olderError ?? newest.error?.message ?? null;
  const loading = olderLoading || newest.loading;

  const loadOlder = async () => {
    if (older === undefined) return;
    setOlderLoading(true);
    setOlderError(null);
    try {
      const r = await store.call("traces.list", { ...params(applied), beforeUs: older });
      reportLedger(r.ledger);
      setTraces((list) => merge(list, r.traces));
      setOlder(r.nextBeforeUs);
    } catch (e) {
      setOlderError(e instanceof Error ? e.message : String(e));
    } finally {
      setOlderLoading(false);
    }
  };

  const providers = useMemo(() => {
    const names = new Set<string>();
    for (const p of state.status!.providers) if (p.name) names.add(p.name);
    for (const p of records?.providers ?? []) names.add(p.name);
    for (const t of traces) if (t.provider) names.add(t.provider);
    return [...names].sort();
  }, [state.status, records, traces]);

  const set = (patch: Partial<Filters>) => setFilters((f) => ({ ...f, ...patch }));
  const selected = traces.find((t) => t.traceId === traceId);
  const filtered = JSON.stringify(applied) !== JSON.stringify(NO_FILTERS);

  return (
    <div class="traces">
      {traceId && <TraceView traceId={traceId} summary={selected} sessions={sessions} live={live} />}
      <div class="toolbar" role="search" aria-label="Filter traces">
        <label class="field">
          <span>Session</span>
          <select value={filters.session} onChange={(e) => set({ session: (e.currentTarget as HTMLSelectElement).value })}>
            <option value="all">All sessions</option>
            {filters.session !== "all" && !sessions.some((s) => s.id === filters.session) && <option value={filters.session}>{filters.session}</option>}
            {sessions.map((s) => (
              <option key={s.id} value={s.id}>
                {knownName(s)}
              </option>
            ))}
          </select>
        </label>
        <label class="field">
          <span>Provider</span>
          <select value={filters.provider} onChange={(e) => set({ provider: (e.currentTarget as HTMLSelectElement).value })}>
            <option value="all">All providers</option>
            {filters.provider !== "all" && !providers.includes(filters.provider) && <option value={filters.provider}>{filters.provider}</option>}
            {providers.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
        <label class="field">
          <span>Tool</span>
          <input type="search" value={filters.tool} placeholder="tool name" onInput={(e) => set({ tool: (e.currentTarget as HTMLInputElement).value })} />
        </label>
        <label class="field">
          <span>Client</span>
          <input type="search" value={filters.client} placeholder="client name" onInput={(e) => set({ client: (e.currentTarget as HTMLInputElement).value })} />
        </label>
        <label class="field">
          <span>Kind</span>
          <select value={filters.kind} onChange={(e) => set({ kind: (e.currentTarget as HTMLSelectElement).value as Filters["kind"] })}>
            <option value="all">Any kind</option>
            {KINDS.map((k) => (
              <option key={k} value={k}>
                {k}
              </option>
            ))}
          </select>
        </label>
        <label class="field">
          <span>Status</span>
          <select value={filters.status} onChange={(e) => set({ status: (e.currentTarget as HTMLSelectElement).value as Filters["status"] })}>
            <option value="all">Any status</option>
            <option value="ok">ok</option>
            <option value="error">error</option>
          </select>
        </label>
        <label class="field">
          <span>Min duration (ms)</span>
          <input
            type="number"
            class="narrow"
            min={0}
            step="any"
            value={filters.minMs}
            aria-invalid={filters.minMs !== "" && !(Number(filters.minMs) >= 0)}
            onInput={(e) => set({ minMs: (e.currentTarget as HTMLInputElement).value })}
          />
        </label>
        <label class="field">
          <span>Time</span>
          <select value={filters.range} onChange={(e) => set({ range: (e.currentTarget as HTMLSelectElement).value as Filters["range"] })}>
            {RANGES.map((r) => (
              <option key={r.id} value={r.id}>
                {r.label}
              </option>
            ))}
          </select>
        </label>
        {filtered && (
          <button type="button" class="btn" onClick={() => setFilters(NO_FILTERS)}>
            Clear filters
          </button>
        )}
      </div>
      <div class="tail-status">
        <p class="small muted" role="status" data-testid="traces-count">
          {loaded ? `${plural(traces.length, "trace")}${older !== undefined ? " (older ones below)" : ""} · newest first, updated as they are recorded` : loading ? "Loading…" : ""}
        </p>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {loaded && traces.length === 0 && (
        <p class="empty">
          {filtered
            ? "No trace matches these filters."
            : "No traces yet. A push delivered to a session (surface or inject) and a tool call each leave one."}
        </p>
      )}
      {traces.length > 0 && (
        <div class="table-wrap">
          <table aria-label="Traces, newest first" data-testid="traces-list">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Name</th>
                <th scope="col">Session</th>
                <th scope="col">Provider · tool</th>
                <th scope="col" class="num">
                  Duration
                </th>
                <th scope="col">Status</th>
                <th scope="col" class="num">
                  Spans
                </th>
              </tr>
            </thead>
            <tbody>
              {traces.map((t) => (
                <TraceRow key={t.traceId} t={t} sessions={sessions} selected={t.traceId === traceId} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {older !== undefined && (
        <button type="button" class="btn" onClick={() => void loadOlder()} disabled={loading || !live}>
          {loading ? "Loading…" : "Load older"}
        </button>
      )}
    </div>
  );
}

function TraceRow({ t, sessions, selected }: { t: TraceSummary; sessions: KnownSession[]; selected: boolean }) {
  const at = isoUs(t.startUs);
  return (
    <tr data-trace-id={t.traceId} class={selected ? "selected" : undefined} aria-current={selected ? "true" : undefined}>
      <td class="mono small nowrap" title={fullTime(at)}>
        {clockMs(at)}
      </td>
      <td class="breakable">
        <a href={`#/traces/${t.traceId}`} aria-label={`${t.name} trace ${t.traceId}`}>
          <Breakable text={t.name} />
        </a>
      </td>
      <td>
        <SessionCell id={t.sessionId} sessions={sessions} />
      </td>
      <td class="small breakable">
        {t.provider ? <Breakable text={t.provider} /> : <span class="muted">—</span>}
        {t.tool && (
          <div class="mono">
            <Breakable text={t.tool} />
          </div>
        )}
      </td>
      <td class="num nowrap">{durationUs(t.durationUs)}</td>
      <td>
        <StatusPill status={t.status} code={t.errorCode} />
      </td>
      <td class="num">{t.spans}</td>
    </tr>
  );
}


import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { EventOutcome, EventsListParams, LedgerEvent, StreamEntry } from "../generated";
import { store, useControlEvents, type PanelState } from "../store";
import { VirtualList } from "../components/VirtualList";
import { useLiveList } from "../live";
import { knownName, knownSessions, reportLedger, useLedgerSessions } from "../ledger";
import { clockMs, fullTime, plural, shortJson } from "../format";

/** One stream event: from the ledger (`events.list`, with its id and trace) or live. */
interface Row {
  /** The ledger's id (absent for a live row not yet matched with the ledger). */
  id?: number;
  stream: string;
  provider: string;
  ts: string;
  time: number;
  event: string;
  outcome?: EventOutcome;
  metadata?: StreamEntry["metadata"];
  traceId?: string;
  /** Time, stream and text: the same event from the ledger and from the live tail. */
  key: string;
  /** Lower-cased text and metadata, for matching live rows against the search. */
  haystack: string;
}

interface Filter {
  /** `all`, a stream name (any provider's) or `stream@provider`. */
  stream: string;
  search: string;
  outcome: "all" | EventOutcome;
  provider: string;
}

interface Loaded {
  sessionId: string;
  live: boolean;
}

const OUTCOMES: EventOutcome[] = ["keep", "surface", "inject", "drop"];
const ROW_HEIGHT = 34;
/** Events a page of history holds (the first and each "Load older"). */
const PAGE = 500;
/** The page keeps at most this many events (history pages and the live tail). */
const MAX_ROWS = 20000;
/** The search box asks the gateway after a pause in typing. */
const DEBOUNCE_MS = 300;
/** Live rows are matched with the ledger (for their trace links) after this pause. */
const MATCH_MS = 800;

function row(stream: string, provider: string, ts: string, text: string, outcome?: EventOutcome, metadata?: StreamEntry["metadata"]): Row {
  const meta = metadata ? JSON.stringify(metadata) : "";
  return {
    stream,
    provider,
    ts,
    time: Date.parse(ts),
    event: text,
    outcome,
    metadata,
    key: `${ts}\n${stream}@${provider}\n${text}`,
    haystack: `${text}\n${meta}`.toLowerCase(),
  };
}

function fromEntry(key: string, e: StreamEntry): Row {
  // Stream names never contain '@' (the gateway refuses them), so the first one splits.
  const at = key.indexOf("@");
  return row(at < 0 ? key : key.slice(0, at), at < 0 ? "" : key.slice(at + 1), e.ts, e.event, e.level, e.metadata);
}

function fromLedger(e: LedgerEvent): Row {
  const r = row(e.stream, e.provider, e.ts, e.text, e.outcome, e.metadata);
  r.id = e.id;
  r.traceId = e.traceId;
  return r;
}

function flatten(streams: Record<string, StreamEntry[] | undefined>): Row[] {
  const rows: Row[] = [];
  for (const [key, entries] of Object.entries(streams)) {
    for (const e of entries ?? []) rows.push(fromEntry(key, e));
  }
  return rows;
}

/** Whether a live row belongs in the list the gateway answered for `f` (search: every word). */
function matches(r: Row, f: Filter): boolean {
  if (f.stream !== "all" && r.stream !== f.stream && `${r.stream}@${r.provider}` !== f.stream) return false;
  if (f.outcome !== "all" && r.outcome !== f.outcome) return false;
  if (f.provider !== "all" && r.provider !== f.provider) return false;
  return f.search
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .every((w) => r.haystack.includes(w.replace(/"/g, "")));
}

/** Counts keys, so that each ledger event cancels exactly one copy of it from the live tail. */
class Keys {
  private counts = new Map<string, number>();
  constructor(rows: Row[]) {
    for (const r of rows) this.counts.set(r.key, (this.counts.get(r.key) ?? 0) + 1);
  }
  /** true (and one fewer) when `key` is still there. */
  take(key: string): boolean {
    const n = this.counts.get(key);
    if (!n) return false;
    if (n === 1) this.counts.delete(key);
    else this.counts.set(key, n - 1);
    return true;
  }
}

function listParams(sessionId: string, f: Filter, before?: number): EventsListParams {
  const p: EventsListParams = { sessionId, limit: PAGE };
  if (f.stream !== "all") p.stream = f.stream;
  if (f.search.trim()) p.search = f.search.trim();
  if (f.outcome !== "all") p.outcome = f.outcome;
  if (f.provider !== "all") p.provider = f.provider;
  if (before !== undefined) p.before = before;
  return p;
}

/**
 * Any session's stream events, live or ended, from the gateway's ledger (`events.list`):
 * the newest page, then older pages on demand, searched and filtered by the gateway; for a
 * live session the live tail (`streams.follow`) continues on top, without duplicates, and
 * can be paused. An event a push delivered links to its trace. `#/streams/<session>?stream=<name>`
 * shows one stream (the Emitters page links there).
 */
export function Streams({ state, sessionId, stream: streamParam }: { state: PanelState; sessionId?: string; stream?: string }) {
  const liveSessions = state.status!.sessions;
  const { records, seen } = useLedgerSessions(true);
  const sessions = useMemo(() => knownSessions(liveSessions, records?.sessions ?? [], seen), [liveSessions, records, seen]);
  const fallback = liveSessions.find((s) => s.foreground)?.id ?? liveSessions[0]?.id ?? sessions[0]?.id;
  const selected = sessionId ?? fallback;
  const sessionLive = !!selected && liveSessions.some((s) => s.id === selected);
  const live = state.phase.kind === "live";

  const list = useLiveList<Row>(MAX_ROWS);
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [older, setOlder] = useState<number | undefined>(undefined);
  const [loading, setLoading] = useState(false);
  const [loadingOlder, setLoadingOlder] = useState(false);
  const [reload, setReload] = useState(0);
  const [missed, setMissed] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const [query, setQuery] = useState("");
  const [search, setSearch] = useState("");
  const [outcome, setOutcome] = useState<Filter["outcome"]>("all");
  const [provider, setProvider] = useState("all");
  const stream = streamParam || "all";
  const filter = useMemo<Filter>(() => ({ stream, search, outcome, provider }), [stream, search, outcome, provider]);

  /** The session whose `stream.entry` events belong in the list. */
  const followed = useRef<string | null>(null);
  /** Live rows that arrived while the history was on its way. */
  const pending = useRef<Row[] | null>(null);
  /** The first page's events not yet seen live (a live copy of one of them is dropped). */
  const inPage = useRef<Keys>(new Keys([]));
  const matchTimer = useRef<ReturnType<typeof setTimeout> | null>(null);

  useEffect(() => {
    const t = setTimeout(() => setSearch(query), query.trim() === "" ? 0 : DEBOUNCE_MS);
    return () => clearTimeout(t);
  }, [query]);

  // The selected session's newest page from the ledger; for a live session, follow it
  // first (its live rows wait in `pending` until the page is in). Again after a reconnect
  // (`generation`), a filter change or Refresh; the next follow replaces this one.
  useEffect(() => {
    if (!live || !selected) return;
    let current = true;
    followed.current = sessionLive ? selected : null;
    pending.current = [];
    setLoading(true);
    setError(null);
    const history = sessionLive ? store.call("streams.follow", { sessionId: selected }) : Promise.resolve(null);
    Promise.all([history, store.call("events.list", listParams(selected, filter))])
      .then(([followedHistory, page]) => {
        if (!current) return;
        reportLedger(page.ledger);
        const rows = page.events.map(fromLedger);
        const keys = new Keys(rows);
        const oldest = rows.length ? rows[rows.length - 1].time : -Infinity;
        const complete = page.nextBefore === undefined;
        // What the gateway holds in memory and has not written yet, and what came live
        // meanwhile: only what the page does not have, and nothing as old as the page's oldest (older pages bring those).
        const extra: Row[] = [];
        for (const r of [...(followedHistory ? flatten(followedHistory.streams) : []), ...(pending.current ?? [])]) {
          if (!matches(r, filter) || keys.take(r.key) || (!complete && r.time <= oldest)) continue;
          extra.push(r);
        }
        pending.current = null;
        inPage.current = keys;
        list.reset(extra.length ? [...extra, ...rows].sort((a, b) => b.time - a.time) : rows);
        setOlder(page.nextBefore);
        setMissed(0);
        setLoaded({ sessionId: selected, live: sessionLive });
        if (extra.some((r) => r.id === undefined)) scheduleMatch();
      })
      .catch((e) => {
        if (!current) return;
        pending.current = null;
        list.reset([]);
        setLoaded(null);
        setError(e instanceof Error ? e.message : String(e));
      })
      .finally(() => current && setLoading(false));
    return () => {
      current = false;
      followed.current = null;
      pending.current = null;
      if (sessionLive) store.call("unfollow", { topic: "streams" }).catch(() => {});
    };
  }, [selected, sessionLive, live, state.generation, reload, filter]);

  useEffect(() => () => void (matchTimer.current && clearTimeout(matchTimer.current)), []);

  /** Gives live rows their ledger ids and trace links, once the ledger has them. */
  const scheduleMatch = (attempt = 0) => {
    if (matchTimer.current) return;
    matchTimer.current = setTimeout(() => {
      matchTimer.current = null;
      const session = followed.current;
      const unmatched = list.items.slice(0, 2000).filter((r) => r.id === undefined);
      if (!session || unmatched.length === 0) return;
      const since = Math.min(...unmatched.map((r) => r.time)) * 1000;
      store
        .call("events.list", { sessionId: session, sinceUs: since, limit: 1000 })
        .then((page) => {
          const byKey = new Map<string, LedgerEvent[]>();
          for (const e of page.events) {
            const key = `${e.ts}\n${e.stream}@${e.provider}\n${e.text}`;
            byKey.set(key, [...(byKey.get(key) ?? []), e]);
          }
          let changed = false;
          for (const r of unmatched) {
            const e = byKey.get(r.key)?.shift();
            if (!e) continue;
            r.id = e.id;
            r.traceId = e.traceId;
            changed = true;
          }
          if (changed) list.touch();
          // The ledger writes in batches: what it did not have yet, ask again (a few times).
          if (unmatched.some((r) => r.id === undefined) && attempt < 3) scheduleMatch(attempt + 1);
        })
        .catch(() => {});
    }, MATCH_MS);
  };

  useControlEvents((event) => {
    if (event.kind === "stream.entry" && event.sessionId === followed.current) {
      const r = fromEntry(event.stream, event.entry);
      if (pending.current) {
        pending.current.push(r);
      } else if (matches(r, filter) && !inPage.current.take(r.key)) {
        list.push(r);
        if (r.outcome === "surface" || r.outcome === "inject") scheduleMatch();
      }
    } else if (event.kind === "follow.lagged" && event.topic === "streams") {
      setMissed((m) => m + event.missed);
    }
  });

  const loadOlder = async () => {
    if (!selected || older === undefined) return;
    setLoadingOlder(true);
    try {
      const page = await store.call("events.list", listParams(selected, filter, older));
      reportLedger(page.ledger);
      // Rows the first page took from memory may be in this page too.
      const have = new Set(list.items.map((r) => r.key));
      list.append(page.events.map(fromLedger).filter((r) => !have.has(r.key)));
      setOlder(page.nextBefore);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setLoadingOlder(false);
    }
  };

  const current = loaded?.sessionId === selected;
  const rows = current ? list.items : [];
  const providers = useMemo(() => {
    const names = new Set(rows.map((r) => r.provider));
    for (const p of state.status!.providers) if (p.name && p.session === selected) names.add(p.name);
    for (const p of records?.providers ?? []) if (p.sessionId === selected) names.add(p.name);
    names.delete("");
    return [...names].sort();
  }, [rows, state.status, records, selected]);

  const streams = useMemo(() => {
    const names = new Set(rows.map((r) => r.stream));
    if (stream !== "all") names.add(stream);
    return [...names].sort();
  }, [rows, stream]);

  if (!selected) {
    return <p class="empty">No session has been registered, so there are no streams to show.</p>;
  }

  const filtered = stream !== "all" || search.trim() !== "" || outcome !== "all" || provider !== "all";
  const status = error
    ? ""
    : current && loaded
      ? `${plural(rows.length, "event")}${filtered ? " matching" : ""} · newest first${older !== undefined ? ", older ones below" : ""} · ${loaded.live ? "history, then live" : "the session has ended"}`
      : loading
        ? "Loading…"
        : "";

  return (
    <div class="streams">
      <div class="toolbar" role="search" aria-label="Filter stream events">
        <label class="field">
          <span>Session</span>
          <select
            value={selected}
            onChange={(e) => {
              location.hash = `#/streams/${encodeURIComponent((e.currentTarget as HTMLSelectElement).value)}`;
            }}
          >
            {!sessions.some((s) => s.id === selected) && <option value={selected}>{selected} · ended</option>}
            {sessions.map((s) => (
              <option key={s.id} value={s.id}>
                {knownName(s)}
              </option>
            ))}
          </select>
        </label>
        <label class="field">
          <span>Stream</span>
          <select
            value={stream}
            onChange={(e) => {
              const value = (e.currentTarget as HTMLSelectElement).value;
              location.hash = `#/streams/${encodeURIComponent(selected)}${value === "all" ? "" : `?stream=${encodeURIComponent(value)}`}`;
            }}
          >
            <option value="all">All streams</option>
            {streams.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label class="field grow">
          <span>Search</span>
          <input type="search" value={query} placeholder="words in the event text or metadata" onInput={(e) => setQuery((e.currentTarget as HTMLInputElement).value)} />
        </label>
        <label class="field">
          <span>Outcome</span>
          <select value={outcome} onChange={(e) => setOutcome((e.currentTarget as HTMLSelectElement).value as Filter["outcome"])}>
            <option value="all">All outcomes</option>
            {OUTCOMES.map((o) => (
              <option key={o} value={o}>
                {o}
              </option>
            ))}
          </select>
        </label>
        <label class="field">
          <span>Provider</span>
          <select value={provider} onChange={(e) => setProvider((e.currentTarget as HTMLSelectElement).value)}>
            <option value="all">All providers</option>
            {provider !== "all" && !providers.includes(provider) && <option value={provider}>{provider}</option>}
            {providers.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
        <button
          type="button"
          class={`btn${list.paused ? " attention" : ""}`}
          aria-pressed={list.paused}
          onClick={() => list.pause(!list.paused)}
          disabled={!loaded?.live}
        >
          {list.paused ? "Resume" : "Pause"}
        </button>
        <button type="button" class="btn" onClick={() => setReload((n) => n + 1)} disabled={loading || !live}>
          {loading ? "Loading…" : "Refresh"}
        </button>
      </div>
      <div class="tail-status">
        <p class="small muted" role="status" data-testid="streams-count">
          {status}
        </p>
        {current && loaded?.live && (
          <span class={`pill ${list.paused ? "attention" : live ? "ok" : "warn"}`} data-testid="streams-tail">
            {list.paused ? `paused · ${list.waiting} new waiting` : live ? "live" : "reconnecting"}
          </span>
        )}
        {current && loaded && !loaded.live && (
          <span class="pill muted" data-testid="streams-tail">
            ended
          </span>
        )}
        {missed > 0 && (
          <span class="pill warn" role="status">
            {missed} events skipped (the panel fell behind); Refresh reloads them
          </span>
        )}
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {current && loaded && rows.length === 0 && (
        <p class="empty">{filtered ? "No event matches these filters." : "No provider has pushed events to this session yet."}</p>
      )}
      {rows.length > 0 && (
        <>
          <div class="stream-head" aria-hidden="true">
            <span>Time</span>
            <span>Outcome</span>
            <span>Stream</span>
            <span>Event</span>
            <span>Metadata</span>
            <span>Trace</span>
          </div>
          <VirtualList
            items={rows}
            rowHeight={ROW_HEIGHT}
            label="Stream events, newest first"
            render={(r) => (
              <div class="stream-row">
                <span class="mono small" title={fullTime(r.ts)}>
                  {clockMs(r.ts)}
                </span>
                <span>{r.outcome ? <span class={`pill level-${r.outcome}`}>{r.outcome}</span> : <span class="muted">—</span>}</span>
                <span class="mono small ellipsis" title={`${r.stream}@${r.provider}`}>
                  {r.stream}
                  <span class="muted">@{r.provider}</span>
                </span>
                <span class="ellipsis" title={r.event}>
                  {r.event}
                </span>
                <span class="mono small muted ellipsis">{r.metadata ? shortJson(r.metadata, 120) : ""}</span>
                <span class="small">
                  {r.traceId && (
                    <a href={`#/traces/${r.traceId}`} title={`Open trace ${r.traceId}`} data-trace-id={r.traceId}>
                      trace
                    </a>
                  )}
                </span>
              </div>
            )}
          />
          {older !== undefined && (
            <div>
              <button type="button" class="btn" onClick={() => void loadOlder()} disabled={loadingOlder || !live}>
                {loadingOlder ? "Loading…" : "Load older"}
              </button>
            </div>
          )}
        </>
      )}
    </div>
  );
}

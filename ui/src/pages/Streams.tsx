import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { StreamEntry } from "../generated";
import { store, useControlEvents, type PanelState } from "../store";
import { VirtualList } from "../components/VirtualList";
import { useLiveList } from "../live";
import { clock, clockMs, fullTime, sessionName, shortJson } from "../format";

/** One stored event, flattened out of `streams.history`'s `stream@provider` map. */
interface Row {
  stream: string;
  provider: string;
  ts: string;
  time: number;
  event: string;
  level?: StreamEntry["level"];
  metadata?: StreamEntry["metadata"];
  /** Lower-cased text the search matches against. */
  haystack: string;
}

interface Loaded {
  sessionId: string;
  loadedAt: string;
}

const LEVELS = ["keep", "surface", "inject"] as const;
const ROW_HEIGHT = 34;
/** The gateway keeps 200 per stream; the live tail keeps at most this many in the page. */
const MAX_ROWS = 20000;

function toRow(key: string, e: StreamEntry): Row {
  // Stream names never contain '@' (the gateway refuses them), so the first one splits.
  const at = key.indexOf("@");
  const stream = at < 0 ? key : key.slice(0, at);
  const provider = at < 0 ? "" : key.slice(at + 1);
  const meta = e.metadata ? JSON.stringify(e.metadata) : "";
  return {
    stream,
    provider,
    ts: e.ts,
    time: Date.parse(e.ts),
    event: e.event,
    level: e.level,
    metadata: e.metadata,
    haystack: `${e.event}\n${stream}\n${provider}\n${meta}`.toLowerCase(),
  };
}

function flatten(streams: Record<string, StreamEntry[] | undefined>): Row[] {
  const rows: Row[] = [];
  for (const [key, entries] of Object.entries(streams)) {
    for (const e of entries ?? []) rows.push(toRow(key, e));
  }
  return rows.sort((a, b) => b.time - a.time);
}

/**
 * A session's streams: the stored history (`streams.follow` returns it), then every new
 * event as it is stored (a live tail that can be paused), with text search, level and
 * provider filters.
 */
export function Streams({ state, sessionId }: { state: PanelState; sessionId?: string }) {
  const sessions = state.status!.sessions;
  const fallback = sessions.find((s) => s.foreground)?.id ?? sessions[0]?.id;
  const selected = sessionId ?? fallback;
  const live = state.phase.kind === "live";

  const list = useLiveList<Row>(MAX_ROWS);
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [loading, setLoading] = useState(false);
  const [reload, setReload] = useState(0);
  const [missed, setMissed] = useState(0);
  const [error, setError] = useState<string | null>(null);
  /** The session whose `stream.entry` events belong in the list (set with its history). */
  const followed = useRef<string | null>(null);
  const [query, setQuery] = useState("");
  const [level, setLevel] = useState("all");
  const [provider, setProvider] = useState("all");

  // Follow the selected session: its history now, each new event after. Again after a
  // reconnect (`generation`) or Refresh; the next follow replaces this one.
  useEffect(() => {
    if (!live || !selected) return;
    let current = true;
    followed.current = null;
    setLoading(true);
    setError(null);
    store
      .call("streams.follow", { sessionId: selected })
      .then((history) => {
        if (!current) return;
        list.reset(flatten(history.streams));
        followed.current = history.sessionId;
        setMissed(0);
        setLoaded({ sessionId: history.sessionId, loadedAt: new Date().toISOString() });
      })
      .catch((e) => {
        if (!current) return;
        list.reset([]);
        setLoaded(null);
        setError(e instanceof Error ? e.message : String(e));
      })
      .finally(() => current && setLoading(false));
    return () => {
      current = false;
      followed.current = null;
      store.call("unfollow", { topic: "streams" }).catch(() => {});
    };
  }, [selected, live, state.generation, reload]);

  useControlEvents((event) => {
    if (event.kind === "stream.entry" && event.sessionId === followed.current) {
      list.push(toRow(event.stream, event.entry));
    } else if (event.kind === "follow.lagged" && event.topic === "streams") {
      setMissed((m) => m + event.missed);
    }
  });

  const rows = loaded?.sessionId === selected ? list.items : [];
  const providers = useMemo(() => [...new Set(rows.map((r) => r.provider))].sort(), [rows]);
  const visible = useMemo(() => {
    const q = query.trim().toLowerCase();
    return rows.filter(
      (r) => (level === "all" || r.level === level) && (provider === "all" || r.provider === provider) && (!q || r.haystack.includes(q)),
    );
  }, [rows, query, level, provider]);

  if (sessions.length === 0 && !sessionId) {
    return <p class="empty">No sessions are registered, so there are no streams to show.</p>;
  }

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
            {selected && !sessions.some((s) => s.id === selected) && <option value={selected}>{selected} (ended)</option>}
            {sessions.map((s) => (
              <option key={s.id} value={s.id}>
                {sessionName(s)}
              </option>
            ))}
          </select>
        </label>
        <label class="field grow">
          <span>Search</span>
          <input type="search" value={query} placeholder="event text, stream, provider, metadata" onInput={(e) => setQuery((e.currentTarget as HTMLInputElement).value)} />
        </label>
        <label class="field">
          <span>Level</span>
          <select value={level} onChange={(e) => setLevel((e.currentTarget as HTMLSelectElement).value)}>
            <option value="all">All levels</option>
            {LEVELS.map((l) => (
              <option key={l} value={l}>
                {l}
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
          disabled={!loaded}
        >
          {list.paused ? "Resume" : "Pause"}
        </button>
        <button type="button" class="btn" onClick={() => setReload((n) => n + 1)} disabled={loading || !live}>
          {loading ? "Loading…" : "Refresh"}
        </button>
      </div>
      <div class="tail-status">
        <p class="small muted" role="status" data-testid="streams-count">
          {error
            ? ""
            : loaded
              ? `${visible.length} of ${rows.length} events · history from ${clock(loaded.loadedAt)}, then live`
              : loading
                ? "Loading…"
                : ""}
        </p>
        {loaded && (
          <span class={`pill ${list.paused ? "attention" : live ? "ok" : "warn"}`} data-testid="streams-tail">
            {list.paused ? `paused · ${list.waiting} new waiting` : live ? "live" : "reconnecting"}
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
      {loaded && rows.length === 0 && <p class="empty">No provider has pushed events to this session yet.</p>}
      {rows.length > 0 && (
        <>
          <div class="stream-head" aria-hidden="true">
            <span>Time</span>
            <span>Level</span>
            <span>Stream</span>
            <span>Event</span>
            <span>Metadata</span>
          </div>
          <VirtualList
            items={visible}
            rowHeight={ROW_HEIGHT}
            label="Stream events, newest first"
            render={(r) => (
              <div class="stream-row">
                <span class="mono small" title={fullTime(r.ts)}>
                  {clockMs(r.ts)}
                </span>
                <span>{r.level ? <span class={`pill level-${r.level}`}>{r.level}</span> : <span class="muted">—</span>}</span>
                <span class="mono small ellipsis" title={`${r.stream}@${r.provider}`}>
                  {r.stream}
                  <span class="muted">@{r.provider}</span>
                </span>
                <span class="ellipsis" title={r.event}>
                  {r.event}
                </span>
                <span class="mono small muted ellipsis">{r.metadata ? shortJson(r.metadata, 120) : ""}</span>
              </div>
            )}
          />
        </>
      )}
    </div>
  );
}

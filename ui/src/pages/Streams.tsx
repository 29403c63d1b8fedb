import { useCallback, useEffect, useMemo, useState } from "preact/hooks";
import type { StreamEntry } from "../generated";
import { store, type PanelState } from "../store";
import { VirtualList } from "../components/VirtualList";
import { clock, clockMs, fullTime, shortJson } from "../format";

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
  rows: Row[];
  loadedAt: string;
}

const LEVELS = ["keep", "surface", "inject"] as const;
const ROW_HEIGHT = 34;

function flatten(streams: Record<string, StreamEntry[] | undefined>): Row[] {
  const rows: Row[] = [];
  for (const [key, entries] of Object.entries(streams)) {
    // Stream names never contain '@' (the gateway refuses them), so the first one splits.
    const at = key.indexOf("@");
    const stream = at < 0 ? key : key.slice(0, at);
    const provider = at < 0 ? "" : key.slice(at + 1);
    for (const e of entries ?? []) {
      const meta = e.metadata ? JSON.stringify(e.metadata) : "";
      rows.push({
        stream,
        provider,
        ts: e.ts,
        time: Date.parse(e.ts),
        event: e.event,
        level: e.level,
        metadata: e.metadata,
        haystack: `${e.event}\n${stream}\n${provider}\n${meta}`.toLowerCase(),
      });
    }
  }
  return rows.sort((a, b) => b.time - a.time);
}

/** A session's stream history with text search, level and provider filters. */
export function Streams({ state, sessionId }: { state: PanelState; sessionId?: string }) {
  const sessions = state.status!.sessions;
  const fallback = sessions.find((s) => s.foreground)?.id ?? sessions[0]?.id;
  const selected = sessionId ?? fallback;
  const live = state.phase.kind === "live";

  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [query, setQuery] = useState("");
  const [level, setLevel] = useState("all");
  const [provider, setProvider] = useState("all");

  const load = useCallback(async () => {
    if (!selected) return;
    setLoading(true);
    setError(null);
    try {
      const history = await store.call("streams.history", { sessionId: selected });
      setLoaded({ sessionId: history.sessionId, rows: flatten(history.streams), loadedAt: new Date().toISOString() });
    } catch (e) {
      setLoaded(null);
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setLoading(false);
    }
  }, [selected]);

  useEffect(() => {
    if (live) void load();
  }, [load, live]);

  const rows = loaded?.sessionId === selected ? loaded.rows : [];
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
                {s.label ? `${s.label} (${s.id})` : s.id}
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
        <button type="button" class="btn" onClick={() => void load()} disabled={loading || !live}>
          {loading ? "Loading…" : "Refresh"}
        </button>
      </div>
      <p class="small muted" role="status" data-testid="streams-count">
        {error
          ? ""
          : loaded
            ? `${visible.length} of ${rows.length} events · history as of ${clock(loaded.loadedAt)}`
            : loading
              ? "Loading…"
              : ""}
      </p>
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

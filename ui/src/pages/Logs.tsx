import { useEffect, useMemo, useState } from "preact/hooks";
import type { LogLevel, LogRecord } from "../generated";
import { store, useControlEvents, type PanelState } from "../store";
import { VirtualList } from "../components/VirtualList";
import { useLiveList } from "../live";
import { clockMs, fullTime } from "../format";

/** Most severe first, as the gateway orders them. */
const LEVELS: LogLevel[] = ["error", "warn", "info", "debug"];
const LEVEL_CHOICES: Record<LogLevel, string> = {
  error: "Errors only",
  warn: "Warnings and errors",
  info: "Info and above",
  debug: "Debug and above",
  trace: "Everything",
};
const ROW_HEIGHT = 30;
/** Records kept in the page (the gateway keeps its own ring, 2,000 by default). */
const MAX_RECORDS = 10000;

interface Row extends LogRecord {
  /** `name=value …`, shown after the message. */
  fieldText: string;
  haystack: string;
}

function toRow(r: LogRecord): Row {
  const fieldText = r.fields.map((f) => `${f.name}=${f.value}`).join(" ");
  return { ...r, fieldText, haystack: `${r.message}\n${r.target}\n${fieldText}`.toLowerCase() };
}

/** The gateway's live log: its recent records, then each new one; level filter, search, pause. */
export function Logs({ state }: { state: PanelState }) {
  const live = state.phase.kind === "live";
  const list = useLiveList<Row>(MAX_RECORDS);
  const [enabled, setEnabled] = useState<boolean | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [missed, setMissed] = useState(0);
  const [level, setLevel] = useState<LogLevel | "all">("all");
  const [query, setQuery] = useState("");

  useEffect(() => {
    if (!live) return;
    let current = true;
    store
      .call("logs.follow", {})
      .then((recent) => {
        if (!current) return;
        setEnabled(recent.enabled);
        setMissed(0);
        list.reset(recent.records.map(toRow).reverse());
      })
      .catch((e) => current && setError(e instanceof Error ? e.message : String(e)));
    return () => {
      current = false;
      store.call("unfollow", { topic: "logs" }).catch(() => {});
    };
  }, [live, state.generation]);

  useControlEvents((event) => {
    if (event.kind === "log") list.push(toRow(event.record));
    else if (event.kind === "follow.lagged" && event.topic === "logs") setMissed((m) => m + event.missed);
  });

  const rows = list.items;
  const visible = useMemo(() => {
    const q = query.trim().toLowerCase();
    const most = level === "all" ? LEVELS.length : LEVELS.indexOf(level);
    return rows.filter((r) => LEVELS.indexOf(r.level) <= most && (!q || r.haystack.includes(q)));
  }, [rows, level, query]);

  if (enabled === false) {
    return (
      <p class="empty">
        This gateway keeps no log for the panel (the program hosting it did not install the log ring). Its log goes to its own output.
      </p>
    );
  }

  return (
    <div class="streams">
      <div class="toolbar" role="search" aria-label="Filter the log">
        <label class="field">
          <span>Level</span>
          <select value={level} onChange={(e) => setLevel((e.currentTarget as HTMLSelectElement).value as LogLevel | "all")}>
            <option value="all">All levels</option>
            {LEVELS.map((l) => (
              <option key={l} value={l}>
                {LEVEL_CHOICES[l]}
              </option>
            ))}
          </select>
        </label>
        <label class="field grow">
          <span>Search</span>
          <input type="search" value={query} placeholder="message, module, fields" onInput={(e) => setQuery((e.currentTarget as HTMLInputElement).value)} />
        </label>
        <button
          type="button"
          class={`btn${list.paused ? " attention" : ""}`}
          aria-pressed={list.paused}
          onClick={() => list.pause(!list.paused)}
          disabled={enabled === null}
        >
          {list.paused ? "Resume" : "Pause"}
        </button>
      </div>
      <div class="tail-status">
        <p class="small muted" role="status" data-testid="logs-count">
          {enabled === null ? "Loading…" : `${visible.length} of ${rows.length} records, newest first`}
        </p>
        {enabled && (
          <span class={`pill ${list.paused ? "attention" : live ? "ok" : "warn"}`} data-testid="logs-tail">
            {list.paused ? `paused · ${list.waiting} new waiting` : live ? "live" : "reconnecting"}
          </span>
        )}
        {missed > 0 && (
          <span class="pill warn" role="status">
            {missed} records skipped (the panel fell behind)
          </span>
        )}
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {rows.length > 0 && (
        <>
          <div class="log-row log-head" aria-hidden="true">
            <span>Time</span>
            <span>Level</span>
            <span>Module</span>
            <span>Message</span>
          </div>
          <VirtualList
            items={visible}
            rowHeight={ROW_HEIGHT}
            label="Log records, newest first"
            render={(r) => (
              <div class="log-row" data-level={r.level}>
                <span class="mono small" title={fullTime(r.ts)}>
                  {clockMs(r.ts)}
                </span>
                <span>
                  <span class={`pill log-${r.level}`}>{r.level}</span>
                </span>
                <span class="mono small muted ellipsis" title={r.target}>
                  {r.target.replace(/^tap_gateway::/, "")}
                </span>
                <span class="ellipsis" title={r.fieldText ? `${r.message}\n${r.fieldText}` : r.message}>
                  {r.message}
                  {r.fieldText && <span class="mono small muted"> {r.fieldText}</span>}
                </span>
              </div>
            )}
          />
        </>
      )}
    </div>
  );
}

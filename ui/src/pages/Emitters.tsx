import { useState } from "preact/hooks";
import type { EmitterInfo, EmitterStart, Schedule } from "../generated";
import { store, useNow, type PanelState } from "../store";
import { useMethod } from "../method";
import { Breakable } from "../components/Breakable";
import { ConfirmButton } from "../components/ConfirmButton";
import { clock, duration, fullTime, sessionName } from "../format";
import { EmitterForm } from "./emitters/EmitterForm";
import { RunTimeline, streamLink } from "./emitters/RunTimeline";

/**
 * Emitters: the background commands and scheduled prompts a live session runs, each with its
 * status, schedule, counters and a timeline of its runs; Start, Stop and a form for a new one.
 * `#/emitters/<session>` picks the session.
 */
export function Emitters({ state, sessionId }: { state: PanelState; sessionId?: string }) {
  const sessions = state.status!.sessions;
  const live = state.phase.kind === "live";
  const fallback = sessions.find((s) => s.foreground)?.id ?? sessions[0]?.id;
  const selected = sessionId && sessions.some((s) => s.id === sessionId) ? sessionId : fallback;
  // Asked again on `emitters.changed` (followed while the page is open): no polling.
  const {
    data: list,
    error: listError,
    refresh,
  } = useMethod("emitters.list", { sessionId: selected }, { follow: "emitters", on: ["emitters.changed"], enabled: !!selected });
  const error = listError?.message ?? null;
  const [creating, setCreating] = useState(false);

  if (!selected) {
    return (
      <p class="empty">
        No session is live. Emitters run inside a session: a Copilot session with the Tap extension, or <code>tap session open</code>, registers one.
      </p>
    );
  }

  const emitters = list?.emitters ?? [];
  const warnings = list?.warnings ?? [];
  return (
    <div class="emitters">
      <div class="toolbar">
        <label class="field">
          <span>Session</span>
          <select
            value={selected}
            onChange={(e) => {
              location.hash = `#/emitters/${encodeURIComponent((e.currentTarget as HTMLSelectElement).value)}`;
            }}
          >
            {sessions.map((s) => (
              <option key={s.id} value={s.id}>
                {sessionName(s)}
              </option>
            ))}
          </select>
        </label>
        <button type="button" class={`btn${creating ? "" : " primary"}`} aria-expanded={creating} onClick={() => setCreating(!creating)}>
          {creating ? "Close the form" : "New emitter"}
        </button>
      </div>
      {sessionId && sessionId !== selected && (
        <p class="notice" role="status">
          Session {sessionId} is not live; showing {selected}.
        </p>
      )}
      {creating && (
        <EmitterForm
          sessionId={selected}
          live={live}
          onStarted={() => {
            setCreating(false);
            refresh();
          }}
        />
      )}
      <div class="tail-status">
        <p class="small muted" role="status" data-testid="emitters-count">
          {list ? `${emitters.length === 1 ? "1 emitter" : `${emitters.length} emitters`} · updated live` : error ? "" : "Loading…"}
        </p>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {warnings.length > 0 && (
        <ul class="notice plain" aria-label="Problems with tap.config.json" data-testid="emitters-warnings">
          {warnings.map((w) => (
            <li key={w}>{w}</li>
          ))}
        </ul>
      )}
      {list && emitters.length === 0 && (
        <p class="empty">
          This session runs no emitters. <strong>New emitter</strong> starts one; an agent can start them with its <code>tap_*</code> tools, and a
          session's <code>tap.config.json</code> can list them.
        </p>
      )}
      {emitters.length > 0 && (
        <ul class="plain emitter-list" aria-label="Emitters">
          {emitters.map((e) => (
            <EmitterCard key={e.name} e={e} live={live} onChanged={refresh} />
          ))}
        </ul>
      )}
    </div>
  );
}

const SCHEDULES: Record<Schedule, string> = { continuous: "continuous", timed: "every", oneTime: "one-time", idle: "when idle" };

/** `every 5m`, `continuous`, `one-time`, `when the session is idle`. */
export function scheduleText(e: Pick<EmitterInfo, "schedule" | "every">): string {
  if (e.schedule === "timed") return `every ${e.every ?? "?"}`;
  if (e.schedule === "idle") return "when the session is idle";
  return SCHEDULES[e.schedule];
}

/** Status pill colour. */
function statusClass(status: EmitterInfo["status"]): string {
  switch (status) {
    case "running":
      return "accent";
    case "waiting":
    case "queued":
      return "ok";
    case "stopping":
      return "attention";
    case "error":
      return "danger";
    default:
      return "";
  }
}

const ACTIVE = new Set<EmitterInfo["status"]>(["queued", "waiting", "running"]);

/** The definition `emitters.start` needs to start `e` again (what `emitters.list` shows of it). */
function restartParams(e: EmitterInfo): EmitterStart {
  const p: EmitterStart = { sessionId: e.sessionId, name: e.name, stream: e.stream, eventFilter: e.eventFilter };
  if (e.kind === "command") p.command = e.command;
  else p.prompt = e.prompt;
  if (e.every) p.every = e.every;
  if (e.description) p.description = e.description;
  if (e.ownership === "userOwned") p.force = true;
  return p;
}

function EmitterCard({ e, live, onChanged }: { e: EmitterInfo; live: boolean; onChanged: () => void }) {
  const now = useNow(1000);
  // Its runs: asked for again only when the list shows the emitter moved (a run, its
  // status, its counters), not on every `emitters.changed` of any emitter.
  const moved = [e.runCount, e.status, e.counts, e.lastError];
  const runs = useMethod("emitters.runs", { sessionId: e.sessionId, name: e.name }, { watch: moved }).data?.runs ?? [];
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const userOwned = e.ownership === "userOwned";

  const act = async (what: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await what();
      onChanged();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  const stop = () => store.call("emitters.stop", { sessionId: e.sessionId, name: e.name, ...(userOwned ? { force: true } : {}) });

  const next = e.nextRunAt ? Date.parse(e.nextRunAt) : NaN;
  return (
    <li class="emitter" data-emitter={e.name} aria-label={`Emitter ${e.name}`}>
      <div class="emitter-head">
        <h2 class="mono breakable">
          <Breakable text={e.name} />
        </h2>
        <span class={`pill ${statusClass(e.status)}`} data-testid="emitter-status">
          {e.status}
        </span>
        <span class="pill">{e.kind}</span>
        <span class="pill" title={userOwned ? "From tap.config.json or this panel: stopping or replacing it needs force" : "Started by the agent"}>
          {userOwned ? "user-owned" : "model-owned"}
        </span>
        <span class="pill" title={e.lifespan === "persistent" ? "Written to the session's tap.config.json" : "For this session only"}>
          {e.lifespan}
        </span>
        <span class="emitter-actions">
          {ACTIVE.has(e.status) ? (
            userOwned ? (
              <ConfirmButton
                label="Stop"
                ariaLabel={`Stop ${e.name}`}
                question={`Stop ${e.name}? It is user-owned.`}
                confirmLabel="Yes, stop"
                onConfirm={async () => {
                  await stop();
                  onChanged();
                }}
              />
            ) : (
              <button type="button" class="btn danger-outline" aria-label={`Stop ${e.name}`} disabled={busy || !live} onClick={() => void act(stop)}>
                Stop
              </button>
            )
          ) : (
            <button
              type="button"
              class="btn"
              aria-label={`Start ${e.name}`}
              disabled={busy || !live || e.status === "stopping"}
              onClick={() => void act(() => store.call("emitters.start", restartParams(e)))}
            >
              Start
            </button>
          )}
        </span>
      </div>
      {e.description && <p class="emitter-description">{e.description}</p>}
      <code class="emitter-what breakable" title={e.kind === "command" ? "Command" : "Prompt"}>
        {e.kind === "command" ? e.command : e.prompt}
      </code>
      <dl class="emitter-facts">
        <div>
          <dt>Schedule</dt>
          <dd data-testid="emitter-schedule">{scheduleText(e)}</dd>
        </div>
        <div>
          <dt>Next run</dt>
          <dd data-testid="emitter-next" title={e.nextRunAt ? fullTime(e.nextRunAt) : undefined}>
            {Number.isNaN(next) ? "—" : next > now ? `in ${duration(next - now)} (${clock(e.nextRunAt!)})` : "due"}
          </dd>
        </div>
        <div>
          <dt>Runs</dt>
          <dd>{e.runCount}</dd>
        </div>
        <div>
          <dt>Stream</dt>
          <dd class="breakable">
            <a href={streamLink(e.sessionId, e.stream)} title={`The ${e.stream} stream on the Streams page`}>
              <Breakable text={e.stream} />
            </a>
          </dd>
        </div>
      </dl>
      <dl class="emitter-counts" data-testid="emitter-counts" aria-label="Lines">
        {(["lines", "kept", "dropped", "surfaced", "injected"] as const).map((k) => (
          <div key={k} data-count={k}>
            <dt>{k}</dt>
            <dd class="num">{e.counts[k]}</dd>
          </div>
        ))}
      </dl>
      {e.eventFilter.length > 0 && (
        <p class="small muted emitter-rules">
          Filter:{" "}
          {e.eventFilter.map((r, i) => (
            <span key={i} class="tag mono">
              /{r.match}/ → {r.outcome}
            </span>
          ))}
        </p>
      )}
      {e.lastError && (
        <p class="error small" data-testid="emitter-error">
          Last error: {e.lastError}
        </p>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <RunTimeline emitter={e} runs={runs} now={now} />
    </li>
  );
}

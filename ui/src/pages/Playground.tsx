import { useState } from "preact/hooks";
import type { PlaygroundTool } from "../generated";
import type { PanelState } from "../store";
import { useMethod } from "../method";
import { IdText } from "../components/IdText";
import { Breakable } from "../components/Breakable";
import { sessionName } from "../format";
import { playground, usePlayground, type CallEntry } from "./playground/model";
import { buildArgs, formFrom, parseRaw, type FormState, type Schema } from "./playground/schema";
import { SchemaForm } from "./playground/SchemaForm";
import "./playground/playground.css";

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/**
 * The tool playground: open a session of your own (or join a live one), see its tools with
 * their schemas, call one from a generated form or raw JSON, and watch its progress,
 * result or error and duration. Calls take the same path as an agent's.
 */
export function Playground({ state }: { state: PanelState }) {
  const pg = usePlayground();
  return (
    <div class="playground">
      <SessionBar state={state} />
      {pg.notice && (
        <p class="notice" role="status">
          {pg.notice}
        </p>
      )}
      <div class="pg-main">
        {pg.current ? (
          <SessionTools key={pg.current} state={state} sessionId={pg.current} />
        ) : (
          <p class="empty">Open a session of your own, or join a live one, to see its tools.</p>
        )}
        <RecentCalls calls={pg.calls} state={state} />
      </div>
    </div>
  );
}

function SessionBar({ state }: { state: PanelState }) {
  const pg = usePlayground();
  const [name, setName] = useState("playground");
  const [cwd, setCwd] = useState("");
  const [join, setJoin] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const live = state.phase.kind === "live";
  const sessions = state.status?.sessions ?? [];

  const run = async (what: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await what();
    } catch (e) {
      setError(message(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="pg-sessions" aria-labelledby="pg-sessions-heading">
      <h2 id="pg-sessions-heading" class="sr-only">
        Sessions
      </h2>
      <div class="pg-open-row">
        <form
          class="toolbar"
          onSubmit={(e) => {
            e.preventDefault();
            void run(() => playground.open(name.trim(), cwd.trim() || undefined));
          }}
        >
          <label class="field">
            Session name
            <input value={name} onInput={(e) => setName(e.currentTarget.value)} required maxLength={128} spellcheck={false} />
          </label>
          <label class="field grow">
            Working directory (optional)
            <input value={cwd} onInput={(e) => setCwd(e.currentTarget.value)} class="mono" spellcheck={false} placeholder="/path/to/project" />
          </label>
          <button type="submit" class="btn primary" disabled={!live || busy || name.trim() === ""}>
            Open session
          </button>
        </form>
        <form
          class="toolbar"
          onSubmit={(e) => {
            e.preventDefault();
            if (join) void run(() => playground.open(join));
          }}
        >
          <label class="field">
            Live session
            <select value={join} onChange={(e) => setJoin(e.currentTarget.value)}>
              <option value="">choose…</option>
              {sessions.map((s) => (
                <option key={s.id} value={s.id}>
                  {sessionName(s)}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" class="btn" disabled={!live || busy || !join}>
            Join
          </button>
        </form>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {pg.held.length > 0 && (
        <ul class="pg-held" aria-label="Held sessions">
          {pg.held.map((h) => (
            <li key={h.sessionId} class={h.sessionId === pg.current ? "current" : undefined} data-session-id={h.sessionId}>
              <button type="button" class="btn link" aria-pressed={h.sessionId === pg.current} onClick={() => playground.select(h.sessionId)}>
                <Breakable text={h.name} />
              </button>
              <IdText id={h.sessionId} class="muted" />
              <span class={`pill ${h.owned ? "accent" : "muted"}`}>{h.owned ? "opened here" : "joined"}</span>
              <button type="button" class="btn" aria-label={`Close ${h.name}`} onClick={() => void run(() => playground.close(h.sessionId))}>
                Close
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function SessionTools({ state, sessionId }: { state: PanelState; sessionId: string }) {
  const session = state.status?.sessions.find((s) => s.id === sessionId);
  const [selected, setSelected] = useState<string | null>(null);
  // The tool set changed (a provider bound, left or updated its tools): fetch it again.
  const version = session ? `${session.toolRevision}:${session.tools.join(",")}` : "gone";
  const got = useMethod("playground.tools", { sessionId }, { enabled: !!session, watch: [version] });
  const tools: PlaygroundTool[] | null = got.data?.tools ?? null;
  const error = got.error ? message(got.error) : null;

  if (!session) return <p class="notice">Session {sessionId} has ended.</p>;
  if (error)
    return (
      <p class="error" role="alert">
        {error}
      </p>
    );
  if (!tools) return <p class="muted">Loading tools…</p>;
  const tool = tools.find((t) => t.name === selected) ?? tools[0];
  return (
    <section class="pg-workbench" aria-label="Tools">
      {tools.length === 0 ? (
        <p class="empty">
          No tools in this session yet. Providers bind to it by its id (<code>{sessionId}</code>) or label.
        </p>
      ) : (
        <>
          <ul class="pg-tools" aria-label={`${tools.length} tools`}>
            {tools.map((t) => (
              <li key={t.name}>
                <button type="button" class="pg-tool" aria-pressed={t === tool} onClick={() => setSelected(t.name)}>
                  <span class="mono strong breakable">
                    <Breakable text={t.name} />
                  </span>
                  <span class="muted small">{t.provider || "gateway"}</span>
                </button>
              </li>
            ))}
          </ul>
          <ToolPanel key={tool.name} tool={tool} sessionId={sessionId} live={state.phase.kind === "live"} />
        </>
      )}
    </section>
  );
}

function ToolPanel({ tool, sessionId, live }: { tool: PlaygroundTool; sessionId: string; live: boolean }) {
  const schema = (tool.parameters && typeof tool.parameters === "object" && !Array.isArray(tool.parameters) ? tool.parameters : {}) as Schema;
  const [mode, setMode] = useState<"form" | "json">("form");
  const [form, setForm] = useState<FormState>(() => formFrom(schema, undefined));
  const [raw, setRaw] = useState("{}");
  const [problems, setProblems] = useState<string[]>([]);

  const switchTo = (next: "form" | "json") => {
    if (next === mode) return;
    if (next === "json") setRaw(JSON.stringify(buildArgs(schema, form).args, null, 2));
    else {
      const parsed = parseRaw(raw);
      if (parsed.args) setForm(formFrom(schema, parsed.args));
    }
    setProblems([]);
    setMode(next);
  };

  const submit = (e: Event) => {
    e.preventDefault();
    const built = mode === "form" ? buildArgs(schema, form) : parseRaw(raw);
    const found = "problems" in built ? built.problems : built.problem ? [built.problem] : [];
    setProblems(found);
    if (found.length > 0 || !built.args) return;
    void playground.call(sessionId, tool.name, built.args);
  };

  return (
    // noValidate: the gateway checks the arguments against the whole schema and says
    // exactly what is wrong; the browser would block a call with a bare tooltip.
    <form class="pg-tool-panel" aria-label={`Call ${tool.name}`} onSubmit={submit} noValidate>
      <div class="pg-tool-head">
        <h2 class="mono breakable">
          <Breakable text={tool.name} />
        </h2>
        <span class="muted small">
          {tool.provider || "gateway"} · timeout {Math.round(tool.timeoutMs / 1000)} s
        </span>
      </div>
      {tool.description ? <p class="pg-description">{tool.description}</p> : <p class="muted small">No description.</p>}
      <details class="pg-schema">
        <summary>JSON Schema</summary>
        <pre class="mono small">{JSON.stringify(tool.parameters, null, 2)}</pre>
      </details>
      <div class="pg-mode" role="group" aria-label="Arguments as">
        <button type="button" class="btn" aria-pressed={mode === "form"} onClick={() => switchTo("form")}>
          Form
        </button>
        <button type="button" class="btn" aria-pressed={mode === "json"} onClick={() => switchTo("json")}>
          JSON
        </button>
      </div>
      {mode === "form" ? (
        <SchemaForm schema={schema} form={form} onChange={setForm} />
      ) : (
        <label class="field">
          Arguments (JSON object)
          <textarea class="mono pg-raw" rows={8} spellcheck={false} value={raw} onInput={(e) => setRaw(e.currentTarget.value)} />
        </label>
      )}
      {problems.length > 0 && (
        <ul class="error pg-problems" role="alert" aria-label="Problems">
          {problems.map((p) => (
            <li key={p}>{p}</li>
          ))}
        </ul>
      )}
      <div>
        <button type="submit" class="btn primary" disabled={!live}>
          Call {tool.name}
        </button>
      </div>
    </form>
  );
}

function RecentCalls({ calls, state }: { calls: CallEntry[]; state: PanelState }) {
  const labels = new Map((state.status?.sessions ?? []).map((s) => [s.id, s.label ?? s.id]));
  return (
    <section class="pg-calls" aria-labelledby="pg-calls-heading">
      <h2 id="pg-calls-heading">Recent calls</h2>
      {calls.length === 0 && <p class="muted small">Calls made here appear here, newest first, until this tab is closed.</p>}
      <ol class="plain" aria-label="Recent calls">
        {calls.map((c) => (
          <li key={c.callId} class={`pg-call is-${c.state}`} data-call-id={c.callId}>
            <div class="pg-call-head">
              <span class="mono strong">{c.tool}</span>
              <span class="muted small">in {labels.get(c.sessionId) ?? c.sessionId}</span>
              {c.state === "running" && <span class="pill attention">running</span>}
              {c.state === "ok" && <span class="pill ok">ok</span>}
              {c.error && <span class="pill log-error">{c.error.code}</span>}
              {c.durationMs !== undefined && <span class="small" data-testid="pg-duration">{c.durationMs} ms</span>}
              {c.traceId && (
                <a class="small" href={`#/traces/${c.traceId}`} title={`Open trace ${c.traceId}`} data-trace-id={c.traceId}>
                  trace
                </a>
              )}
              {c.state === "running" && (
                <button type="button" class="btn push-right" onClick={() => void playground.cancel(c.callId).catch(() => {})}>
                  Cancel
                </button>
              )}
            </div>
            <div class="mono small muted pg-args">{JSON.stringify(c.args)}</div>
            {c.progress.length > 0 && (
              <ol class="pg-progress" aria-label="Progress">
                {c.progress.map((p, i) => (
                  <li key={i}>{p}</li>
                ))}
              </ol>
            )}
            {c.error && <p class="error pg-error">{c.error.message}</p>}
            {c.data !== undefined && <pre class="mono small pg-result">{JSON.stringify(c.data, null, 2)}</pre>}
            {c.context && <p class="small pg-context">Context from hook rules: {c.context}</p>}
          </li>
        ))}
      </ol>
    </section>
  );
}

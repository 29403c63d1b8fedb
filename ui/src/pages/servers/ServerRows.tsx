import { useState } from "preact/hooks";
import type { McpServerInfo, McpServerState } from "../../generated";
import { useNow } from "../../store";
import { ago, bytes, fullTime } from "../../format";
import { Breakable } from "../../components/Breakable";
import { IdText } from "../../components/IdText";
import { Tools } from "../Sessions";
import { domId, needsSignIn, serverKey, SignInPanel } from "./SignIn";
import { AskEveryTool } from "../approvals/AskEveryTool";
import { ActivityCell, rowClass, serverProvider, useRowActivity, WindowSelect, type RowActivity } from "../../components/RowActivity";
import type { ActivityWindow } from "../../activity";

/** State pill colour: ready is ok; parked, restarting and starting again after a failure warn;
 * waiting for the user to sign in asks for attention. */
function stateClass(state: McpServerState, failing: boolean): string {
  if (failing) return "warn";
  switch (state) {
    case "needsSignIn":
      return "attention";
    case "ready":
      return "ok";
    case "starting":
      return "accent";
    case "restarting":
    case "parked":
      return "warn";
    default:
      return "";
  }
}

/** A state as the page words it. */
const stateText = (state: McpServerState) => (state === "needsSignIn" ? "needs sign-in" : state);

const COLUMNS = 10;

/**
 * The servers' table: one row each, with its tool calls over the chosen window (one
 * `activity.query` by provider for the table: a server's calls are its provider
 * `mcp-NAME`'s, in every session it runs in); under a remote server that signs in (OAuth),
 * its sign-in; under an expanded one its tools, warnings and stderr tail.
 */
export function ServerRows({ servers, live, busy, onRestart, onChanged }: { servers: McpServerInfo[]; live: boolean; busy: boolean; onRestart: (s: McpServerInfo) => void; onChanged: () => void }) {
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const toggle = (key: string) => {
    const next = new Set(open);
    if (!next.delete(key)) next.add(key);
    setOpen(next);
  };
  const activity = useRowActivity("provider");
  return (
    <>
      <WindowSelect activity={activity} />
      <div class="table-wrap servers-table">
        <table aria-label="MCP servers">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">State</th>
              <th scope="col">Tool calls</th>
              <th scope="col">Transport · target</th>
              <th scope="col" class="num">PID</th>
              <th scope="col" class="num" title="Resident memory of its process">
                Memory
              </th>
              <th scope="col" class="num">Tools</th>
              <th scope="col" class="num">Restarts</th>
              <th scope="col">Last error</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {servers.map((s) => {
              const key = serverKey(s);
              return <ServerRow key={key} s={s} activity={activity} expanded={open.has(key)} onToggle={() => toggle(key)} live={live} busy={busy} onRestart={() => onRestart(s)} onChanged={onChanged} />;
            })}
          </tbody>
        </table>
      </div>
    </>
  );
}

interface RowProps {
  s: McpServerInfo;
  activity: RowActivity;
  expanded: boolean;
  onToggle: () => void;
  live: boolean;
  busy: boolean;
  onRestart: () => void;
  onChanged: () => void;
}

function ServerRow({ s, activity, expanded, onToggle, live, busy, onRestart, onChanged }: RowProps) {
  const now = useNow(10_000);
  const detailsId = domId("server-details", s);
  const signsIn = s.signIn !== undefined || needsSignIn(s);
  const provider = serverProvider(s.name);
  const calls = activity.row(provider);
  return (
    <>
      <tr data-server={s.name} data-session-id={s.sessionId} class={[expanded && "expanded", signsIn && "has-sign-in", rowClass(calls)].filter(Boolean).join(" ") || undefined}>
        <td>
          <div class="strong breakable">
            <Breakable text={s.name} />
          </div>
          <div class="small muted">
            {s.scope}
            {s.sessionId && (
              <>
                {" · "}
                <IdText id={s.sessionId} />
              </>
            )}
          </div>
          {s.serverInfo && <div class="small muted breakable">{s.serverInfo}</div>}
        </td>
        <td>
          <span class={`pill ${stateClass(s.state, s.failing)}`} data-testid="server-state" data-state={s.state}>
            {stateText(s.state)}
          </span>
          {s.state === "ready" && s.readySince && (
            <div class="small muted nowrap" title={fullTime(s.readySince)}>
              since {ago(s.readySince, now)}
            </div>
          )}
        </td>
        <ActivityCell row={calls} name={s.name} window={activity.window} filter={{ provider }} />
        <td>
          <span class="pill">{s.transport}</span>
          <div class="mono small breakable" title={s.configPath}>
            <Breakable text={s.target} />
          </div>
        </td>
        <td class="num">{s.pid ?? <span class="muted">—</span>}</td>
        <td class="num nowrap" data-testid="server-memory">
          {s.memoryBytes !== undefined ? bytes(s.memoryBytes) : <span class="muted">—</span>}
        </td>
        <td class="num" data-testid="server-tool-count">
          {s.tools.length}
        </td>
        <td class="num">{s.restarts}</td>
        <td class="breakable small" data-testid="server-last-error">
          {s.lastError ? <span class="error">{s.lastError}</span> : <span class="muted">—</span>}
          {s.warnings.length > 0 && <div class="small" title="Expand the row for them">{`${s.warnings.length} warning${s.warnings.length === 1 ? "" : "s"}`}</div>}
        </td>
        <td class="actions nowrap">
          <button type="button" class="btn" aria-label={`Restart ${s.name}`} disabled={busy || !live || s.state === "disabled"} onClick={onRestart}>
            Restart
          </button>{" "}
          <button type="button" class="btn" aria-expanded={expanded} aria-controls={detailsId} aria-label={`Details of ${s.name}`} onClick={onToggle}>
            {expanded ? "Hide" : "Details"}
          </button>
        </td>
      </tr>
      {signsIn && (
        <tr class="server-sign-in-row" data-sign-in-for={s.name} data-session-id={s.sessionId}>
          <td colSpan={COLUMNS}>
            <SignInPanel s={s} live={live} onChanged={onChanged} />
          </td>
        </tr>
      )}
      {expanded && (
        <tr class="server-details-row">
          <td colSpan={COLUMNS} id={detailsId} data-testid="server-details">
            <ServerDetails s={s} live={live} window={activity.window} />
          </td>
        </tr>
      )}
    </>
  );
}

function ServerDetails({ s, live, window }: { s: McpServerInfo; live: boolean; window: ActivityWindow }) {
  return (
    <div class="server-details">
      <section aria-label={`Tools of ${s.name}`}>
        <h3>Tools</h3>
        {s.tools.length > 0 ? <ToolRows s={s} window={window} /> : <Tools tools={s.tools} />}
      </section>
      {s.secretNames.length > 0 && (
        <p class="small">
          {s.transport === "stdio" ? "Environment" : "Headers"}:{" "}
          {s.secretNames.map((n) => (
            <span key={n} class="tag mono">
              {n}
            </span>
          ))}
        </p>
      )}
      <AskEveryTool provider={s.name} live={live} />
      <p class="small muted breakable">
        Configured in <span class="mono">{s.configPath}</span>
        {s.providerId && (
          <>
            {" · provider "}
            <IdText id={s.providerId} />
          </>
        )}
      </p>
      {s.warnings.length > 0 && (
        <section aria-label={`Warnings of ${s.name}`}>
          <h3>Warnings</h3>
          <ul class="notice plain" data-testid="server-warnings">
            {s.warnings.map((w, i) => (
              <li key={i}>{w}</li>
            ))}
          </ul>
        </section>
      )}
      <section aria-label={`Stderr of ${s.name}`}>
        <h3>Stderr tail</h3>
        {s.stderrTail.length > 0 ? (
          <pre class="server-stderr" data-testid="server-stderr">
            {s.stderrTail.join("\n")}
          </pre>
        ) : (
          <p class="small muted">Nothing written to stderr.</p>
        )}
      </section>
    </div>
  );
}

/** A server's tools with their calls over the table's window: one query by tool within its provider. */
function ToolRows({ s, window }: { s: McpServerInfo; window: ActivityWindow }) {
  const provider = serverProvider(s.name);
  const activity = useRowActivity("tool", { provider }, window);
  return (
    <table class="server-tool-rows" aria-label={`Tool calls of ${s.name}'s tools`} data-testid="server-tool-rows">
      <tbody>
        {s.tools.map((t) => {
          const row = activity.row(t);
          return (
            <tr key={t} data-tool={t} class={rowClass(row)}>
              <td class="mono small breakable">
                <Breakable text={t} />
              </td>
              <ActivityCell row={row} name={t} window={window} filter={{ provider, tool: t }} />
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

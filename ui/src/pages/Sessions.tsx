import { useEffect } from "preact/hooks";
import type { SessionRecord } from "../generated";
import { useNow, type PanelState } from "../store";
import { IdText } from "../components/IdText";
import { Breakable } from "../components/Breakable";
import { labelOf, rememberLabels, useLedgerSessions } from "../ledger";
import { ago, fullTime } from "../format";
import { EndedCell } from "../components/EndedCell";

/**
 * Registered sessions: label, directory, owning host, busy/idle, bound providers, tools;
 * then the ended ones the ledger remembers, greyed, with when and why they ended.
 * `#/sessions/<id>` (the Clients page's links) marks that session's row and scrolls to it.
 */
export function Sessions({ state, selected }: { state: PanelState; selected?: string }) {
  const { sessions } = state.status!;
  const { records } = useLedgerSessions();
  rememberLabels(sessions);
  const ended = (records?.sessions ?? []).filter((r) => !sessions.some((s) => s.id === r.id));
  const found = !!selected && (sessions.some((s) => s.id === selected) || ended.some((s) => s.id === selected));
  useEffect(() => {
    if (found) document.querySelector(`tr[aria-current="true"]`)?.scrollIntoView({ block: "center" });
  }, [selected, found]);
  return (
    <>
      {sessions.length === 0 ? (
        <p class="empty">
          No sessions are registered. A Copilot session with the Tap extension, or <code>tap session open</code>, registers one.
        </p>
      ) : (
        <LiveSessions state={state} selected={selected} />
      )}
      {ended.length > 0 && <EndedSessions ended={ended} selected={selected} />}
    </>
  );
}

function LiveSessions({ state, selected }: { state: PanelState; selected?: string }) {
  const { sessions, providers } = state.status!;
  return (
    <div class="table-wrap">
      <table aria-label="Sessions">
        <thead>
          <tr>
            <th scope="col">Label</th>
            <th scope="col">Working directory</th>
            <th scope="col">Host</th>
            <th scope="col">State</th>
            <th scope="col">Providers</th>
            <th scope="col">Tools</th>
            <th scope="col">
              <span class="sr-only">Links</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {sessions.map((s) => {
            const bound = providers.filter((p) => p.session === s.id);
            return (
              <tr key={s.id} data-session-id={s.id} aria-current={s.id === selected ? "true" : undefined} class={s.id === selected ? "selected" : undefined}>
                <td>
                  <div class="strong breakable">{s.label ? <Breakable text={s.label} /> : <span class="muted">no label</span>}</div>
                  <IdText id={s.id} class="muted" />
                  {s.foreground && <span class="pill accent">foreground</span>}
                </td>
                <td class="mono small breakable">{s.cwd ? <Breakable text={s.cwd} /> : <span class="muted">unknown</span>}</td>
                <td>
                  {s.hostName ?? s.hostId ?? <span class="muted">unknown</span>}
                  {s.hostName && s.hostId && <IdText id={s.hostId} class="muted" />}
                  {s.hostDetached && <span class="pill warn">detached, may resume</span>}
                </td>
                <td>
                  <span class={`pill ${s.state === "busy" ? "attention" : "muted"}`}>{s.state}</span>
                </td>
                <td>
                  {bound.length === 0 ? (
                    <span class="muted">none</span>
                  ) : (
                    <ul class="plain">
                      {bound.map((p) => (
                        <li key={p.id} class="breakable">
                          <Breakable text={p.name ?? p.id} />
                          {p.instance && (
                            <span class="muted">
                              {" "}
                              · <Breakable text={p.instance} />
                            </span>
                          )}
                        </li>
                      ))}
                    </ul>
                  )}
                </td>
                <td>
                  <Tools tools={s.tools} revision={s.toolRevision} />
                </td>
                <td>
                  <a href={`#/streams/${encodeURIComponent(s.id)}`}>Streams</a>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** Sessions the ledger remembers that are not registered now (ended, or the gateway stopped). */
function EndedSessions({ ended, selected }: { ended: SessionRecord[]; selected?: string }) {
  const now = useNow(10_000);
  return (
    <section aria-labelledby="ended-sessions-heading">
      <h2 id="ended-sessions-heading">Ended ({ended.length})</h2>
      <div class="table-wrap">
        <table aria-label="Ended sessions" data-testid="ended-sessions">
          <thead>
            <tr>
              <th scope="col">Label</th>
              <th scope="col">Working directory</th>
              <th scope="col">Started</th>
              <th scope="col">Ended</th>
              <th scope="col">
                <span class="sr-only">Links</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {ended.map((s) => {
              const label = s.label ?? labelOf(s.id, []);
              return (
                <tr key={s.id} class={s.id === selected ? "ended selected" : "ended"} data-ended-session-id={s.id} aria-current={s.id === selected ? "true" : undefined}>
                  <td>
                    <div class="strong breakable">{label ? <Breakable text={label} /> : <span class="muted">no label</span>}</div>
                    <IdText id={s.id} class="muted" />
                  </td>
                  <td class="mono small breakable">{s.cwd ? <Breakable text={s.cwd} /> : <span class="muted">unknown</span>}</td>
                  <td class="nowrap small" title={fullTime(s.startedAt)}>
                    {ago(s.startedAt, now)}
                  </td>
                  <EndedCell at={s.endedAt} reason={s.endReason} now={now} />
                  <td>
                    <a href={`#/streams/${encodeURIComponent(s.id)}`}>Streams</a>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </section>
  );
}

export function Tools({ tools, revision }: { tools: string[]; revision?: number }) {
  if (tools.length === 0) return <span class="muted">none</span>;
  return (
    <div>
      <ul class="tags" aria-label={`${tools.length} tools`}>
        {tools.map((t) => (
          <li key={t} class="tag mono breakable">
            <Breakable text={t} />
          </li>
        ))}
      </ul>
      {revision !== undefined && <div class="small muted">revision {revision}</div>}
    </div>
  );
}

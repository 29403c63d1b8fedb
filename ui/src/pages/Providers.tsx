import type { PanelState } from "../store";
import { store, useNow } from "../store";
import { ConfirmButton } from "../components/ConfirmButton";
import { ago, fullTime } from "../format";
import { EndedCell } from "../components/EndedCell";
import { Tools } from "./Sessions";
import { IdText } from "../components/IdText";
import { Breakable } from "../components/Breakable";
import type { ProviderRecord } from "../generated";
import { endedProviders, labelOf, useLedgerSessions } from "../ledger";
import { ActivityCell, rowClass, useRowActivity, WindowSelect } from "../components/RowActivity";

/**
 * Connected providers: trust, name and instance, their tool calls over a chosen window
 * (sparkline, counts, p95; red when one failed; a click opens their traces), session, tools,
 * calls in flight; disconnect. Then the connections the ledger remembers that ended, greyed, with when and why.
 */
export function Providers({ state }: { state: PanelState }) {
  const { providers } = state.status!;
  const { records } = useLedgerSessions();
  const ended = endedProviders(records?.providers ?? [], new Set(providers.map((p) => p.id)));
  return (
    <>
      {providers.length === 0 ? (
        <p class="empty">No provider is connected. Providers connect to {state.status!.address}.</p>
      ) : (
        <LiveProviders state={state} />
      )}
      {ended.length > 0 && <EndedProviders ended={ended} state={state} />}
    </>
  );
}

function EndedProviders({ ended, state }: { ended: ProviderRecord[]; state: PanelState }) {
  const now = useNow(10_000);
  const live = state.status!.sessions;
  return (
    <section aria-labelledby="ended-providers-heading">
      <h2 id="ended-providers-heading">Disconnected ({ended.length})</h2>
      <div class="table-wrap">
        <table aria-label="Disconnected providers" data-testid="ended-providers">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Session</th>
              <th scope="col">Connected</th>
              <th scope="col">Disconnected</th>
            </tr>
          </thead>
          <tbody>
            {ended.map((p, i) => {
              const session = p.sessionId ? (live.find((s) => s.id === p.sessionId)?.label ?? labelOf(p.sessionId, [])) : undefined;
              return (
                <tr key={`${p.id}-${i}`} class="ended" data-ended-provider-id={p.id}>
                  <td>
                    <div class="strong breakable">
                      <Breakable text={p.name} />
                    </div>
                    <IdText id={p.id} class="muted" />
                  </td>
                  <td>
                    {!p.sessionId ? (
                      <span class="muted">not bound</span>
                    ) : session ? (
                      <span class="breakable" title={p.sessionId}>
                        <Breakable text={session} />
                      </span>
                    ) : (
                      <IdText id={p.sessionId} />
                    )}
                  </td>
                  <td class="nowrap small" title={fullTime(p.connectedAt)}>
                    {ago(p.connectedAt, now)}
                  </td>
                  <EndedCell at={p.disconnectedAt} reason={p.reason} now={now} />
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function LiveProviders({ state }: { state: PanelState }) {
  const now = useNow(1000);
  const { providers, sessions } = state.status!;
  const activity = useRowActivity("provider");
  const label = (id?: string) => {
    if (!id) return <span class="muted">not bound</span>;
    const s = sessions.find((x) => x.id === id);
    if (!s?.label) return <IdText id={id} />;
    return (
      <span class="breakable" title={id}>
        <Breakable text={s.label} />
      </span>
    );
  };
  return (
    <>
      <WindowSelect activity={activity} />
      <div class="table-wrap">
        <table aria-label="Providers">
          <thead>
            <tr>
              <th scope="col">Name · tool calls</th>
              <th scope="col">Trust · state</th>
              <th scope="col">Session</th>
              <th scope="col">Tools</th>
              <th scope="col" class="num">In flight</th>
              <th scope="col">Connected</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {providers.map((p) => {
              // Figures are by provider name: every instance of a name shares them.
              const row = activity.row(p.name ?? "");
              return (
                <tr key={p.id} data-provider-id={p.id} class={p.name ? rowClass(row) : ""}>
                  <td>
                    <div class="strong breakable">{p.name ? <Breakable text={p.name} /> : <span class="muted">no hello yet</span>}</div>
                    {p.instance && <div class="small breakable">instance <Breakable text={p.instance} /></div>}
                    <IdText id={p.id} class="muted" />
                    {/* Under the name, not a column of its own: the table must fit 1100 px with long names. */}
                    {p.name && <ActivityCell as="div" row={row} name={p.name} window={activity.window} filter={{ provider: p.name }} />}
                  </td>
                  <td>
                    <span class={`pill ${p.trust === "external" ? "warn" : p.trust === "internal" ? "accent" : "muted"}`}>{p.trust}</span>
                    <div class="small">{p.state}</div>
                  </td>
                  <td>{label(p.session)}</td>
                  <td>
                    <Tools tools={p.tools} />
                  </td>
                  <td class="num">{p.inFlight}</td>
                  <td>
                    <div class="nowrap" title={fullTime(p.connectedAt)}>
                      {ago(p.connectedAt, now)}
                    </div>
                    <div class="mono small muted breakable">{p.remote}</div>
                  </td>
                  <td class="actions">
                    <ConfirmButton
                      label="Disconnect"
                      ariaLabel={`Disconnect ${p.name ?? p.id}`}
                      question="Disconnect? Its calls in flight fail."
                      confirmLabel="Yes, disconnect"
                      onConfirm={() => store.call("provider.disconnect", { id: p.id })}
                    />
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </>
  );
}

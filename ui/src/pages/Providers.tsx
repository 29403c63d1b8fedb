import type { PanelState } from "../store";
import { store, useNow } from "../store";
import { ConfirmButton } from "../components/ConfirmButton";
import { ago, fullTime } from "../format";
import { Tools } from "./Sessions";
import { IdText } from "../components/IdText";
import { Breakable } from "../components/Breakable";

/** Connected providers: trust, name and instance, session, tools, calls in flight; disconnect. */
export function Providers({ state }: { state: PanelState }) {
  const now = useNow(1000);
  const { providers, sessions } = state.status!;
  if (providers.length === 0) {
    return <p class="empty">No provider is connected. Providers connect to {state.status!.address}.</p>;
  }
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
    <div class="table-wrap">
      <table aria-label="Providers">
        <thead>
          <tr>
            <th scope="col">Name</th>
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
          {providers.map((p) => (
            <tr key={p.id} data-provider-id={p.id}>
              <td>
                <div class="strong breakable">{p.name ? <Breakable text={p.name} /> : <span class="muted">no hello yet</span>}</div>
                {p.instance && <div class="small breakable">instance <Breakable text={p.instance} /></div>}
                <IdText id={p.id} class="muted" />
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
          ))}
        </tbody>
      </table>
    </div>
  );
}

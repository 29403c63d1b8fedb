import { useState } from "preact/hooks";
import type { PairingEntry, PairingConfigure, SessionStatus } from "../generated";
import { store, useNow, type PanelState } from "../store";
import { ConfirmButton } from "../components/ConfirmButton";
import { ago, countdown, fullTime, sessionName, shortJson } from "../format";

/** Pending pairing requests (code, who asks, countdown, decisions) and paired providers. */
export function Pairing({ state }: { state: PanelState }) {
  const now = useNow(1000);
  const sessions = state.status!.sessions;
  const pending = state.pairings.filter((p) => p.state === "pending");
  const paired = state.pairings.filter((p) => p.state === "paired");

  return (
    <>
      <section aria-labelledby="pending-heading">
        <div class="section-head">
          <h2 id="pending-heading">Pending requests ({pending.length})</h2>
          {pending.length > 0 && (
            <ConfirmButton
              label="Deny all"
              question={`Deny all ${pending.length} requests?`}
              confirmLabel="Deny all"
              onConfirm={() => store.call("pairing.denyAll", {})}
            />
          )}
        </div>
        {pending.length === 0 ? (
          <p class="empty">
            No pending requests. When a page or script asks to pair, its code appears here; type it into that page to let it in.
          </p>
        ) : (
          <ul class="requests">
            {pending.map((entry) => (
              <PendingRequest key={entry.id} entry={entry} sessions={sessions} now={now} />
            ))}
          </ul>
        )}
      </section>

      <section aria-labelledby="paired-heading">
        <h2 id="paired-heading">Paired providers ({paired.length})</h2>
        {paired.length === 0 ? (
          <p class="empty">No provider has paired with this gateway.</p>
        ) : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Origin</th>
                  <th scope="col">Remote</th>
                  <th scope="col">Session</th>
                  <th scope="col">Remember</th>
                  <th scope="col">Connected</th>
                  <th scope="col">Paired</th>
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {paired.map((entry) => (
                  <PairedRow key={entry.id} entry={entry} sessions={sessions} now={now} />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}

export function who(entry: PairingEntry): string {
  return entry.name ?? entry.origin ?? entry.remote;
}

/** Sends `pairing.configure` and applies its answer; an error is shown by the caller. */
export async function configure(params: PairingConfigure) {
  const { pairing } = await store.call("pairing.configure", params);
  store.upsertPairing(pairing);
}

export function useAction(): [string | null, (run: () => Promise<unknown>) => void] {
  const [error, setError] = useState<string | null>(null);
  const act = (run: () => Promise<unknown>) => {
    setError(null);
    run().catch((e) => setError(e instanceof Error ? e.message : String(e)));
  };
  return [error, act];
}

export function SessionPicker({ entry, sessions, onPick }: { entry: PairingEntry; sessions: SessionStatus[]; onPick: (id: string) => void }) {
  const foreground = sessions.find((s) => s.foreground);
  const known = entry.session === undefined || sessions.some((s) => s.id === entry.session);
  const chosen = sessions.find((s) => s.id === entry.session);
  // A narrow window shortens the chosen label; the whole of it shows on hover.
  const title =
    entry.session === undefined
      ? `Foreground session${foreground ? `: ${sessionName(foreground)}` : " (none open)"}`
      : chosen
        ? sessionName(chosen)
        : `${entry.session} (ended)`;
  return (
    <select
      aria-label={`Session for ${who(entry)}`}
      title={title}
      value={entry.session ?? ""}
      onChange={(e) => {
        const value = (e.currentTarget as HTMLSelectElement).value;
        if (value) onPick(value);
      }}
    >
      {entry.session === undefined && (
        <option value="">Foreground session{foreground ? `: ${sessionName(foreground)}` : " (none open)"}</option>
      )}
      {!known && <option value={entry.session}>{entry.session} (ended)</option>}
      {sessions.map((s) => (
        <option key={s.id} value={s.id}>
          {sessionName(s)}
        </option>
      ))}
    </select>
  );
}

/** The countdown turns to the warning colour for the code's last minute. */
const URGENT_MS = 60_000;

/** A pending request's code in large digits and the countdown to its expiry. */
export function CodeAndCountdown({ entry, now }: { entry: PairingEntry; now: number }) {
  const code = entry.code ?? "";
  const created = Date.parse(entry.createdAt);
  const expires = entry.expiresAt ? Date.parse(entry.expiresAt) : NaN;
  // Clamped to the code's lifetime, so a clock slightly behind the gateway's never shows more.
  const left = Math.min(expires - now, expires - created);
  const fraction = Number.isNaN(expires) ? 0 : Math.max(0, Math.min(1, left / (expires - created)));

  return (
    <div class="request-code">
      <span class="card-label" id={`code-${entry.id}`}>
        Code
      </span>
      <p class="code" data-testid="pairing-code" data-code={code} aria-labelledby={`code-${entry.id}`} aria-describedby={`code-digits-${entry.id}`}>
        {[...code].map((d, i) => (
          <span key={i} class="digit" aria-hidden="true">
            {d}
          </span>
        ))}
        <span id={`code-digits-${entry.id}`} class="sr-only">
          {[...code].join(" ")}
        </span>
      </p>
      {!Number.isNaN(expires) && (
        <div class="countdown" data-testid="pairing-countdown">
          <div class="bar" aria-hidden="true">
            <div class="bar-fill" data-urgent={String(left < URGENT_MS)} style={{ width: `${fraction * 100}%` }} />
          </div>
          <span role="timer" aria-label="Expires in">
            {left > 0 ? `expires in ${countdown(left)}` : "expired"}
          </span>
        </div>
      )}
    </div>
  );
}

function PendingRequest({ entry, sessions, now }: { entry: PairingEntry; sessions: SessionStatus[]; now: number }) {
  const [error, act] = useAction();
  const code = entry.code ?? "";

  return (
    <li class="request" aria-label={`Pairing request from ${who(entry)}`} data-pairing-id={entry.id}>
      <CodeAndCountdown entry={entry} now={now} />
      <dl class="facts">
        <dt>Origin</dt>
        <dd class="mono" data-testid="pairing-origin">{entry.origin ?? "none (not a browser page)"}</dd>
        <dt>Remote</dt>
        <dd class="mono">{entry.remote}</dd>
        {entry.name && (
          <>
            <dt>Name</dt>
            <dd>{entry.name}</dd>
          </>
        )}
        {entry.metadata && Object.keys(entry.metadata).length > 0 && (
          <>
            <dt>Metadata</dt>
            <dd class="mono">{shortJson(entry.metadata)}</dd>
          </>
        )}
        <dt>Requested</dt>
        <dd title={fullTime(entry.createdAt)}>{ago(entry.createdAt, now)}</dd>
      </dl>
      <div class="request-actions">
        <label class="field">
          <span>Session</span>
          <SessionPicker entry={entry} sessions={sessions} onPick={(session) => act(() => configure({ id: entry.id, session }))} />
        </label>
        <label class="check">
          <input
            type="checkbox"
            checked={entry.remember}
            onChange={(e) => act(() => configure({ id: entry.id, remember: (e.currentTarget as HTMLInputElement).checked }))}
          />
          Remember this provider across gateway restarts
        </label>
        <div class="push-right">
          <ConfirmButton
            label="Deny"
            ariaLabel={`Deny request ${code}`}
            question={`Deny ${who(entry)}?`}
            confirmLabel="Yes, deny"
            onConfirm={() => store.call("pairing.deny", { id: entry.id })}
          />
        </div>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
      </div>
    </li>
  );
}

function PairedRow({ entry, sessions, now }: { entry: PairingEntry; sessions: SessionStatus[]; now: number }) {
  const [error, act] = useAction();
  return (
    <tr data-pairing-id={entry.id}>
      <td>{entry.name ?? <span class="muted">unnamed</span>}</td>
      <td class="mono">{entry.origin ?? "none"}</td>
      <td class="mono">{entry.remote}</td>
      <td>
        <SessionPicker entry={entry} sessions={sessions} onPick={(session) => act(() => configure({ id: entry.id, session }))} />
      </td>
      <td>
        <input
          type="checkbox"
          aria-label={`Remember ${who(entry)} across restarts`}
          checked={entry.remember}
          onChange={(e) => act(() => configure({ id: entry.id, remember: (e.currentTarget as HTMLInputElement).checked }))}
        />
      </td>
      <td>
        <span class={`pill ${entry.connected ? "ok" : "muted"}`}>{entry.connected ? "connected" : "not connected"}</span>
      </td>
      <td title={fullTime(entry.createdAt)}>{ago(entry.createdAt, now)}</td>
      <td class="actions">
        <ConfirmButton
          label="Revoke"
          ariaLabel={`Revoke ${who(entry)}`}
          question="Revoke? Its connection closes and its token stops working."
          confirmLabel="Yes, revoke"
          onConfirm={() => store.call("pairing.revoke", { id: entry.id })}
        />
        {error && (
          <span class="error" role="alert">
            {error}
          </span>
        )}
      </td>
    </tr>
  );
}

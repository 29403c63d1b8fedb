import { useEffect } from "preact/hooks";
import type { Diagnostics as Data, Failure, LedgerState, LimitHits, OutboundQueue, ProviderStatus } from "../generated";
import { useNow, type PanelState } from "../store";
import { useMethod } from "../method";
import { ago, bytes, clock, fullTime } from "../format";
import { reportLedger } from "../ledger";

/**
 * Errors sent to providers by code, limits hit, connection states and recent failures,
 * live: `diagnostics.follow`, then a fresh `diagnostics` after each `diagnostics.changed`
 * (at most four a second, the gateway's pace) or `status.changed`.
 */
export function Diagnostics({ state }: { state: PanelState }) {
  const now = useNow(1000);
  // Followed while the page is open; asked again on each `diagnostics.changed` (at most four
  // a second, the gateway's pace) or `status.changed`.
  const got = useMethod("diagnostics", {}, { follow: "diagnostics", on: ["diagnostics.changed", "status.changed"] });
  const data: Data | null = got.data;
  const error = got.error?.message ?? null;
  useEffect(() => reportLedger(data?.ledger), [data]);

  if (!data) {
    return error ? (
      <p class="error" role="alert">
        {error}
      </p>
    ) : (
      <p class="muted">Loading…</p>
    );
  }
  const c = data.connections;
  const p = c.providers;
  const hit = data.limits.filter((l) => l.hits > 0);
  const totalErrors = data.errors.reduce((n, e) => n + e.count, 0);
  const names = new Map(state.status!.providers.map((x: ProviderStatus) => [x.id, x.name ?? x.id]));

  return (
    <>
      <p class="small muted">
        Counting since the gateway started, {ago(data.since, now)} ({fullTime(data.since)}).
      </p>
      <section aria-labelledby="conn-heading">
        <h2 id="conn-heading">Connections</h2>
        <div class="cards compact" data-testid="diag-connections">
          <Stat label="Provider sockets" value={`${p.open} / ${p.max}`} testid="providers-open" />
          <Stat label="Awaiting auth" value={p.awaitAuth} testid="await-auth" />
          <Stat label="Awaiting pairing" value={p.awaitPairing} testid="await-pairing" tone={p.awaitPairing > 0 ? "attention" : undefined} />
          <Stat label="Awaiting hello" value={p.awaitHello} testid="await-hello" />
          <Stat label="Bound" value={p.bound} testid="bound" />
          <Stat label="Unbound" value={p.unbound} testid="unbound" />
          <Stat
            label="Session hosts"
            value={`${c.sessionHosts.attached}`}
            hint={`${c.sessionHosts.detached} detached · ${c.sessionHosts.open} / ${c.sessionHosts.max} sockets`}
            testid="hosts"
          />
          <Stat label="Sessions" value={c.sessions} testid="sessions" />
          <Stat label="Control clients" value={`${c.controlClients.open} / ${c.controlClients.max}`} testid="control" />
          <Queued providers={p.queued} hosts={c.sessionHosts.queued} control={c.controlClients.queued} />
        </div>
      </section>

      <History ledger={data.ledger} />

      <div class="diag-columns">
        <section aria-labelledby="errors-heading">
          <h2 id="errors-heading">Errors sent to providers ({totalErrors})</h2>
          {data.errors.length === 0 ? (
            <p class="empty">No provider has been sent an error.</p>
          ) : (
            <div class="table-wrap">
              <table aria-label="Errors by code" data-testid="diag-errors">
                <thead>
                  <tr>
                    <th scope="col">Code</th>
                    <th scope="col" class="num">
                      Count
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {data.errors.map((e) => (
                    <tr key={e.code} data-code={e.code}>
                      <td class="mono">{e.code}</td>
                      <td class="num">{e.count}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </section>

        <section aria-labelledby="limits-heading">
          <h2 id="limits-heading">
            Limits hit ({hit.length} of {data.limits.length})
          </h2>
          {hit.length === 0 ? (
            <p class="empty">No limit has been hit.</p>
          ) : (
            <LimitTable label="Limits hit" limits={[...hit].sort((a, b) => b.hits - a.hits)} now={now} />
          )}
        </section>
      </div>

      <section aria-labelledby="failures-heading">
        <h2 id="failures-heading">
          Recent failures ({data.recentFailures.length}
          {data.recentFailures.length === data.failuresKept ? `, the newest ${data.failuresKept}` : ""})
        </h2>
        {data.recentFailures.length === 0 ? (
          <p class="empty">Nothing has failed.</p>
        ) : (
          <div class="table-wrap">
            <table aria-label="Recent failures, newest first" data-testid="diag-failures">
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Code</th>
                  <th scope="col">Message</th>
                  <th scope="col">Provider</th>
                  <th scope="col">Session</th>
                </tr>
              </thead>
              <tbody>
                {data.recentFailures.map((f, i) => (
                  <FailureRow key={`${f.at}-${i}`} f={f} names={names} />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <details class="all-limits">
        <summary>Every limit the gateway enforces ({data.limits.length})</summary>
        <LimitTable label="All limits" limits={data.limits} now={now} />
      </details>
    </>
  );
}

/** The ledger: durable (a database file) or memory-only with why, its queue and counters. */
function History({ ledger }: { ledger: LedgerState }) {
  return (
    <section aria-labelledby="history-heading">
      <h2 id="history-heading">History</h2>
      <div class="cards compact" data-testid="diag-history">
        <Stat
          label="History"
          value={ledger.durable ? "Durable" : "Memory only"}
          hint={ledger.durable ? "kept across restarts" : ledger.reason}
          tone={ledger.durable ? undefined : "attention"}
          testid="history-durable"
        />
        <Stat
          label="Queue"
          value={`${ledger.queueDepth} / ${ledger.queueCapacity}`}
          hint={`records waiting for the writer · ${bytes(ledger.queueBytes)} of ${bytes(ledger.queueBytesCapacity)}`}
          tone={
            ledger.queueDepth >= ledger.queueCapacity || ledger.queueBytes >= ledger.queueBytesCapacity
              ? "attention"
              : undefined
          }
          testid="history-queue"
        />
        <Stat label="Waits" value={ledger.waits} hint="producers that waited for room" testid="history-waits" />
        <Stat label="Written" value={ledger.written} hint="records since the gateway started" testid="history-written" />
        <Stat label="Size" value={bytes(ledger.bytes)} hint="on disk" testid="history-size" />
      </div>
      <p class="small muted breakable">
        Database: <span class="mono" data-testid="diag-history-path">{ledger.path}</span>
        {!ledger.durable && ledger.reason && <span class="error"> · not written: {ledger.reason}</span>}
      </p>
    </section>
  );
}

function LimitTable({ label, limits, now }: { label: string; limits: LimitHits[]; now: number }) {
  return (
    <div class="table-wrap">
      <table aria-label={label}>
        <thead>
          <tr>
            <th scope="col">Limit</th>
            <th scope="col" class="num">
              Hits
            </th>
            <th scope="col">Last</th>
            <th scope="col">What it is</th>
          </tr>
        </thead>
        <tbody>
          {limits.map((l) => (
            <tr key={l.id} data-limit={l.id} class={l.hits > 0 ? "hit" : undefined}>
              <td class="mono small">{l.id}</td>
              <td class="num">{l.hits > 0 ? <span class="pill attention">{l.hits}</span> : <span class="muted">0</span>}</td>
              <td class="nowrap" title={l.lastAt ? fullTime(l.lastAt) : undefined}>
                {l.lastAt ? ago(l.lastAt, now) : <span class="muted">never</span>}
              </td>
              <td class="small">{l.description}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function FailureRow({ f, names }: { f: Failure; names: Map<string, string> }) {
  return (
    <tr>
      <td class="mono small nowrap" title={fullTime(f.at)}>
        {clock(f.at)}
      </td>
      <td class="mono small">
        {f.code ?? <span class="pill warn">{f.limit}</span>}
        {f.replyTo && <div class="muted">to {f.replyTo}</div>}
      </td>
      <td class="small wrap">{f.message}</td>
      <td class="small">{f.provider ? <span title={f.provider}>{names.get(f.provider) ?? <span class="mono">{f.provider}</span>}</span> : <span class="muted">—</span>}</td>
      <td class="mono small">{f.session ?? <span class="muted">—</span>}</td>
    </tr>
  );
}

/** Frames written to no socket yet, over every kind: near zero unless a peer stops reading
 * (then it is disconnected at its queue's limit, and the slowConsumer limit counts it). */
function Queued(props: { providers: OutboundQueue; hosts: OutboundQueue; control: OutboundQueue }) {
  const all = [props.providers, props.hosts, props.control];
  const queued = all.reduce((n, q) => n + q.bytes, 0);
  const messages = all.reduce((n, q) => n + q.messages, 0);
  const peak = Math.max(...all.map((q) => q.peakBytes));
  // One socket's limit; every kind has the same (`GatewayConfig::outbound`).
  const limit = props.providers.maxBytes;
  return (
    <Stat
      label="Queued to peers"
      value={bytes(queued)}
      hint={`${messages} messages · peak ${bytes(peak)} · ${bytes(limit)} a socket at most`}
      tone={queued > limit / 2 ? "attention" : undefined}
      testid="queued"
    />
  );
}

function Stat(props: { label: string; value: number | string; hint?: string; tone?: "attention"; testid: string }) {
  return (
    <div class={`card${props.tone ? ` ${props.tone}` : ""}`}>
      <span class="card-label">{props.label}</span>
      <span class="card-value" data-testid={`diag-${props.testid}`}>
        {props.value}
      </span>
      {props.hint && <span class="card-hint">{props.hint}</span>}
    </div>
  );
}

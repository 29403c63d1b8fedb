// What the panel knows about the gateway's ledger (its history: stream events, traces,
// sessions and providers as they came and went), shared by the pages that browse it.
//
// - `useLedgerState`: whether history is durable (the panel's notice when it is not), from
//   `diagnostics` once per connection and from every ledger answer a page receives.
// - `useKnownSessions`: the sessions the pickers offer: live ones, the ledger's records
//   (ended ones with when and why), and sessions seen in the newest stored events.
// - Labels of live sessions are remembered for the tab's life, so an ended session the
//   ledger has no record of still shows the label the panel saw.

import { useEffect, useMemo, useState } from "preact/hooks";
import type { LedgerSessions, LedgerState, ProviderRecord, SessionRecord, SessionStatus } from "./generated";
import { useMethod } from "./method";

let ledgerState: LedgerState | null = null;
const stateListeners = new Set<(s: LedgerState | null) => void>();

/** Every ledger answer (`events.list`, `traces.list`, `diagnostics`…) reports its state here. */
export function reportLedger(state: LedgerState | null | undefined) {
  if (!state) return;
  const same = ledgerState && ledgerState.durable === state.durable && ledgerState.reason === state.reason;
  ledgerState = state;
  if (!same) for (const l of stateListeners) l(state);
}

/** The ledger's state as last reported: asked for (`diagnostics`) once per connection. */
export function useLedgerState(): LedgerState | null {
  const [current, setCurrent] = useState(ledgerState);
  useEffect(() => {
    stateListeners.add(setCurrent);
    return () => void stateListeners.delete(setCurrent);
  }, []);
  const diagnostics = useMethod("diagnostics", {}).data;
  useEffect(() => reportLedger(diagnostics?.ledger), [diagnostics]);
  return current;
}

const labels = new Map<string, string>();

/** Remembers the labels of live sessions (an ended one keeps the label the panel saw). */
export function rememberLabels(sessions: SessionStatus[]) {
  for (const s of sessions) if (s.label) labels.set(s.id, s.label);
}

/** A session as the pickers and lists show it. */
export interface KnownSession {
  id: string;
  label?: string;
  cwd?: string;
  live: boolean;
  startedAt?: string;
  endedAt?: string;
  endReason?: string;
}

/** Live sessions first (as the gateway lists them), then the others, newest first. */
export function knownSessions(live: SessionStatus[], records: SessionRecord[], seen: { id: string; label?: string }[]): KnownSession[] {
  rememberLabels(live);
  const out: KnownSession[] = live.map((s) => {
    const r = records.find((x) => x.id === s.id);
    return { id: s.id, label: s.label, cwd: s.cwd, live: true, startedAt: r?.startedAt };
  });
  const have = new Set(out.map((s) => s.id));
  for (const r of records) {
    if (have.has(r.id)) continue;
    have.add(r.id);
    out.push({ id: r.id, label: r.label ?? labels.get(r.id), cwd: r.cwd, live: false, startedAt: r.startedAt, endedAt: r.endedAt, endReason: r.endReason });
  }
  for (const s of seen) {
    if (have.has(s.id)) continue;
    have.add(s.id);
    out.push({ id: s.id, label: s.label ?? labels.get(s.id), live: false });
  }
  return out;
}

/** `label (id)`, or the id; `· ended` for a session that is not live. */
export function knownName(s: KnownSession): string {
  const name = s.label ? `${s.label} (${s.id})` : s.id;
  return s.live ? name : `${name} · ended`;
}

/** The label the panel knows for a session id, if any. */
export function labelOf(id: string, sessions: KnownSession[]): string | undefined {
  return sessions.find((s) => s.id === id)?.label ?? labels.get(id);
}

/** How long after a `status.changed` `ledger.sessions` is asked again: the ledger records a
 * session or provider a moment after the change, and a burst ends in one call. */
const SETTLE_MS = 400;

/**
 * `ledger.sessions` (and, with `withSeen`, the sessions of the newest 1000 stored events),
 * asked again after sessions or providers change (`status.changed`, settled).
 */
export function useLedgerSessions(withSeen = false): { records: LedgerSessions | null; seen: { id: string; label?: string }[] } {
  const options = { on: ["status.changed"], settleMs: SETTLE_MS } as const;
  const records = useMethod("ledger.sessions", {}, options).data;
  useEffect(() => reportLedger(records?.ledger), [records]);
  const page = useMethod("events.list", { limit: 1000 }, { ...options, enabled: withSeen }).data;
  const seen = useMemo(() => {
    if (!page) return [];
    const ids = new Map<string, string | undefined>();
    for (const e of page.events) if (!ids.has(e.sessionId)) ids.set(e.sessionId, e.sessionLabel);
    return [...ids].map(([id, label]) => ({ id, label }));
  }, [page]);
  return { records, seen };
}

/** Ended provider connections, newest first (those the gateway no longer lists). */
export function endedProviders(records: ProviderRecord[], liveIds: Set<string>): ProviderRecord[] {
  return records.filter((p) => !liveIds.has(p.id));
}

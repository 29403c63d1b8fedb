// The panel's view of the gateway: one snapshot, kept current by control events.
//
// Rules (docs/control-protocol.md, "Events"):
// - `auth` returns a snapshot whose `seq` is the last event number before it; each event
//   must be previous+1, otherwise events were lost and a fresh `snapshot` is fetched. A
//   `resync` event means the same.
// - `pairing.changed` replaces (or adds) one entry, `pairing.removed` drops one: both are
//   idempotent, so an event that raced with a snapshot is harmless.
// - `status.changed` comes in bursts: one `status` call after a burst is enough, so calls
//   are coalesced (at most one in flight, one more queued).
// - The opt-in topics (`diagnostics.follow`, `logs.follow`, `streams.follow`) belong to
//   the pages that show them: every event is also handed to `subscribeEvents` listeners, and
//   `generation` changes with each new connection, so a page follows again after a
//   reconnect (a connection's follows end with it).
// Nothing here polls: the only timers are the burst coalescing, the reconnect backoff and
// the clock that redraws relative times (`useNow`). Pages load what they show with
// `useMethod` (method.ts), which asks again on events, never on a timer.

import { useEffect, useRef, useState } from "preact/hooks";
import type { ControlEvent, FileLocations, GatewayStatus, PairingEntry, Snapshot } from "./generated";
import {
  connect,
  forgetToken,
  loginFromLocation,
  RpcError,
  storedToken,
  type CloseReason,
  type Connection,
  type Method,
  type Params,
  type Result,
} from "./transport";

export type Phase =
  | { kind: "starting" }
  | { kind: "login"; message?: string }
  | { kind: "connecting"; attempt: number; message?: string }
  | { kind: "live" };

export interface PanelState {
  phase: Phase;
  status: GatewayStatus | null;
  /** `performance.now()` when `status` arrived: uptime = status.uptimeMs + (now - this). */
  statusAt: number;
  /** Pending requests first, then paired providers; newest first within each. */
  pairings: PairingEntry[];
  /** Where the gateway keeps its files (from the snapshot). */
  files: FileLocations | null;
  /** +1 for every new authenticated connection (follows must be made again). */
  generation: number;
}

type Listener = (state: PanelState) => void;
type EventListener = (event: ControlEvent) => void;

/** Delay before reconnect attempt n (1-based): 0.5 s doubling to 8 s. */
const backoff = (attempt: number) => Math.min(8000, 500 * 2 ** Math.min(attempt - 1, 4));
/** How long a burst of `status.changed` may grow before `status` is called. */
const STATUS_COALESCE_MS = 60;

function sortPairings(entries: PairingEntry[]): PairingEntry[] {
  const rank = (e: PairingEntry) => (e.state === "pending" ? 0 : 1);
  return [...entries].sort((a, b) => rank(a) - rank(b) || b.createdAt.localeCompare(a.createdAt));
}

class Store {
  private state: PanelState = { phase: { kind: "starting" }, status: null, statusAt: 0, pairings: [], files: null, generation: 0 };
  private listeners = new Set<Listener>();
  private eventListeners = new Set<EventListener>();
  private connection: Connection | null = null;
  private lastSeq = 0;
  private snapshotInFlight = false;
  private statusTimer: ReturnType<typeof setTimeout> | null = null;
  private statusInFlight = false;
  private statusAgain = false;
  private reconnectTimer: ReturnType<typeof setTimeout> | null = null;

  get current(): PanelState {
    return this.state;
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Every control event, after the store applied it (pages follow their own topics). */
  subscribeEvents(listener: EventListener): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  private set(patch: Partial<PanelState>) {
    this.state = { ...this.state, ...patch };
    for (const listener of this.listeners) listener(this.state);
  }

  /** Logs in from a `#login=` link if there is one, then connects with the stored token. */
  async start() {
    // A new link pasted into this tab changes only the fragment: no reload, so listen.
    window.addEventListener("hashchange", () => {
      if (/(?:^#|&)login=/.test(location.hash)) void this.login();
    });
    await this.login();
  }

  private async login() {
    const loginError = await loginFromLocation();
    // A bad link does not end a working login: with a token kept from before, connect with it.
    if (!storedToken()) {
      this.set({ phase: { kind: "login", message: loginError ?? undefined } });
      return;
    }
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    this.connection?.close();
    this.connection = null;
    void this.open(1);
  }

  /** Sends one request on the live connection. */
  call<M extends Method>(method: M, params: Params<M>): Promise<Result<M>> {
    if (!this.connection) return Promise.reject(new RpcError("DISCONNECTED", "Not connected to the gateway"));
    return this.connection.rpc(method, params);
  }

  private async open(attempt: number) {
    const token = storedToken();
    if (!token) {
      this.set({ phase: { kind: "login" } });
      return;
    }
    if (this.state.phase.kind !== "connecting") this.set({ phase: { kind: "connecting", attempt } });
    try {
      const { connection, snapshot } = await connect(token, {
        onEvent: (seq, event) => this.onEvent(seq, event),
        onClose: (reason) => this.onClose(reason),
      });
      this.connection = connection;
      this.applySnapshot(snapshot);
      this.set({ phase: { kind: "live" }, generation: this.state.generation + 1 });
    } catch (e) {
      if (e instanceof RpcError && e.code === "AUTH_FAILED") {
        forgetToken();
        this.set({
          phase: {
            kind: "login",
            message: "The gateway no longer accepts this panel's token (it was restarted, or the token was replaced).",
          },
        });
        return;
      }
      this.retry(attempt + 1, e instanceof Error ? e.message : String(e));
    }
  }

  private retry(attempt: number, message: string) {
    this.connection = null;
    this.set({ phase: { kind: "connecting", attempt, message } });
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      void this.open(attempt);
    }, backoff(attempt));
  }

  /** The live connection dropped: reconnect; a restarted gateway refuses the token, and `open` then asks for a login. */
  private onClose(reason: CloseReason) {
    this.connection = null;
    this.retry(1, reason.message);
  }

  private applySnapshot(snapshot: Snapshot) {
    this.lastSeq = snapshot.seq;
    this.set({
      status: snapshot.status,
      statusAt: performance.now(),
      pairings: sortPairings(snapshot.pairings),
      files: snapshot.files,
    });
  }

  private onEvent(seq: number, event: ControlEvent) {
    const gap = seq !== this.lastSeq + 1;
    this.lastSeq = seq;
    // While a snapshot is on its way, numbering restarts from its `seq`: no gap checks.
    if ((gap && !this.snapshotInFlight) || event.kind === "resync") {
      void this.resync();
      if (event.kind === "resync") return;
    }
    switch (event.kind) {
      case "pairing.changed": {
        const others = this.state.pairings.filter((p) => p.id !== event.pairing.id);
        this.set({ pairings: sortPairings([...others, event.pairing]) });
        break;
      }
      case "pairing.removed":
        if (this.state.pairings.some((p) => p.id === event.id)) {
          this.set({ pairings: this.state.pairings.filter((p) => p.id !== event.id) });
        }
        break;
      case "status.changed":
        this.refreshStatus();
        break;
    }
    for (const listener of this.eventListeners) listener(event);
  }

  private async resync() {
    if (this.snapshotInFlight) return;
    this.snapshotInFlight = true;
    try {
      this.applySnapshot(await this.call("snapshot", {}));
    } catch {
      /* the connection closed: onClose reconnects and the new auth brings a snapshot */
    } finally {
      this.snapshotInFlight = false;
    }
  }

  /** Coalesces a burst of `status.changed` into one `status` call (plus one more if needed). */
  private refreshStatus() {
    if (this.statusInFlight) {
      this.statusAgain = true;
      return;
    }
    if (this.statusTimer) return;
    this.statusTimer = setTimeout(async () => {
      this.statusTimer = null;
      this.statusInFlight = true;
      try {
        const status = await this.call("status", {});
        this.set({ status, statusAt: performance.now() });
      } catch {
        /* disconnected: the reconnect's snapshot has the status */
      } finally {
        this.statusInFlight = false;
        if (this.statusAgain) {
          this.statusAgain = false;
          this.refreshStatus();
        }
      }
    }, STATUS_COALESCE_MS);
  }

  /** Applies a pairing the gateway returned (e.g. from `pairing.configure`) before its event arrives. */
  upsertPairing(entry: PairingEntry) {
    const others = this.state.pairings.filter((p) => p.id !== entry.id);
    this.set({ pairings: sortPairings([...others, entry]) });
  }
}

export const store = new Store();

/** The current panel state; re-renders the component on every change. */
export function usePanel(): PanelState {
  const [state, setState] = useState(store.current);
  useEffect(() => {
    setState(store.current);
    return store.subscribe(setState);
  }, []);
  return state;
}

/** Calls `handler` with every control event while the component is mounted. */
export function useControlEvents(handler: (event: ControlEvent) => void): void {
  const latest = useRef(handler);
  latest.current = handler;
  useEffect(() => store.subscribeEvents((event) => latest.current(event)), []);
}

/** One clock per period, shared by every component showing relative times at that period. */
const clocks = new Map<number, { timer: ReturnType<typeof setInterval>; listeners: Set<(now: number) => void> }>();

/**
 * `Date.now()`, refreshed every `ms` while the component is mounted (countdowns, uptime,
 * "5 s ago"). A redraw of times already shown, not a poll: it asks the gateway nothing, and
 * all the components on a page share one timer per period. It is the panel's only
 * setInterval, and must stay free of gateway calls (tests/e2e/no-polling.test.mjs checks both).
 *
 * With `select`, `select(Date.now())` instead, and the component redraws only when that
 * changes (e.g. the time bucket `now` falls in: the activity chart moves on at a bucket's
 * end, not every second).
 */
export function useNow(ms = 1000, select: (now: number) => number = (now) => now): number {
  const pick = useRef(select);
  pick.current = select;
  // The value last drawn: a tick that selects the same one draws nothing.
  const drawn = useRef(Number.NaN);
  const [, redraw] = useState(0);
  useEffect(() => {
    let clock = clocks.get(ms);
    if (!clock) {
      const listeners = new Set<(now: number) => void>();
      const timer = setInterval(() => {
        const t = Date.now();
        for (const l of listeners) l(t);
      }, ms);
      clock = { timer, listeners };
      clocks.set(ms, clock);
    }
    const listener = (t: number) => {
      if (!Object.is(pick.current(t), drawn.current)) redraw((n) => n + 1);
    };
    clock.listeners.add(listener);
    const held = clock;
    return () => {
      held.listeners.delete(listener);
      if (held.listeners.size === 0) {
        clearInterval(held.timer);
        clocks.delete(ms);
      }
    };
  }, [ms]);
  const now = select(Date.now());
  drawn.current = now;
  return now;
}

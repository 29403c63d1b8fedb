// The one way a page shows a control method's answer: `useMethod(method, params, options)`.
//
// It calls the method once connected, again after every new connection (a reconnect: the
// answer may be stale and the old connection's follows are gone), when its params change,
// and when a control event says the answer changed. Never on a timer.
//
// - `on`: the event kinds that mean "call again" (`emitters.changed`, `status.changed`, …).
//   Calls are coalesced: one in flight at a time and at most one more queued behind it,
//   however many events arrive (the gateway already sends its `*.changed` at most four a
//   second).
// - `follow`: the opt-in topic that brings those events (`diagnostics`, `emitters`,
//   `traces`). It is followed before the first call (so no change between the two is
//   missed), once per connection however many components want it, and `unfollow`ed when the
//   last of them goes.
// - `watch`: values from elsewhere (e.g. a list's row) whose change means "call again".
// - `settleMs`: wait this long after an event before calling, for a burst to end or a write
//   to land (the ledger records sessions a little after `status.changed`).
// - `enabled: false` calls nothing (e.g. no session selected).
//
// Method names, params and results come from the generated `ControlMethods` map, so a call
// is typed end to end. An answer equal to the one shown keeps the same object, so nothing
// redraws; the answer shown always belongs to the current params.

import { useEffect, useRef, useState } from "preact/hooks";
import type { ControlEvent } from "./generated";
import { store, useControlEvents } from "./store";
import type { Method, Params, Result } from "./transport";

/** Topics whose events only carry "call again" (the `*.follow` methods without params). */
export type Followable = "diagnostics" | "emitters" | "traces";

export interface MethodOptions {
  on?: readonly ControlEvent["kind"][];
  follow?: Followable;
  watch?: readonly unknown[];
  settleMs?: number;
  enabled?: boolean;
}

export interface MethodState<R> {
  /** The newest answer for the current params; null before the first. */
  data: R | null;
  /** Why the last call failed (the shown answer, if any, is kept). */
  error: Error | null;
  /** A call for the current params is on its way and none has answered yet. */
  loading: boolean;
  /** Calls again now (after an action whose effect the page wants to see at once). */
  refresh(): void;
}

const same = (a: unknown, b: unknown) => a === b || JSON.stringify(a) === JSON.stringify(b);

// ---- The connection: live or not, and which one ----------------------------------------

interface Connection {
  live: boolean;
  generation: number;
}

function connectionNow(): Connection {
  const s = store.current;
  return { live: s.phase.kind === "live", generation: s.generation };
}

/** Whether the panel is connected and which connection it is; re-renders only when that changes. */
function useConnection(): Connection {
  const [c, setC] = useState(connectionNow);
  useEffect(() => {
    const sync = () => setC((prev) => {
      const next = connectionNow();
      return prev.live === next.live && prev.generation === next.generation ? prev : next;
    });
    sync();
    return store.subscribe(sync);
  }, []);
  return c;
}

// ---- Follows, counted per topic and connection -----------------------------------------

interface Follow {
  generation: number;
  count: number;
  /** Resolves once the follow is answered (failed or not: the first call then runs anyway). */
  ready: Promise<void>;
}

const follows = new Map<Followable, Follow>();

function followCall(topic: Followable): Promise<unknown> {
  switch (topic) {
    case "diagnostics":
      return store.call("diagnostics.follow", {});
    case "emitters":
      return store.call("emitters.follow", {});
    case "traces":
      return store.call("traces.follow", {});
  }
}

/** Follows `topic` on connection `generation` (once for every holder); the release unfollows after the last. */
function acquire(topic: Followable, generation: number): { ready: Promise<void>; release: () => void } {
  let f = follows.get(topic);
  if (!f || f.generation !== generation) {
    // A new connection has no follows: the old count died with the old one.
    f = {
      generation,
      count: 0,
      ready: followCall(topic).then(
        () => {},
        () => {},
      ),
    };
    follows.set(topic, f);
  }
  f.count++;
  const held = f;
  let released = false;
  return {
    ready: held.ready,
    release: () => {
      if (released) return;
      released = true;
      held.count--;
      if (held.count > 0 || follows.get(topic) !== held) return;
      follows.delete(topic);
      // Requests are answered in order, so a follow sent after this unfollow wins.
      if (held.generation === store.current.generation) store.call("unfollow", { topic }).catch(() => {});
    },
  };
}

// ---- Coalesced calls -------------------------------------------------------------------

/** At most one call in flight and one more queued; optionally after a settling delay. */
class Caller {
  private inFlight = false;
  private again = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private stopped = false;

  constructor(
    private readonly call: () => Promise<void>,
    private readonly settleMs: number,
  ) {}

  /** Calls now, or after the call in flight (once for any number of requests). */
  request(settle: boolean) {
    if (this.stopped) return;
    if (this.inFlight) {
      this.again = true;
      return;
    }
    if (this.timer) return;
    if (settle && this.settleMs > 0) {
      this.timer = setTimeout(() => {
        this.timer = null;
        void this.fire();
      }, this.settleMs);
    } else {
      void this.fire();
    }
  }

  stop() {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private async fire() {
    this.inFlight = true;
    try {
      await this.call();
    } finally {
      this.inFlight = false;
      if (this.again) {
        this.again = false;
        this.request(false);
      }
    }
  }
}

// ---- The hook --------------------------------------------------------------------------

interface Shown<R> {
  key: string;
  data: R | null;
  error: Error | null;
  answered: boolean;
}

/** `method(params)`'s answer, kept current by reconnects, `on` events and `watch` changes. */
export function useMethod<M extends Method>(method: M, params: Params<M>, options: MethodOptions = {}): MethodState<Result<M>> {
  const { live, generation } = useConnection();
  const enabled = options.enabled ?? true;
  const key = JSON.stringify([method, params]);
  const [shown, setShown] = useState<Shown<Result<M>>>({ key, data: null, error: null, answered: false });
  const caller = useRef<Caller | null>(null);
  const on = useRef(options.on);
  on.current = options.on;

  // The topic, held while mounted and connected: not dropped and made again when only the
  // params change (this effect runs before the one below, so `ready` is set for it).
  const followed = useRef<Promise<void> | null>(null);
  useEffect(() => {
    if (!live || !options.follow) return;
    const f = acquire(options.follow, generation);
    followed.current = f.ready;
    return () => {
      followed.current = null;
      f.release();
    };
  }, [live, generation, options.follow]);

  useEffect(() => {
    if (!live || !enabled) return;
    let current = true;
    const call = async () => {
      try {
        const data = await store.call(method, params);
        if (!current) return;
        setShown((prev) => {
          const base = prev.key === key ? prev : null;
          if (base && base.answered && !base.error && same(base.data, data)) return base;
          return { key, data: base && same(base.data, data) ? base.data : data, error: null, answered: true };
        });
      } catch (e) {
        if (!current) return;
        const error = e instanceof Error ? e : new Error(String(e));
        setShown((prev) => ({ key, data: prev.key === key ? prev.data : null, error, answered: true }));
      }
    };
    const c = new Caller(call, options.settleMs ?? 0);
    caller.current = c;
    void (followed.current ?? Promise.resolve()).then(() => current && c.request(false));
    return () => {
      current = false;
      c.stop();
      if (caller.current === c) caller.current = null;
    };
    // `params` is in `key`.
  }, [key, live, generation, enabled, options.follow, options.settleMs]);

  // Values from elsewhere that say the answer changed (not on the first render: the
  // effect above makes the first call).
  const watchKey = JSON.stringify(options.watch ?? null);
  const watched = useRef(watchKey);
  useEffect(() => {
    if (watched.current === watchKey) return;
    watched.current = watchKey;
    caller.current?.request(false);
  }, [watchKey]);

  useControlEvents((event) => {
    if (on.current?.includes(event.kind)) caller.current?.request(true);
  });

  const mine = shown.key === key;
  return {
    data: mine ? shown.data : null,
    error: mine ? shown.error : null,
    loading: live && enabled && !(mine && shown.answered),
    refresh: () => caller.current?.request(false),
  };
}

/** `value`, once it has stayed the same for `ms` (at once when `ms` is 0). */
export function useSettled<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    if (ms <= 0) {
      setSettled(value);
      return;
    }
    const t = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(t);
  }, [JSON.stringify(value), ms]);
  return ms <= 0 ? value : settled;
}

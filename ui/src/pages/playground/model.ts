// The tool playground's state: the sessions this panel holds, the one in use, and the recent
// calls with their progress. It lives as long as the tab (not the page component), so
// leaving the page and coming back keeps the history; nothing is persisted.
//
// Sessions are held by the control connection (`playground.open`): when it is replaced
// (a reconnect), the gateway has released them, so they are forgotten here too.

import { useEffect, useState } from "preact/hooks";
import type { ControlEvent, PlaygroundCallError, PlaygroundSession } from "../../generated";
import { store } from "../../store";
import { RpcError } from "../../transport";
import type { Json } from "./schema";

/** Calls kept in the history; older ones are dropped. */
export const MAX_RECENT_CALLS = 50;

export interface CallEntry {
  callId: string;
  sessionId: string;
  tool: string;
  args: Json;
  state: "running" | "ok" | "error";
  progress: string[];
  durationMs?: number;
  data?: Json;
  error?: PlaygroundCallError;
  context?: string;
  /** The call's trace in the history (`#/traces/<id>`). */
  traceId?: string;
}

export interface PlaygroundState {
  held: PlaygroundSession[];
  /** The session whose tools are shown. */
  current: string | null;
  /** Newest first. */
  calls: CallEntry[];
  /** Why the held sessions were forgotten (a reconnect), until the next open. */
  notice: string | null;
}

type Listener = (state: PlaygroundState) => void;

class Playground {
  private state: PlaygroundState = { held: [], current: null, calls: [], notice: null };
  private listeners = new Set<Listener>();
  private generation = store.current.generation;
  private nextCall = 1;

  constructor() {
    store.subscribe((panel) => {
      if (panel.generation === this.generation) return;
      this.generation = panel.generation;
      if (this.state.held.length > 0) {
        this.set({
          held: [],
          current: null,
          notice: "The connection to the gateway was renewed, which released the playground's sessions. Open one again.",
        });
      }
    });
    store.subscribeEvents((event) => this.onEvent(event));
  }

  get current(): PlaygroundState {
    return this.state;
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private set(patch: Partial<PlaygroundState>) {
    this.state = { ...this.state, ...patch };
    for (const l of this.listeners) l(this.state);
  }

  /** Opens (registers) or joins the session `name`; rejects with an `RpcError`. */
  async open(name: string, cwd?: string) {
    const session = await store.call("playground.open", cwd ? { name, cwd } : { name });
    const others = this.state.held.filter((h) => h.sessionId !== session.sessionId);
    this.set({ held: [...others, session], current: session.sessionId, notice: null });
  }

  async close(sessionId: string) {
    try {
      await store.call("playground.close", { sessionId });
    } finally {
      const held = this.state.held.filter((h) => h.sessionId !== sessionId);
      const current = this.state.current === sessionId ? (held[held.length - 1]?.sessionId ?? null) : this.state.current;
      this.set({ held, current });
    }
  }

  select(sessionId: string) {
    this.set({ current: sessionId });
  }

  /** Calls `tool`; the entry is updated as progress and the outcome arrive. */
  async call(sessionId: string, tool: string, args: { [key: string]: Json }) {
    const callId = `pg-${this.nextCall++}`;
    const started = performance.now();
    this.set({
      calls: [{ callId, sessionId, tool, args, state: "running" as const, progress: [] }, ...this.state.calls].slice(0, MAX_RECENT_CALLS),
    });
    try {
      const r = await store.call("playground.call", { callId, sessionId, tool, args });
      this.update(callId, {
        state: r.error ? "error" : "ok",
        durationMs: r.durationMs,
        data: r.data as Json | undefined,
        error: r.error,
        context: r.context,
        traceId: r.traceId,
      });
    } catch (e) {
      // The request itself was refused (unknown session or tool, a dropped connection).
      const error = e instanceof RpcError ? { code: e.code, message: e.message } : { code: "INTERNAL", message: String(e) };
      this.update(callId, { state: "error", error, durationMs: Math.round(performance.now() - started) });
    }
  }

  async cancel(callId: string) {
    await store.call("playground.cancel", { callId });
  }

  private update(callId: string, patch: Partial<CallEntry>) {
    this.set({ calls: this.state.calls.map((c) => (c.callId === callId ? { ...c, ...patch } : c)) });
  }

  private onEvent(event: ControlEvent) {
    if (event.kind !== "playground.progress") return;
    const entry = this.state.calls.find((c) => c.callId === event.callId);
    if (entry) this.update(event.callId, { progress: [...entry.progress, event.message] });
  }
}

export const playground = new Playground();

export function usePlayground(): PlaygroundState {
  const [state, setState] = useState(playground.current);
  useEffect(() => {
    setState(playground.current);
    return playground.subscribe(setState);
  }, []);
  return state;
}

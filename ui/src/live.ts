// A list that grows live (stream entries, log records) and can be paused.
//
// Items arrive one by one, possibly thousands a second; rendering on each would stall the
// page. They are batched: at most one update every FLUSH_MS. While paused, arrivals are
// held (and counted) and the shown list stays still; resuming adds them. The list keeps
// the newest `max` items, newest first.

import { useEffect, useRef, useState } from "preact/hooks";

const FLUSH_MS = 50;

export class LiveList<T> {
  /** Newest first. A new array after every change, so it can be a memo dependency. */
  items: readonly T[] = [];
  paused = false;
  /** Items that arrived while paused (shown when resumed). */
  waiting = 0;
  private incoming: T[] = [];
  private held: T[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly max: number,
    private readonly changed: () => void,
  ) {}

  /** Adds one item (the newest). */
  push(item: T) {
    if (this.paused) {
      this.held.push(item);
      if (this.held.length > this.max) this.held.shift();
      this.waiting++;
    } else {
      this.incoming.push(item);
    }
    this.schedule();
  }

  /** Replaces everything with `items` (newest first), e.g. a fresh history. */
  reset(items: readonly T[]) {
    this.incoming = [];
    this.held = [];
    this.waiting = 0;
    this.items = items.slice(0, this.max);
    this.changed();
  }

  /** Adds older items after the oldest shown (a page of history), up to `max` in all. */
  append(items: readonly T[]) {
    if (items.length === 0) return;
    this.items = this.items.concat(items).slice(0, this.max);
    this.changed();
  }

  /** Shows items that were changed in place. */
  touch() {
    this.items = [...this.items];
    this.changed();
  }

  /** Pauses (arrivals wait) or resumes (they are added). */
  pause(on: boolean) {
    if (on === this.paused) return;
    this.paused = on;
    if (!on) {
      this.incoming.push(...this.held);
      this.held = [];
      this.waiting = 0;
      this.flush();
    } else {
      this.changed();
    }
  }

  dispose() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule() {
    if (!this.timer) this.timer = setTimeout(() => this.flush(), FLUSH_MS);
  }

  private flush() {
    this.dispose();
    if (this.incoming.length > 0) {
      const batch = this.incoming.reverse();
      this.incoming = [];
      const next = batch.length >= this.max ? batch.slice(0, this.max) : batch.concat(this.items.slice(0, this.max - batch.length));
      this.items = next;
    }
    this.changed();
  }
}

/** A `LiveList` that re-renders the component when it changes. */
export function useLiveList<T>(max: number): LiveList<T> {
  const [, setTick] = useState(0);
  const list = useRef<LiveList<T> | null>(null);
  if (!list.current) list.current = new LiveList<T>(max, () => setTick((t) => t + 1));
  useEffect(() => () => list.current?.dispose(), []);
  return list.current;
}

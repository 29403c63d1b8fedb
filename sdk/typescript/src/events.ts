/**
 * A tiny EventEmitter: the same API in Node and in the browser without importing `node:events`
 * (the browser build must not depend on Node built-ins).
 */
export type Listener = (...args: any[]) => void;

export class Emitter {
  private listeners = new Map<string, Listener[]>();

  on(event: string, listener: Listener): this {
    const list = this.listeners.get(event) ?? [];
    list.push(listener);
    this.listeners.set(event, list);
    return this;
  }

  once(event: string, listener: Listener): this {
    const wrapped: Listener = (...args) => {
      this.off(event, wrapped);
      listener(...args);
    };
    return this.on(event, wrapped);
  }

  off(event: string, listener: Listener): this {
    const list = this.listeners.get(event);
    if (list) this.listeners.set(event, list.filter((l) => l !== listener));
    return this;
  }

  /** Calls each listener; a listener that throws is reported on `console.error`, never to the emitter's caller (the protocol loop). */
  emit(event: string, ...args: unknown[]): boolean {
    const list = this.listeners.get(event);
    if (!list || list.length === 0) return false;
    for (const l of [...list]) {
      try {
        l(...args);
      } catch (e) {
        console.error(`tap-provider: a '${event}' listener threw:`, e);
      }
    }
    return true;
  }

  listenerCount(event: string): number {
    return this.listeners.get(event)?.length ?? 0;
  }
}

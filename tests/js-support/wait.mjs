// Waiting with a deadline instead of sleeping: the JS test kit's one `waitFor`, used by the
// panel (ui/tests/e2e), desktop (tests/desktop), Copilot (tests/copilot) and TypeScript SDK
// (sdk/typescript/test) suites. Nothing in the kit sleeps to wait for readiness.

/** How long a wait lasts unless the caller says otherwise (a loaded CI machine is slow). */
export const WAIT_MS = 20000;
/** How often a condition is checked while waiting. */
export const POLL_MS = 50;

/**
 * Thrown by a `waitFor` check when what it waits for can no longer happen (the process that
 * was to do it exited): the wait fails at once instead of at its deadline. Any other error a
 * check throws counts as "not yet" (a file not written yet, an element not there yet).
 */
export class GiveUp extends Error {}

/**
 * Polls `check` (sync or async) until it returns a truthy value, and resolves with it; throws
 * naming `what` (and the check's last error) after `timeout` ms.
 */
export async function waitFor(check, what, timeout = WAIT_MS, every = POLL_MS) {
  const deadline = Date.now() + timeout;
  let lastError;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (e) {
      if (e instanceof GiveUp) throw e;
      lastError = e;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeout} ms waiting for ${what}${lastError ? ` (last error: ${lastError.message})` : ""}`);
    }
    await new Promise((r) => setTimeout(r, every));
  }
}

/** Resolves with the first argument of the next `event` of `emitter` whose arguments pass `pred`; rejects after `timeout` ms. */
export function nextEvent(emitter, event, pred = () => true, timeout = WAIT_MS) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      emitter.off(event, on);
      reject(new Error(`timed out after ${timeout} ms waiting for '${event}'`));
    }, timeout);
    const on = (...args) => {
      if (pred(...args)) {
        clearTimeout(timer);
        emitter.off(event, on);
        resolve(args[0]);
      }
    };
    emitter.on(event, on);
  });
}

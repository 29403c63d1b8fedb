// Limits and timeouts of the extension, named once.

/** How long the first join waits for a project's tools (tap.config.json) before joining without them. */
export const FIRST_TOOLS_WAIT_MS = 5000;
/** Bound on reaching the gateway (socket, auth, register) before the first join. */
export const CONNECT_TIMEOUT_MS = 3000;
/** Reconnect backoff: doubles from the first value up to the second while the gateway is away. */
export const RECONNECT_MIN_MS = 250;
export const RECONNECT_MAX_MS = 5000;
/** Tool-set changes closer together than this cause one reload. */
export const RELOAD_DEBOUNCE_MS = 300;
/** The gateway answers a precheck within about 5 s (its gate deadline); a little more here. */
export const PRECHECK_TIMEOUT_MS = 6000;
/** A callback transform may take 2 s per provider; prompts wait at most this long. */
export const PROMPT_APPLY_TIMEOUT_MS = 8000;
/** On exit, how long to wait for the gateway to confirm `session.end`. */
export const END_WAIT_MS = 1500;
// How long the CLI may take to say the session's mode or model (experimental `session.rpc`).
export const REPORT_READ_MS = 2000;
/** A saved reload state older than this is ignored: the gateway keeps a detached host 30 s. */
export const RESUME_WINDOW_MS = 25000;
/** The gateway's cut for a reported mode or model (MAX_HOST_REPORT_TEXT_LEN): a longer one
 * would refuse the whole `session.state`, busy state included. */
export const HOST_REPORT_TEXT_LEN = 128;
/** A file result is attached for the model (`binaryResultsForLlm`) up to this size; a larger
 * one is named by its path only (models refuse images past a few MiB). */
export const MAX_ATTACHMENT_BYTES = 5 * 1024 * 1024;
/** A `tool.progress` message in the timeline is cut here (one line, not a page). */
export const PROGRESS_TEXT_LEN = 300;
/** A `tool.execution_complete` event's `result.output` is cut here, and its `args` replaced
 * by a cut preview past it: providers want what happened, not a copy of every file written. */
export const EVENT_OUTPUT_LEN = 4000;
/** How long switching the CLI's mode (`session.rpc.mode.set`, then reading it back) may take:
 * under the gateway's wait for `session.mode.result`, so a slow CLI gets a clear answer. */
export const MODE_SET_MS = 5000;
/** After starting `tap gateway --exit-when-idle`, how long the first join waits for it to
 * come up (its gateway.json), checking every GATEWAY_START_POLL_MS. */
export const GATEWAY_START_WAIT_MS = 5000;
export const GATEWAY_START_POLL_MS = 100;

/** Every limit and timeout the SDK uses, named once. Gateway-side numbers mirror docs/provider-protocol.md "Limits". */

/** The Provider Interface version spoken (`hello.protocolVersion`); the package version follows it. */
export const PROTOCOL_VERSION = 2;
/** Where the gateway listens when nothing else says. */
export const DEFAULT_GATEWAY_URL = "ws://127.0.0.1:9400";
/** The gateway's default tool timeout; the SDK aborts a handler's signal at the tool's timeout or this. */
export const DEFAULT_TOOL_TIMEOUT_MS = 120_000;
/** The gateway keeps a `reconnectToken` valid for this long after the socket closes. */
export const RECONNECT_TOKEN_LIFETIME_MS = 30_000;
/** First reconnect delay; doubles per failed attempt. */
export const RECONNECT_BACKOFF_INITIAL_MS = 250;
/** Reconnect delay cap: small enough that several attempts fit in the token's 30 s. */
export const RECONNECT_BACKOFF_MAX_MS = 5_000;
/** How long a request with an answer (`tools.update` ack, `stream.query`) may take; a `tools.update` ack waits for the 1 s publish debounce. */
export const REQUEST_TIMEOUT_MS = 15_000;
/** `tool.result` size limit; a bigger result is answered PAYLOAD_TOO_LARGE by the SDK (use a file result). */
export const MAX_RESULT_BYTES = 5 * 1024 * 1024;
/** The push budget's window: a `RATE_LIMITED` push retried after this has a fresh 1 s budget. */
export const PUSH_RETRY_DELAY_MS = 1_000;
/** The shutdown deadline the gateway uses when `shutdown.pending` carries none. */
export const DEFAULT_SHUTDOWN_DEADLINE_MS = 10_000;
/** Time left for `shutdown.ready` to travel after `onShutdown`: the hook gets the deadline minus this. */
export const SHUTDOWN_ANSWER_MARGIN_MS = 500;
/** How long `close()` waits for the gateway's close frame before giving up on it. */
export const CLOSE_WAIT_MS = 2_000;
/** Shown to the user in the browser build while pairing. */
export const PAIRING_MESSAGE = "Type the code from your tray";

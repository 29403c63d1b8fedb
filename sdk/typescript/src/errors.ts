/**
 * Errors the SDK raises and the mapping of a handler's thrown value to a `tool.result`.
 *
 * Every failure the SDK reports is a `TapError` with a string `code` taken from the protocol's
 * error codes (`AUTH_FAILED`, `RATE_LIMITED`, …) so callers can branch on it without parsing
 * messages.
 */

/** An error with a protocol error code. Throw one from a handler to choose the caller's `errorCode`. */
export class TapError extends Error {
  readonly code: string;
  /** A failed call marked retryable lets the gateway retry it on another instance. */
  readonly retryable: boolean;
  /** The refused message's type, when the gateway said (`replyTo`). */
  readonly replyTo?: string;

  constructor(code: string, message: string, options: { retryable?: boolean; replyTo?: string } = {}) {
    super(message);
    this.name = "TapError";
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.replyTo = options.replyTo;
  }
}

/** A push (or other budgeted request) the gateway refused with `RATE_LIMITED`. */
export class RateLimitedError extends TapError {
  constructor(message: string, replyTo?: string) {
    super("RATE_LIMITED", message, { replyTo });
    this.name = "RateLimitedError";
  }
}

/** What a handler's failure becomes on the wire. */
export interface ErrorResult {
  error: string;
  errorCode: string;
  retryable?: boolean;
}

/** Error codes are short upper-case words; anything else in `code` (Node's `ENOENT` is fine, a number is not) is ignored. */
const ERROR_CODE_PATTERN = /^[A-Z][A-Z0-9_]{0,63}$/;

/**
 * Maps anything a handler throws to an error result: a thrown value with a string `code` keeps
 * it (so `TapError("NOT_FOUND", …)` and Node's system errors pass through), anything else is
 * `INTERNAL` with the message. Never throws itself: a handler's failure must not become the
 * SDK's.
 */
export function toErrorResult(thrown: unknown): ErrorResult {
  let message: string;
  let code = "INTERNAL";
  let retryable = false;
  if (thrown instanceof Error) {
    message = thrown.message || thrown.name;
  } else if (typeof thrown === "string") {
    message = thrown;
  } else {
    try {
      message = JSON.stringify(thrown) ?? String(thrown);
    } catch {
      message = String(thrown);
    }
  }
  if (thrown !== null && typeof thrown === "object") {
    const c = (thrown as { code?: unknown }).code;
    if (typeof c === "string" && ERROR_CODE_PATTERN.test(c)) code = c;
    retryable = (thrown as { retryable?: unknown }).retryable === true;
  }
  const out: ErrorResult = { error: message || code, errorCode: code };
  if (retryable) out.retryable = true;
  return out;
}

/** Builds the error for a gateway `error` frame. */
export function fromGatewayError(msg: { code?: unknown; message?: unknown; replyTo?: unknown }): TapError {
  const code = typeof msg.code === "string" ? msg.code : "INTERNAL";
  const message = typeof msg.message === "string" ? msg.message : code;
  const replyTo = typeof msg.replyTo === "string" ? msg.replyTo : undefined;
  if (code === "RATE_LIMITED") return new RateLimitedError(message, replyTo);
  return new TapError(code, message, { replyTo });
}

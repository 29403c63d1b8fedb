/** Public types of the SDK. Wire field names follow docs/provider-protocol.md. */
import type { JsonSchema } from "./schema.js";

/** One session as the gateway lists it in `sessions` / `sessions.updated`. */
export interface SessionInfo {
  id: string;
  label?: string;
  cwd?: string;
  foreground: boolean;
}

/** What a handler gets besides its arguments. */
export interface CallContext {
  /** The gateway's call id (globally unique). */
  callId: string;
  sessionId: string;
  /** Aborted on `tool.cancel` (reason "cancelled", "rebind", "session ended"), on the tool's timeout, on disconnect and on `close()`. */
  signal: AbortSignal;
  /** Sends `tool.progress` for this call; ignored once the call has ended. */
  progress(message: string): void;
  /** The provider's persistent directory (`hello.ack.persistDir`); absent for paired providers. Write file results here. */
  persistDir?: string;
}

export type ToolHandler<A = any> = (args: A, ctx: CallContext) => unknown | Promise<unknown>;

export interface ToolDefinition<A = any> {
  description?: string;
  /** JSON Schema of the arguments (an object schema); `{}` or absent means any object. */
  parameters?: JsonSchema;
  /** Milliseconds, 1 … 3,600,000; the gateway's default is 120 s. */
  timeout?: number;
  /** A human title (MCP's `title`). This and the two below are the Tap gateway's additions to
   * the spec's tool definition (docs/provider-protocol.md); other gateways ignore them. */
  title?: string;
  /** MCP tool annotations: `destructiveHint: true` makes the gateway ask the user before each
   * call (docs/approvals.md), `readOnlyHint`, `idempotentHint`, `openWorldHint`. */
  annotations?: Record<string, unknown>;
  /** `"mcp"`: the handler returns an MCP `CallToolResult` (`{content: [...], isError?}`), which
   * MCP clients receive unchanged: the way to give them an image. */
  resultFormat?: "mcp";
  handler: ToolHandler<A>;
}

export type Tools = Record<string, ToolDefinition>;

/** A `onPreToolUse` hook rule (docs/provider-protocol.md, "Hook rules"). */
export interface HookRule {
  /** `profile` and `client` are the Tap gateway's extension to the spec's keys: only sessions
   * opened with that profile, or of that client (docs/provider-protocol.md, "Hook rules"). */
  match?: { tool?: string; args?: string; provider?: string; profile?: string; client?: string };
  action: "deny" | "context" | "gate";
  reason?: string;
  content?: string;
  gateId?: string;
  failOpen?: boolean;
}

export interface GateCheck {
  gateId: string;
  callId: string;
  sessionId: string;
  tool: string;
  args: unknown;
}

export interface GateDecision {
  decision: "allow" | "deny" | "context";
  reason?: string;
}

export type GateHandler = (check: GateCheck) => GateDecision | Promise<GateDecision>;

/** A static transform is sent as is; a callback transform is answered by `handler` (within the gateway's 2 s). */
export type Transform =
  | { action: "append" | "prepend" | "replace"; content: string }
  | { action: "callback"; handler: (current: string, sessionId: string) => string | Promise<string> };

export interface FilterRule {
  match: string;
  outcome: "drop" | "keep" | "surface" | "inject";
}

export type PushLevel = "keep" | "surface" | "inject";

export interface PushOptions {
  /** Default: the provider's name. */
  stream?: string;
  metadata?: Record<string, unknown>;
  prompt?: string;
  /** Retry a `RATE_LIMITED` refusal this many times, `delayMs` apart (default 0 retries: the RateLimitedError is thrown). */
  retry?: { attempts: number; delayMs?: number };
}

/** Chooses the session to bind to; `undefined` waits for the next `sessions.updated`. */
export type SessionChooser = (sessions: SessionInfo[]) => string | undefined | Promise<string | undefined>;

export interface ShutdownInfo {
  sessionId: string;
  deadline: number;
  signal: AbortSignal;
}

export interface PairingRequest {
  /** The text to show the user: "Type the code from your tray". */
  message: string;
  /** The gateway's own prompt, naming where the code is shown. */
  prompt: string;
}

/** Options shared by the Node and browser builds. */
export interface ProviderOptions {
  name: string;
  tools?: Tools;
  /** Several connections with one name and their own `instance` share tools (browser tabs). */
  instance?: string;
  metadata?: Record<string, unknown>;
  /** A session id, or a chooser. Default: the foreground session, else the first listed. */
  session?: string | SessionChooser;
  hooks?: { onPreToolUse?: HookRule[]; transforms?: Record<string, Transform> };
  gates?: Record<string, GateHandler>;
  context?: string;
  startupContext?: string;
  /** `session.event` names to receive (emitted as "session.event"). */
  subscribe?: string[];
  /** Stream filters, set after every bind (a bind resets them in the gateway). */
  filters?: Record<string, FilterRule[]>;
  concurrency?: { max: number; scope?: "instance" | "provider" | "tool" };
  /** Called on `shutdown.pending`, before the SDK answers; bounded by the deadline. */
  onShutdown?: (info: ShutdownInfo) => void | Promise<void>;
  /** After a session ends: "stay" (default) answers `shutdown.ready` and binds to the next session; "goodbye" disconnects. */
  afterShutdown?: "stay" | "goodbye";
  /** Reconnect after a dropped socket (default true). */
  reconnect?: boolean;
  /** Gateway URL; overrides discovery. */
  url?: string;
  /** Provider token; overrides discovery. */
  token?: string;
  /** Browser build: asks the user for the pairing code. */
  onPairingCode?: (request: PairingRequest) => string | Promise<string>;
}

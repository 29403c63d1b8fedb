/**
 * The protocol engine shared by the Node and browser builds: auth (token or pairing), session
 * choice, binding, updates with acks, pushes, shutdown and reconnect. Tool calls are dispatched
 * by `calls.ts`. The platform (how to open a socket, where the URL and token come from) is
 * injected so this file imports nothing from Node or the DOM.
 */
import { Emitter } from "./events.js";
import { RateLimitedError, TapError, fromGatewayError } from "./errors.js";
import { CallDispatcher } from "./calls.js";
import {
  DEFAULT_SHUTDOWN_DEADLINE_MS, PAIRING_MESSAGE, PROTOCOL_VERSION, PUSH_RETRY_DELAY_MS,
  RECONNECT_BACKOFF_INITIAL_MS, RECONNECT_BACKOFF_MAX_MS, RECONNECT_TOKEN_LIFETIME_MS,
  REQUEST_TIMEOUT_MS, SHUTDOWN_ANSWER_MARGIN_MS, CLOSE_WAIT_MS,
} from "./limits.js";
import type {
  FilterRule, HookRule, ProviderOptions, PushLevel, PushOptions, SessionInfo, Tools, Transform,
} from "./types.js";

/** The subset of the WebSocket API both `ws` and browsers implement. */
export interface WebSocketLike {
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
}

export interface Platform {
  /** The gateway URL and where it came from (for error messages). */
  url(): { url: string; source: string };
  /** Read again on every connect: the gateway's token changes when it restarts. `null`: pair (browser) or fail. */
  token(): Promise<{ token: string; source: string } | null>;
  socket(url: string): WebSocketLike;
  /** Whether `auth {mode: "pair"}` may be used when there is no token. */
  canPair: boolean;
  savePairingToken?(token: string): void;
  forgetPairingToken?(): void;
}

type State = "connecting" | "authenticating" | "pairing" | "unbound" | "binding" | "bound" | "shuttingDown" | "closed";

const PUSH_LEVELS: readonly string[] = ["keep", "surface", "inject"];

interface Pending { resolve(v: any): void; reject(e: Error): void; timer: ReturnType<typeof setTimeout> }

export class Provider extends Emitter {
  readonly name: string;
  /** The gateway's id for this provider; kept across a reconnect with the token. */
  providerId?: string;
  /** The bound session, if any. */
  sessionId?: string;
  persistDir?: string;
  /** The sessions the gateway last listed. */
  sessions: SessionInfo[] = [];
  state: State = "connecting";

  private readonly opts: ProviderOptions;
  private readonly platform: Platform;
  private readonly calls: CallDispatcher;
  private ws?: WebSocketLike;
  private generation = 0;
  private reconnectToken?: string;
  private lastSessionId?: string;
  private disconnectedAt = 0;
  private attempt = 0;
  private reconnectTimer?: ReturnType<typeof setTimeout>;
  private tokenSource = "";
  private retryAtOnce = false;
  private fatal?: TapError;
  private seq = 0;
  private readonly requests = new Map<string, Pending>();
  private readonly pushWaiters: { settle(e?: Error): void; queryId: string }[] = [];
  private updateChain: Promise<unknown> = Promise.resolve();
  private hooks: { onPreToolUse?: HookRule[]; transforms?: Record<string, Transform> };
  private context?: string;
  private readonly filters: Map<string, FilterRule[]>;
  private everBound = false;
  private readyResolve!: (p: Provider) => void;
  private readyReject!: (e: Error) => void;
  /** Resolves at the first bind; rejects when the first connection fails for good. */
  readonly ready: Promise<Provider>;

  constructor(opts: ProviderOptions, platform: Platform) {
    super();
    if (!opts || typeof opts.name !== "string" || opts.name.trim() === "") {
      throw new TapError("INVALID_JSON", "connectProvider: 'name' must be a non-empty string");
    }
    this.name = opts.name;
    this.opts = opts;
    this.platform = platform;
    this.hooks = { ...opts.hooks };
    this.context = opts.context;
    this.filters = new Map(Object.entries(opts.filters ?? {}));
    this.calls = new CallDispatcher(opts.tools ?? {}, (msg) => this.sendIfCurrent(msg.gen, msg.frame));
    this.ready = new Promise((res, rej) => { this.readyResolve = res; this.readyReject = rej; });
    this.ready.catch(() => undefined); // connectProvider re-throws it; avoid an unhandled rejection here
  }

  // ---- public API -------------------------------------------------------------------------

  /** Pushes an event into the bound session's stream. Resolves once the gateway has accepted it. */
  async push(level: PushLevel, event: string, options: PushOptions = {}): Promise<void> {
    if (!PUSH_LEVELS.includes(level)) throw new TapError("INVALID_JSON", `push: level must be one of ${PUSH_LEVELS.join(", ")}, got ${JSON.stringify(level)}`);
    if (typeof event !== "string" || (event === "" && !options.prompt)) throw new TapError("INVALID_JSON", "push: 'event' must be a non-empty string");
    const attempts = Math.max(0, options.retry?.attempts ?? 0);
    for (let i = 0; ; i++) {
      try {
        return await this.pushOnce(level, event, options);
      } catch (e) {
        if (!(e instanceof RateLimitedError) || i >= attempts) throw e;
        await delay(options.retry?.delayMs ?? PUSH_RETRY_DELAY_MS);
      }
    }
  }

  /** Replaces the tool list (`tools.update`); resolves with the binding's revision once the session's host has it. */
  setTools(tools: Tools): Promise<number | undefined> {
    return this.serialized(async () => {
      const previous = this.calls.tools;
      this.calls.setTools(tools); // the gateway routes new tools before the ack: handle them at once
      if (!this.isBound()) return undefined;
      try {
        const ack = await this.request({ type: "tools.update", tools: this.calls.wireTools() });
        return ack.revision as number;
      } catch (e) {
        this.calls.setTools(previous);
        throw e;
      }
    });
  }

  /** Replaces the hook rules and/or transforms (`hooks.update`). */
  setHooks(hooks: { onPreToolUse?: HookRule[]; transforms?: Record<string, Transform | null> }): Promise<number | undefined> {
    return this.serialized(async () => {
      const transforms = { ...this.hooks.transforms } as Record<string, Transform>;
      for (const [k, v] of Object.entries(hooks.transforms ?? {})) {
        if (v === null) delete transforms[k]; else transforms[k] = v;
      }
      const next = { onPreToolUse: hooks.onPreToolUse ?? this.hooks.onPreToolUse, transforms };
      if (!this.isBound()) { this.hooks = next; return undefined; }
      const msg: Record<string, unknown> = { type: "hooks.update" };
      if (hooks.onPreToolUse) msg.onPreToolUse = hooks.onPreToolUse;
      if (hooks.transforms) msg.transforms = wireTransforms(hooks.transforms);
      const ack = await this.request(msg);
      this.hooks = next;
      return ack.revision as number;
    });
  }

  /** Replaces the ambient context (`context.update`); `undefined` clears it. */
  setContext(context: string | undefined): Promise<number | undefined> {
    return this.serialized(async () => {
      this.context = context;
      if (!this.isBound()) return undefined;
      return (await this.request({ type: "context.update", context })).revision as number;
    });
  }

  /** Sets a stream filter (`filter.set`); empty rules remove it. Re-applied after every bind. */
  setFilter(stream: string, rules: FilterRule[]): Promise<number | undefined> {
    return this.serialized(async () => {
      if (rules.length === 0) this.filters.delete(stream); else this.filters.set(stream, rules);
      if (!this.isBound()) return undefined;
      return (await this.request({ type: "filter.set", stream, rules })).revision as number;
    });
  }

  /** Reads own streams (`stream.query`), newest first. */
  async query(streams?: string[], last?: number): Promise<Record<string, unknown[]>> {
    if (!this.isBound()) throw notBound("stream.query");
    const answer = await this.request({ type: "stream.query", streams, last }, "queryId");
    return answer.streams as Record<string, unknown[]>;
  }

  /** Says goodbye and closes; no reconnect. Running handlers' signals are aborted. */
  async close(reason = "provider closed"): Promise<void> {
    if (this.state === "closed") return;
    this.state = "closed";
    clearTimeout(this.reconnectTimer);
    this.calls.abortAll("closed");
    this.failPending(new TapError("DISCONNECTED", "The provider was closed"));
    const ws = this.ws;
    if (ws) {
      const closed = new Promise<void>((res) => {
        const timer = setTimeout(res, CLOSE_WAIT_MS);
        ws.onclose = () => { clearTimeout(timer); res(); };
      });
      try { ws.send(JSON.stringify({ type: "goodbye", reason })); } catch { /* already gone */ }
      await closed;
      try { ws.close(1000, "goodbye"); } catch { /* already closed */ } // in case the gateway never closed it
    }
    this.readyReject(new TapError("DISCONNECTED", "The provider was closed before it bound"));
    this.emit("closed");
  }

  // ---- connection ---------------------------------------------------------------------------

  /** Opens a connection: the first one, or a reconnect. */
  async connect(): Promise<void> {
    if (this.state === "closed") return;
    const gen = ++this.generation;
    this.state = "connecting";
    const { url, source } = this.platform.url();
    let cred: { token: string; source: string } | null;
    try {
      cred = this.opts.token ? { token: this.opts.token, source: "the 'token' option" } : await this.platform.token();
    } catch (e) {
      return this.failFirst(new TapError("AUTH_FAILED", (e as Error).message));
    }
    if (!cred && !this.platform.canPair) {
      return this.failFirst(new TapError("AUTH_FAILED", "No provider token found (see the SDK's discovery order: TAP_PROVIDER_TOKEN, TAP_PROVIDER_TOKEN_FILE, the token files)"));
    }
    this.tokenSource = cred?.source ?? "pairing";
    let ws: WebSocketLike;
    try {
      ws = this.platform.socket(url);
    } catch (e) {
      return this.failFirst(new TapError("DISCONNECTED", `Cannot connect to ${url} (from ${source}): ${(e as Error).message}`));
    }
    this.ws = ws;
    let opened = false;
    ws.onopen = () => {
      opened = true;
      this.state = cred ? "authenticating" : "pairing";
      this.sendRaw(cred ? { type: "auth", token: cred.token } : { type: "auth", mode: "pair", name: this.name, metadata: this.opts.metadata });
    };
    ws.onmessage = (ev) => {
      if (gen !== this.generation) return;
      let msg: any;
      try {
        msg = JSON.parse(typeof ev.data === "string" ? ev.data : String(ev.data));
      } catch {
        return; // the gateway sends JSON; a broken frame is not worth dying over
      }
      this.handle(msg, gen).catch((e) => this.emitError(e instanceof TapError ? e : new TapError("INTERNAL", String(e))));
    };
    ws.onerror = () => undefined; // the close event follows and carries what matters
    ws.onclose = (ev) => {
      if (gen !== this.generation) return;
      this.onSocketClosed(opened, url, source, ev);
    };
  }

  private onSocketClosed(opened: boolean, url: string, source: string, ev: { code: number; reason: string }): void {
    const wasBound = this.state === "bound" || this.state === "shuttingDown";
    if (wasBound) this.disconnectedAt = Date.now();
    this.calls.abortAll("disconnected");
    this.failPending(new TapError("DISCONNECTED", `The connection to the gateway closed (${ev.code} ${ev.reason || ""})`.trim()));
    this.sessionId = undefined;
    if (this.state === "closed") return;
    this.state = "connecting";
    this.emit("disconnected", { code: ev.code, reason: ev.reason });
    if (this.fatal) return this.failFirst(this.fatal);
    if (!this.everBound && !this.retryAtOnce) {
      const why = opened ? `closed (${ev.code}${ev.reason ? " " + ev.reason : ""})` : "refused or unreachable";
      return this.failFirst(new TapError("DISCONNECTED", `Cannot reach the gateway at ${url} (from ${source}): connection ${why}`));
    }
    if (this.opts.reconnect === false) { void this.close("reconnect disabled"); return; }
    const wait = this.retryAtOnce ? 0 : Math.min(RECONNECT_BACKOFF_INITIAL_MS * 2 ** this.attempt, RECONNECT_BACKOFF_MAX_MS) * (0.75 + Math.random() / 2);
    this.retryAtOnce = false;
    this.attempt++;
    this.reconnectTimer = setTimeout(() => void this.connect(), wait);
  }

  private failFirst(err: TapError): void {
    if (!this.everBound) {
      this.state = "closed";
      try { this.ws?.close(1000, "giving up"); } catch { /* gone */ }
      this.readyReject(err);
      this.emit("closed");
    } else {
      this.emitError(err);
    }
  }

  // ---- incoming ---------------------------------------------------------------------------

  private async handle(msg: any, gen: number): Promise<void> {
    switch (msg.type) {
      case "auth.pairing": return this.pair(String(msg.prompt ?? ""));
      case "sessions":
        if (typeof msg.token === "string") this.platform.savePairingToken?.(msg.token);
        this.state = "unbound";
        this.sessions = Array.isArray(msg.active) ? msg.active : [];
        this.emit("sessions", this.sessions);
        return this.choose();
      case "sessions.updated":
        this.sessions = Array.isArray(msg.active) ? msg.active : [];
        this.emit("sessions", this.sessions);
        return this.choose();
      case "hello.ack": return this.onBound(msg);
      case "session.lifecycle":
        this.emit("lifecycle", msg);
        if (msg.state === "idle") this.emit("idle", msg.sessionId);
        if (msg.state === "shutdown.pending" && msg.sessionId === this.sessionId) return this.shutdown(msg);
        return;
      case "session.event":
        this.emit("session.event", { sessionId: msg.sessionId, event: msg.event, data: msg.data });
        this.emit(`event:${msg.event}`, msg.data, msg.sessionId);
        return;
      case "tool.call": return this.calls.call(msg, gen, this.persistDir);
      case "tool.cancel": return this.calls.cancel(msg.id, msg.reason);
      case "gate.check": return this.gate(msg);
      case "transform.request": return this.transform(msg);
      case "ack": return this.settle(msg.requestId, null, msg);
      case "stream.history":
        if (this.settlePush(msg.queryId)) return;
        return this.settle(msg.queryId, null, msg);
      case "error": return this.onError(msg);
      default: return; // forward compatibility: unknown types are ignored
    }
  }

  private async pair(prompt: string): Promise<void> {
    const ask = this.opts.onPairingCode;
    if (!ask) {
      this.fatal = new TapError("AUTH_FAILED", "Pairing needed but no onPairingCode callback was given");
      this.sendRaw({ type: "goodbye", reason: "cannot pair" });
      return;
    }
    let code: string;
    try {
      code = String(await ask({ message: PAIRING_MESSAGE, prompt }));
    } catch (e) {
      this.fatal = new TapError("AUTH_FAILED", `Pairing abandoned: ${(e as Error)?.message ?? e}`);
      this.sendRaw({ type: "goodbye", reason: "pairing abandoned" });
      return;
    }
    this.sendRaw({ type: "auth.confirm", code: code.replace(/\s+/g, "") });
  }

  private async choose(): Promise<void> {
    if (this.state !== "unbound") return;
    const active = this.sessions;
    let target: string | undefined;
    const tokenFresh = this.reconnectToken && Date.now() - this.disconnectedAt < RECONNECT_TOKEN_LIFETIME_MS;
    if (tokenFresh && this.lastSessionId && active.some((s) => s.id === this.lastSessionId)) {
      target = this.lastSessionId; // restore the binding the token names
    } else {
      const choice = this.opts.session;
      this.state = "binding"; // hold: a chooser may be async, and sessions.updated may come meanwhile
      try {
        target = typeof choice === "function" ? await choice(active)
          : typeof choice === "string" ? active.find((s) => s.id === choice)?.id
          : (active.find((s) => s.foreground) ?? active[0])?.id;
      } catch (e) {
        this.emitError(new TapError("INTERNAL", `The session chooser threw: ${(e as Error)?.message ?? e}`));
        target = undefined;
      }
      if (this.state !== "binding") return; // the socket went away meanwhile
      if (target === undefined) { this.state = "unbound"; return; } // wait for sessions.updated
    }
    this.state = "binding";
    const hello: Record<string, unknown> = {
      type: "hello", name: this.name, protocolVersion: PROTOCOL_VERSION, session: target,
      tools: this.calls.wireTools(),
    };
    if (this.opts.instance !== undefined) hello.instance = this.opts.instance;
    if (this.opts.metadata) hello.metadata = this.opts.metadata;
    const hooks = this.wireHooks();
    if (hooks) hello.hooks = hooks;
    if (this.context !== undefined) hello.context = this.context;
    if (this.opts.startupContext !== undefined) hello.startup_context = this.opts.startupContext;
    if (this.opts.subscribe) hello.subscribe = this.opts.subscribe;
    if (this.opts.concurrency) hello.concurrency = this.opts.concurrency;
    if (tokenFresh) hello.reconnectToken = this.reconnectToken;
    this.sendRaw(hello);
  }

  private async onBound(msg: any): Promise<void> {
    const restored = this.everBound && msg.providerId === this.providerId;
    this.state = "bound";
    this.providerId = msg.providerId;
    this.sessionId = msg.sessionId;
    this.lastSessionId = msg.sessionId;
    this.reconnectToken = msg.reconnectToken;
    this.persistDir = msg.persistDir;
    this.attempt = 0;
    const first = !this.everBound;
    this.everBound = true;
    // The gateway resets stream filters on every bind: set ours again.
    for (const [stream, rules] of this.filters) {
      this.request({ type: "filter.set", stream, rules }).catch((e) => this.emitError(e));
    }
    this.emit("bound", { sessionId: msg.sessionId, providerId: msg.providerId, restored });
    if (first) this.readyResolve(this);
  }

  private async shutdown(msg: any): Promise<void> {
    const sessionId: string = msg.sessionId;
    const deadline = typeof msg.deadline === "number" ? msg.deadline : DEFAULT_SHUTDOWN_DEADLINE_MS;
    this.state = "shuttingDown";
    const gen = this.generation;
    const ac = new AbortController();
    const budget = Math.max(0, deadline - SHUTDOWN_ANSWER_MARGIN_MS);
    const timer = setTimeout(() => ac.abort(), budget);
    this.emit("shutdown", { sessionId, deadline });
    try {
      if (this.opts.onShutdown) {
        await Promise.race([
          Promise.resolve(this.opts.onShutdown({ sessionId, deadline, signal: ac.signal })),
          new Promise((res) => ac.signal.addEventListener("abort", res)),
        ]);
      }
    } catch (e) {
      this.emitError(new TapError("INTERNAL", `onShutdown threw: ${(e as Error)?.message ?? e}`));
    } finally {
      clearTimeout(timer);
    }
    if (gen !== this.generation || this.state !== "shuttingDown") return;
    this.reconnectToken = undefined; // the session is gone: nothing to restore
    if (this.opts.afterShutdown === "goodbye") {
      await this.close("session ending");
      return;
    }
    this.sendRaw({ type: "shutdown.ready", sessionId });
    this.sessionId = undefined;
    this.state = "unbound";
    this.emit("unbound", { sessionId, reason: "session ended" });
    this.sessions = this.sessions.filter((s) => s.id !== sessionId);
    return this.choose();
  }

  private async gate(msg: any): Promise<void> {
    const handler = this.opts.gates?.[msg.gateId];
    let answer: { decision: string; reason?: string };
    try {
      answer = handler ? await handler({ gateId: msg.gateId, callId: msg.callId, sessionId: msg.sessionId, tool: msg.tool, args: msg.args })
        : { decision: "deny", reason: `Provider '${this.name}' has no handler for gate '${msg.gateId}'` };
    } catch (e) {
      answer = { decision: "deny", reason: `Gate '${msg.gateId}' failed: ${(e as Error)?.message ?? e}` };
    }
    this.sendRaw({ type: "gate.result", callId: msg.callId, decision: answer.decision, reason: answer.reason });
  }

  private async transform(msg: any): Promise<void> {
    const t = this.hooks.transforms?.[msg.section];
    if (!t || t.action !== "callback") return; // no answer: the gateway keeps the section after 2 s
    try {
      const content = await t.handler(String(msg.current ?? ""), msg.sessionId);
      this.sendRaw({ type: "transform.result", callId: msg.callId, content: String(content) });
    } catch (e) {
      this.emitError(new TapError("INTERNAL", `Transform '${msg.section}' threw: ${(e as Error)?.message ?? e}`));
    }
  }

  private onError(msg: any): void {
    const err = fromGatewayError(msg);
    if (typeof msg.requestId === "string" && this.requests.has(msg.requestId)) return this.settle(msg.requestId, err);
    if (err.replyTo === "push" && this.pushWaiters.length > 0) { this.pushWaiters.shift()!.settle(err); return; }
    if (err.code === "AUTH_FAILED") {
      if (this.tokenSource === "stored pairing token" && this.platform.canPair) {
        this.platform.forgetPairingToken?.(); // revoked or forgotten: pair again at once
        this.retryAtOnce = true;
        return;
      }
      if (!this.everBound) this.fatal = err;
      else this.emitError(err); // e.g. the gateway restarted: the next attempt reads the new token
      return;
    }
    if (err.code === "UNSUPPORTED_VERSION") { this.fatal = err; return; }
    if (err.replyTo === "hello" && this.state === "binding") {
      this.state = "unbound";
      if (err.code === "INVALID_SESSION") {
        this.reconnectToken = undefined;
        this.sessions = this.sessions.filter((s) => s.id !== msg.sessionId);
        void this.choose();
        return;
      }
      if (!this.everBound) {
        this.fatal = err;
        this.readyReject(err); // before close(), whose own rejection must not win
        void this.close(`hello refused: ${err.code}`);
        return;
      }
    }
    this.emitError(err);
  }

  // ---- plumbing ---------------------------------------------------------------------------

  private isBound(): boolean {
    return this.state === "bound" || this.state === "shuttingDown";
  }

  private async pushOnce(level: PushLevel, event: string, o: PushOptions): Promise<void> {
    if (!this.isBound()) throw notBound("push");
    const stream = o.stream ?? this.name;
    const msg: Record<string, unknown> = { type: "push", level, event, stream };
    if (o.metadata) msg.metadata = o.metadata;
    if (o.prompt) msg.prompt = o.prompt;
    // A push has no answer on success. The gateway handles a connection's messages in order, so
    // a `stream.query` sent right after it is answered after the push's error, if any: that
    // answer is the barrier that says the push was accepted.
    const queryId = `push-${++this.seq}`;
    const done = new Promise<void>((resolve, reject) => {
      this.pushWaiters.push({ queryId, settle: (e) => (e ? reject(e) : resolve()) });
    });
    this.sendRaw(msg);
    this.sendRaw({ type: "stream.query", queryId, streams: [stream], last: 1 });
    return done;
  }

  private settlePush(queryId: unknown): boolean {
    const i = this.pushWaiters.findIndex((w) => w.queryId === queryId);
    if (i < 0) return false;
    // Waiters before this one got no error either (errors are answered in order): all accepted.
    for (const w of this.pushWaiters.splice(0, i + 1)) w.settle();
    return true;
  }

  private request(msg: Record<string, unknown>, idField = "requestId"): Promise<any> {
    const id = `r-${++this.seq}`;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.requests.delete(id);
        reject(new TapError("TIMEOUT", `No answer to '${msg.type}' within ${REQUEST_TIMEOUT_MS} ms`));
      }, REQUEST_TIMEOUT_MS);
      this.requests.set(id, { resolve, reject, timer });
      this.sendRaw({ ...msg, [idField]: id });
    });
  }

  private settle(id: unknown, err: Error | null, value?: unknown): void {
    const p = typeof id === "string" ? this.requests.get(id) : undefined;
    if (!p) return;
    this.requests.delete(id as string);
    clearTimeout(p.timer);
    if (err) p.reject(err); else p.resolve(value);
  }

  private failPending(err: TapError): void {
    for (const [id, p] of this.requests) { clearTimeout(p.timer); p.reject(err); this.requests.delete(id); }
    for (const w of this.pushWaiters.splice(0)) w.settle(err);
  }

  private serialized<T>(fn: () => Promise<T>): Promise<T> {
    // One update at a time: the gateway refuses a second `tools.update` while the first awaits its ack.
    const run = this.updateChain.then(fn, fn);
    this.updateChain = run.catch(() => undefined);
    return run;
  }

  private wireHooks(): Record<string, unknown> | undefined {
    const out: Record<string, unknown> = {};
    if (this.hooks.onPreToolUse?.length) out.onPreToolUse = this.hooks.onPreToolUse;
    if (this.hooks.transforms && Object.keys(this.hooks.transforms).length) out.transforms = wireTransforms(this.hooks.transforms);
    return Object.keys(out).length ? out : undefined;
  }

  private sendRaw(msg: unknown): void {
    try { this.ws?.send(JSON.stringify(msg)); } catch { /* the close event handles a dead socket */ }
  }

  /** Call results go out only on the connection the call came from: the gateway has failed it otherwise. */
  private sendIfCurrent(gen: number, frame: unknown): void {
    if (gen === this.generation) this.sendRaw(frame);
  }

  private emitError(err: TapError): void {
    if (!this.emit("error", err)) console.warn(`tap-provider '${this.name}': ${err.code}: ${err.message}`);
  }
}

function wireTransforms(t: Record<string, Transform | null>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(t)) out[k] = v === null ? null : v.action === "callback" ? { action: "callback" } : v;
  return out;
}

function notBound(what: string): TapError {
  return new TapError("INVALID_SESSION", `Not bound to a session: cannot ${what} until connectProvider has bound (or after the session ended)`);
}

function delay(ms: number): Promise<void> {
  return new Promise((res) => setTimeout(res, ms));
}

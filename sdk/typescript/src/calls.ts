/**
 * Tool-call dispatch: validates arguments, runs the handler with an AbortSignal wired to
 * `tool.cancel` and the tool's timeout, sends progress, and turns whatever the handler does
 * (returns, throws, hangs past a cancel) into exactly one `tool.result`.
 */
import { TapError, toErrorResult } from "./errors.js";
import { DEFAULT_TOOL_TIMEOUT_MS, MAX_RESULT_BYTES } from "./limits.js";
import { argumentsError, validate } from "./schema.js";
import type { CallContext, Tools } from "./types.js";

/** A handler returns one of these (see `fileResult` in the Node build) to answer with a file. */
export class FileResult {
  constructor(readonly file: { path: string; mimeType: string; size: number; ttl?: number }) {}
}

type Send = (msg: { gen: number; frame: Record<string, unknown> }) => void;

interface Running { ac: AbortController; timer: ReturnType<typeof setTimeout> }

export class CallDispatcher {
  tools: Tools;
  private readonly running = new Map<string, Running>();

  constructor(tools: Tools, private readonly send: Send) {
    this.tools = tools;
    this.check(tools);
  }

  setTools(tools: Tools): void {
    this.check(tools);
    this.tools = tools;
  }

  /** The tool list as `hello` / `tools.update` carry it. */
  wireTools(): Record<string, unknown>[] {
    return Object.entries(this.tools).map(([name, t]) => {
      const out: Record<string, unknown> = { name, description: t.description ?? "", parameters: t.parameters ?? {} };
      if (t.timeout !== undefined) out.timeout = t.timeout;
      if (t.title !== undefined) out.title = t.title;
      if (t.annotations !== undefined) out.annotations = t.annotations;
      if (t.resultFormat !== undefined) out.resultFormat = t.resultFormat;
      return out;
    });
  }

  async call(msg: any, gen: number, persistDir: string | undefined): Promise<void> {
    const id: string = msg.id;
    const reply = (frame: Record<string, unknown>) => this.send({ gen, frame: { type: "tool.result", id, ...frame } });
    const tool = Object.prototype.hasOwnProperty.call(this.tools, msg.tool) ? this.tools[msg.tool] : undefined;
    if (!tool) return reply({ error: `No tool '${msg.tool}' in provider`, errorCode: "NOT_FOUND" });
    const args = msg.args ?? {};
    const invalid = validate(tool.parameters ?? {}, args);
    if (invalid) return reply({ error: argumentsError(msg.tool, invalid), errorCode: "INVALID_JSON" });

    const ac = new AbortController();
    const timeout = tool.timeout ?? DEFAULT_TOOL_TIMEOUT_MS;
    const timer = setTimeout(() => ac.abort(new TapError("TIMEOUT", `Tool '${msg.tool}' timed out after ${timeout} ms`)), timeout);
    this.running.set(id, { ac, timer });
    const ctx: CallContext = {
      callId: id,
      sessionId: msg.sessionId,
      signal: ac.signal,
      persistDir,
      progress: (message: string) => {
        if (this.running.has(id) && !ac.signal.aborted) this.send({ gen, frame: { type: "tool.progress", id, message: String(message) } });
      },
    };
    let frame: Record<string, unknown>;
    try {
      const out = await tool.handler(args, ctx);
      frame = out instanceof FileResult ? { file: out.file } : { data: out === undefined ? null : out };
      if (!(out instanceof FileResult)) {
        const size = jsonBytes(frame.data);
        if (size === undefined) frame = { error: `Tool '${msg.tool}' returned a value that is not JSON`, errorCode: "INTERNAL" };
        else if (size > MAX_RESULT_BYTES) frame = { error: `Tool '${msg.tool}' returned ${size} bytes; results over ${MAX_RESULT_BYTES} must be file results`, errorCode: "PAYLOAD_TOO_LARGE" };
      }
    } catch (e) {
      frame = toErrorResult(e) as unknown as Record<string, unknown>;
    } finally {
      clearTimeout(timer);
      this.running.delete(id);
    }
    // After a cancel the spec wants CANCELLED as the terminal answer, whatever the handler did.
    if (ac.signal.aborted) frame = { error: "Cancelled", errorCode: "CANCELLED" };
    reply(frame);
  }

  cancel(id: unknown, reason: unknown): void {
    const r = typeof id === "string" ? this.running.get(id) : undefined;
    if (r) r.ac.abort(new TapError("CANCELLED", `Call cancelled: ${typeof reason === "string" ? reason : "cancelled"}`));
  }

  abortAll(reason: string): void {
    for (const r of this.running.values()) r.ac.abort(new TapError("CANCELLED", `Call cancelled: ${reason}`));
  }

  private check(tools: Tools): void {
    if (tools === null || typeof tools !== "object" || Array.isArray(tools)) {
      throw new TapError("INVALID_JSON", "'tools' must be an object of name → { description, parameters, handler }");
    }
    for (const [name, t] of Object.entries(tools)) {
      if (!t || typeof t.handler !== "function") throw new TapError("INVALID_JSON", `Tool '${name}' needs a 'handler' function`);
    }
  }
}

function jsonBytes(v: unknown): number | undefined {
  let s: string | undefined;
  try { s = JSON.stringify(v); } catch { return undefined; }
  if (s === undefined) return undefined;
  return new TextEncoder().encode(s).length;
}

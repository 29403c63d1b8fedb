// The connection to the gateway's `/session` endpoint (docs/session-host-protocol.md) and
// everything this session host keeps across reconnects and reloads: registration, requests
// and their answers, tool calls, the tool set and the reload that changes it, the end.

import path from "node:path";
import { stateMessage } from "./agent_report.mjs";
import { askApproval, setMode, withdrawApproval } from "./asks.mjs";
import { deliver } from "./deliveries.mjs";
import { discover } from "./gateway_discovery.mjs";
import { startGateway } from "./gateway_start.mjs";
import { copilotSessionId, cwd, debug, HOST_NAME, profile } from "./environment.mjs";
import { CONNECT_TIMEOUT_MS, END_WAIT_MS, GATEWAY_START_POLL_MS, GATEWAY_START_WAIT_MS, PROGRESS_TEXT_LEN, RECONNECT_MAX_MS, RECONNECT_MIN_MS, RELOAD_DEBOUNCE_MS } from "./limits.mjs";
import { saveState } from "./reload_state.mjs";
import { toCopilotResult } from "./tool_results.mjs";
import { fromProviders, signature } from "./tool_sets.mjs";

/** The connection to the gateway and everything this session host keeps across reconnects. */
export class Host {
  constructor(saved) {
    this.sessionId = saved?.sessionId ?? copilotSessionId ?? undefined;
    this.resumeToken = saved?.resumeToken;
    this.tools = saved?.tools ?? [];
    this.revision = saved?.revision ?? -1;
    this.busy = saved?.busy ?? false;
    // What the gateway learns of the agent (mode, model, capabilities), sent with every
    // session.state; read from the CLI once joined and kept across reloads.
    this.report = saved?.report ?? {};
    this.queued = saved?.queued ?? []; // deliveries and warnings to show once joined
    // Providers' `startup_context` (session.context) not yet given to the model: the next
    // prompt carries it (hooks.mjs), once.
    this.startContext = saved?.startContext ?? [];
    this.ws = null;
    this.registered = false;
    this.nextId = 0;
    this.pending = new Map(); // requestId → {resolve, reject, timer}
    this.calls = new Map(); // callId → resolve
    this.callTools = new Map(); // callId → tool name, for its progress lines
    this.asked = new Set(); // approvalIds whose dialog is open (asks.mjs)
    this.mayStartGateway = !saved; // a process a reload started finds the gateway running
    this.placedSections = new Set(); // sections the CLI built into its system prompt (hooks.mjs)
    this.session = null;
    this.joinedSignature = null;
    this.reloadTimer = null;
    this.reloadWanted = false; // a reload waits for this process's tool calls
    this.reloading = false;
    this.ending = false;
    this.joining = null; // the connect() in progress
    this.backoff = RECONNECT_MIN_MS;
    this.awayLogged = false;
    this.firstTools = null; // resolves when the first set with a provider's tool arrives
  }

  id(prefix) {
    return `${prefix}-${process.pid}-${++this.nextId}`;
  }

  send(msg) {
    if (this.ws?.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(msg));
    return true;
  }

  /** Sends `msg` with a fresh requestId and resolves with the answer (rejects on `error`). */
  request(msg, timeoutMs) {
    const requestId = this.id("r");
    return new Promise((resolve, reject) => {
      if (!this.send({ ...msg, requestId })) return reject(new Error("not connected to the Tap gateway"));
      const timer = setTimeout(() => {
        this.pending.delete(requestId);
        reject(new Error(`no answer to ${msg.type} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(requestId, { resolve, reject, timer });
    });
  }

  log(text, level = "info") {
    if (this.session) this.session.log(text, { level }).catch(() => {});
    else this.queued.push({ kind: "log", text, level });
  }

  /** Says once per absence that the gateway is away; the next successful connect re-arms it. */
  logAway(reason) {
    if (this.awayLogged) return;
    this.awayLogged = true;
    this.log(`Tap: ${reason}; Tap tools are unavailable until it is reachable (retrying in the background).`, "warning");
  }

  /** Connects (resuming when it can) and registers; resolves true when the session is
   * registered. Without a gateway, starts one when `tap` is installed (gateway_start.mjs). */
  connect() {
    const found = discover();
    debug("connect:", found.error ?? found.address);
    // Only when the session starts: a gateway that goes away later was stopped or is
    // restarting (the desktop app's), and one started now would take its place.
    const mayStart = this.mayStartGateway;
    this.mayStartGateway = false;
    if (found.missing && mayStart && !this.reloading && !this.ending) {
      const started = startGateway();
      if (started) {
        debug(started);
        if (!this.gatewayStarted) this.log(`Tap: no Tap gateway was running; ${started} (it stops by itself once no session uses it).`);
        this.gatewayStarted = true;
        this.joining = waitForGateway().then((f) => (f.error ? this.away(f.error) : this.open(f)));
        return this.joining;
      }
    }
    if (found.error) return Promise.resolve(this.away(found.error));
    return this.open(found);
  }

  /** Opens the session socket to the gateway `found` and registers. */
  open(found) {
    this.joining = new Promise((resolve) => {
      let settled = false;
      const done = (ok) => {
        if (!settled) {
          settled = true;
          resolve(ok);
        }
      };
      let ws;
      try {
        ws = new WebSocket(`${found.address}/session`);
      } catch (e) {
        return done(this.away(`cannot reach the Tap gateway at ${found.address}: ${e.message}`));
      }
      this.ws = ws;
      ws.onopen = () => {
        // On a resume, the calls still waiting: the gateway answers each one exactly once,
        // even one whose answer the dropped socket lost.
        const resume = this.resumeToken ? { resumeToken: this.resumeToken, pendingCalls: [...this.calls.keys()] } : {};
        ws.send(JSON.stringify({ type: "auth", token: found.token, protocolVersion: 1, hostName: HOST_NAME, ...resume }));
      };
      ws.onmessage = (ev) => {
        let msg;
        try {
          msg = JSON.parse(typeof ev.data === "string" ? ev.data : Buffer.from(ev.data).toString("utf8"));
        } catch {
          return;
        }
        if (msg.type === "auth.ok") {
          this.onAuthOk(msg).then(done, (e) => done(e.code ? this.refused(e) : this.away(`the Tap gateway refused the session: ${e.message}`)));
        } else if (msg.type === "error" && !msg.requestId && (msg.code === "AUTH_FAILED" || msg.code === "UNSUPPORTED_VERSION")) {
          done(this.away(`the Tap gateway refused this host (${msg.code}: ${msg.message})`));
        } else {
          this.onMessage(msg);
        }
      };
      ws.onclose = () => {
        if (this.ws === ws) this.onClose();
        done(this.away(`the Tap gateway at ${found.address} closed the connection`));
      };
      ws.onerror = () => {}; // onclose follows and says what to do
    });
    return this.joining;
  }

  /** The gateway refused `session.register` (an unknown profile, say): retrying cannot help,
   * so say so once and run without Tap tools; the connection stays up, unused. */
  refused(e) {
    this.registered = false;
    if (!this.awayLogged) {
      this.awayLogged = true;
      const hint = profile ? ` Check the profile with \`tap profiles\`, or reinstall with \`tap connect copilot --profile NAME\` (or without --profile).` : "";
      this.log(`Tap: the Tap gateway refused this session (${e.message}); it has no Tap tools.${hint}`, "warning");
    }
    return false;
  }

  away(reason) {
    this.registered = false;
    if (!this.reloading && !this.ending) this.logAway(reason);
    return false;
  }

  async onAuthOk(msg) {
    const resumed = this.sessionId && msg.resumed.includes(this.sessionId);
    if (this.resumeToken && msg.resumeToken !== this.resumeToken) {
      // A new gateway (or our host expired): calls in flight on the old one will never answer.
      for (const [callId, resolve] of this.calls) resolve({ callId, errorCode: "DISCONNECTED", error: "The Tap gateway restarted during the call" });
      this.calls.clear();
    }
    this.resumeToken = msg.resumeToken;
    if (!resumed) await this.register();
    this.registered = true;
    this.backoff = RECONNECT_MIN_MS;
    if (this.awayLogged) this.log("Tap: connected to the gateway again.");
    this.awayLogged = false;
    this.send(stateMessage(this));
    return true;
  }

  async register() {
    // With a profile the gateway holds the session to its tools, or refuses the session
    // (an unknown profile): never a session that sees more than the profile lets through.
    const base = { type: "session.register", label: `copilot: ${path.basename(cwd) || cwd}`, cwd, foreground: true, ...(profile ? { profile } : {}) };
    try {
      const ok = await this.request({ ...base, ...(this.sessionId ? { sessionId: this.sessionId } : {}) }, CONNECT_TIMEOUT_MS);
      this.sessionId = ok.session.id;
      this.toolsPending = ok.toolsPending === true;
    } catch (e) {
      if (!/INVALID_SESSION/.test(e.message)) throw e;
      // The id is taken (another host has a session with it): let the gateway choose one.
      const ok = await this.request(base, CONNECT_TIMEOUT_MS);
      this.sessionId = ok.session.id;
      this.toolsPending = ok.toolsPending === true;
    }
  }

  onClose() {
    this.ws = null;
    this.registered = false;
    for (const { reject, timer } of this.pending.values()) {
      clearTimeout(timer);
      reject(new Error("the connection to the Tap gateway closed"));
    }
    this.pending.clear();
    if (this.reloading || this.ending) return;
    this.logAway("the connection to the Tap gateway closed");
    this.reconnectLater();
  }

  reconnectLater() {
    const wait = this.backoff;
    this.backoff = Math.min(this.backoff * 2, RECONNECT_MAX_MS);
    setTimeout(async () => {
      if (this.reloading || this.ending || this.ws) return;
      if (!(await this.connect()) && !this.ws) this.reconnectLater();
    }, wait).unref?.();
  }

  onMessage(msg) {
    debug("<-", msg.type, msg.revision ?? "", msg.level ?? "", msg.callId ?? "");
    const answered = msg.requestId && this.pending.get(msg.requestId);
    if (answered && msg.type !== "session.ended") {
      this.pending.delete(msg.requestId);
      clearTimeout(answered.timer);
      if (msg.type === "error") answered.reject(Object.assign(new Error(`${msg.code}: ${msg.message}`), { code: msg.code }));
      else answered.resolve(msg);
      return;
    }
    switch (msg.type) {
      case "session.tools":
        if (msg.sessionId !== this.sessionId || msg.revision <= this.revision) return;
        this.revision = msg.revision;
        this.tools = msg.tools;
        if (fromProviders(this.tools).length > 0) this.firstTools?.resolve();
        if (this.joinedSignature !== null && signature(this.tools) !== this.joinedSignature) this.scheduleReload();
        return;
      case "tool.result": {
        const resolve = this.calls.get(msg.callId);
        this.calls.delete(msg.callId);
        this.callTools.delete(msg.callId);
        resolve?.(msg);
        // A change waiting for this call: reloading at once lets it land before the CLI
        // starts its next turn (a queued inject's, say).
        if (this.calls.size === 0 && (this.reloadWanted || this.reloadTimer)) {
          clearTimeout(this.reloadTimer);
          this.reloadTimer = null;
          setImmediate(() => this.reload());
        }
        return;
      }
      case "delivery":
        return deliver(this, msg);
      case "session.warning":
        this.firstTools?.resolve(); // a project provider that cannot start will not send tools
        return this.log(`Tap: ${msg.message}`, "warning");
      case "session.context":
        this.startContext.push({ provider: msg.provider, text: msg.startupContext });
        return this.log(`Tap (${msg.provider}): ${msg.startupContext}`);
      case "tool.progress":
        return this.progress(msg);
      case "approval.ask":
        return void askApproval(this, msg);
      case "approval.withdrawn":
        return withdrawApproval(this, msg);
      case "session.mode.set":
        return void setMode(this, msg);
      case "session.ended":
        if (msg.sessionId === this.sessionId && !this.ending) {
          // "gateway stopping": the socket closes next and the reconnect registers again.
          this.registered = false;
        }
        answered?.resolve(msg);
        if (answered) this.pending.delete(msg.requestId);
        return;
      default:
        return; // anything newer: nothing to show
    }
  }

  /** A provider's `tool.progress` as a passing line in the timeline: the SDK gives an
   * extension's tool no progress API (its `ToolInvocation` has none), and `ephemeral` keeps
   * the lines out of the session's record. */
  progress(msg) {
    const tool = this.callTools.get(msg.callId);
    if (!tool || !this.session || typeof msg.message !== "string") return;
    const text = msg.message.length > PROGRESS_TEXT_LEN ? `${msg.message.slice(0, PROGRESS_TEXT_LEN)}…` : msg.message;
    this.session.log(`[${tool}] ${text}`, { ephemeral: true }).catch(() => {});
  }

  async invoke(tool, args) {
    if (!this.registered) {
      return { textResultForLlm: `The Tap gateway is not reachable, so '${tool}' cannot run now.`, resultType: "failure" };
    }
    const callId = this.id("call");
    const result = new Promise((resolve) => this.calls.set(callId, resolve));
    this.callTools.set(callId, tool);
    this.send({ type: "tool.invoke", callId, sessionId: this.sessionId, tool, args: args && typeof args === "object" && !Array.isArray(args) ? args : {} });
    return toCopilotResult(await result);
  }

  copilotTools() {
    return this.tools.map((t) => ({
      name: t.name,
      description: t.description ?? `${t.name} (from the Tap provider ${t.provider})`,
      parameters: t.parameters ?? { type: "object", properties: {} },
      defer: "never", // the model should see Tap tools without a tool search
      handler: (args) => this.invoke(t.name, args),
    }));
  }

  /** Debounced; waits for this process's tool calls to finish (a reload would cut them off). */
  scheduleReload() {
    debug("reload scheduled; calls in flight:", this.calls.size);
    clearTimeout(this.reloadTimer);
    this.reloadTimer = setTimeout(() => {
      this.reloadTimer = null;
      if (this.calls.size > 0) {
        this.reloadWanted = true;
        return;
      }
      this.reload();
    }, RELOAD_DEBOUNCE_MS);
  }

  reload() {
    debug("reloading with", this.tools.length, "tools");
    this.reloadWanted = false;
    this.reloading = true;
    // Closing first makes the gateway buffer everything for the new process (resume), so no
    // delivery lands in this one after the state is saved.
    this.ws?.close(1000, "extension reload");
    saveState({ sessionId: this.sessionId, resumeToken: this.resumeToken, tools: this.tools,
                revision: this.revision, busy: this.busy, queued: this.queued, report: this.report,
                startContext: this.startContext });
    this.session.rpc.extensions.reload().catch((e) => {
      this.reloading = false;
      this.log(`Tap: could not reload the extension to change its tools: ${e.message}`, "error");
      this.connect();
    });
  }

  /** The Copilot session ends: end the gateway session so it leaves `tap status` at once. */
  async end() {
    debug("ending; registered:", this.registered, "reloading:", this.reloading);
    if (this.reloading || this.ending) return;
    this.ending = true;
    // The process a reload started may still be joining when the session ends (the user
    // quit right after a tool change): let it finish, so the session ends now rather than
    // after the gateway's resume window.
    if (!this.registered && this.ws && this.joining) {
      await Promise.race([this.joining, new Promise((r) => setTimeout(r, END_WAIT_MS))]);
    }
    if (!this.registered) return this.ws?.close(1000);
    await this.request({ type: "session.end", sessionId: this.sessionId }, END_WAIT_MS).catch(() => {});
    this.ws?.close(1000, "session ended");
  }

  setBusy(busy) {
    if (this.busy === busy) return;
    this.busy = busy;
    if (this.registered) this.send(stateMessage(this));
  }

  event(event, data) {
    if (this.registered) this.send({ type: "session.event", sessionId: this.sessionId, event, data });
  }

}

/** The gateway just started, once it has written its files (bounded by GATEWAY_START_WAIT_MS);
 * else the last reason it cannot be found. */
async function waitForGateway() {
  const deadline = Date.now() + GATEWAY_START_WAIT_MS;
  for (;;) {
    const found = discover();
    if (!found.missing || Date.now() >= deadline) return found;
    await new Promise((r) => setTimeout(r, GATEWAY_START_POLL_MS));
  }
}

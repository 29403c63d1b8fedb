// tap-gateway copilot extension __TAP_VERSION__
// Written by `tap install copilot`; `tap uninstall copilot` removes it. Do not edit: the first
// line marks the file as Tap's, and `tap install copilot` replaces it on the next upgrade.
//
// A session host for the Tap gateway (docs/session-host-protocol.md): it registers this Copilot
// CLI session at the gateway's `/session` endpoint, offers the session's Tap tools to the model,
// asks the gateway before each tool use (onPreToolUse) and on each prompt (onUserPromptSubmitted),
// turns provider pushes into timeline lines and new turns, and reports busy/idle and events.
// Plain JS on purpose: the Copilot CLI runs it with its own Node (24, global WebSocket) and
// provides `@github/copilot-sdk/extension`; nothing is installed next to this file.

import { joinSession } from "@github/copilot-sdk/extension";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

// Limits and timeouts, named once.
/** How long the first join waits for a project's tools (tap.config.json) before joining without them. */
const FIRST_TOOLS_WAIT_MS = 5000;
/** Bound on reaching the gateway (socket, auth, register) before the first join. */
const CONNECT_TIMEOUT_MS = 3000;
/** Reconnect backoff: doubles from the first value up to the second while the gateway is away. */
const RECONNECT_MIN_MS = 250;
const RECONNECT_MAX_MS = 5000;
/** Tool-set changes closer together than this cause one reload. */
const RELOAD_DEBOUNCE_MS = 300;
/** The gateway answers a precheck within about 5 s (its gate deadline); a little more here. */
const PRECHECK_TIMEOUT_MS = 6000;
/** A callback transform may take 2 s per provider; prompts wait at most this long. */
const PROMPT_APPLY_TIMEOUT_MS = 8000;
/** On exit, how long to wait for the gateway to confirm `session.end`. */
const END_WAIT_MS = 1500;
// How long the CLI may take to say the session's mode or model (experimental `session.rpc`).
const REPORT_READ_MS = 2000;
/** A saved reload state older than this is ignored: the gateway keeps a detached host 30 s. */
const RESUME_WINDOW_MS = 25000;
/** The sections this host can place (as additional context); `safety` goes last. */
const SECTIONS = ["custom_instructions", "safety"];

const HOST_NAME = "copilot";
/** The profile (docs/clients.md, "Profiles") `tap install copilot --profile NAME` wrote here;
 * `TAP_COPILOT_PROFILE` in the CLI's environment overrides it for one run. */
const INSTALLED_PROFILE = null;
const profile = process.env.TAP_COPILOT_PROFILE || INSTALLED_PROFILE;
/** `TAP_COPILOT_DEBUG=<file>` appends a line per protocol step there (Copilot shows no extension output). */
const debugFile = process.env.TAP_COPILOT_DEBUG;
function debug(...parts) {
  if (debugFile) fs.appendFileSync(debugFile, `${new Date().toISOString()} [${process.pid}] ${parts.join(" ")}\n`);
}
const extDir = path.dirname(fileURLToPath(import.meta.url));
const stateDir = path.join(extDir, ".state");
const copilotSessionId = process.env.SESSION_ID;
const cwd = process.cwd();

/** `$TAP_HOME`, else the platform data directory, as `tap_client::default_home()` computes it. */
function tapHome() {
  if (process.env.TAP_HOME) return process.env.TAP_HOME;
  const home = os.homedir();
  if (process.platform === "darwin") return path.join(home, "Library", "Application Support", "tap");
  if (process.platform === "win32") return path.join(process.env.APPDATA ?? home, "tap");
  return path.join(process.env.XDG_DATA_HOME || path.join(home, ".local", "share"), "tap");
}

/** `{address, token}` of the running gateway, or a one-line reason it cannot be found. */
function discover() {
  const home = tapHome();
  try {
    const state = JSON.parse(fs.readFileSync(path.join(home, "gateway.json"), "utf8"));
    const token = fs.readFileSync(path.join(home, "host-token"), "utf8").trim();
    return { address: state.address, token };
  } catch (e) {
    return { error: e.code === "ENOENT" ? `no gateway running for ${home}` : `cannot read ${home}: ${e.message}` };
  }
}

/** Whether `dir` or a parent has a tap.config.json (then the gateway starts project providers). */
function hasProjectConfig(dir) {
  for (let d = dir; ; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, "tap.config.json"))) return true;
    if (path.dirname(d) === d) return false;
  }
}

// State handed from this process to the one `extensions.reload()` starts: the CLI relaunches
// the extension to change its tools, so the connection and what is queued must be carried over.
const stateFile = copilotSessionId && path.join(stateDir, `${copilotSessionId.replace(/[^\w.-]/g, "_")}.json`);

function takeSavedState() {
  if (!stateFile) return null;
  try {
    const saved = JSON.parse(fs.readFileSync(stateFile, "utf8"));
    fs.rmSync(stateFile, { force: true });
    return Date.now() - saved.savedAt < RESUME_WINDOW_MS ? saved : null;
  } catch {
    return null;
  }
}

function saveState(state) {
  fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const tmp = `${stateFile}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify({ ...state, savedAt: Date.now() }), { mode: 0o600 });
  fs.renameSync(tmp, stateFile);
}

/** What a tool set looks like to the model: a change in it needs a reload. */
const signature = (tools) => JSON.stringify(tools.map((t) => [t.name, t.description ?? "", t.parameters ?? {}]));

/** A `tool.result` as a Copilot tool result. */
function toCopilotResult(msg) {
  if (msg.errorCode) {
    const text = `${msg.errorCode}: ${msg.error ?? "tool failed"}`;
    return { textResultForLlm: text, resultType: "failure", error: text };
  }
  const data = msg.data;
  if (data && typeof data === "object" && data.file && typeof data.file.path === "string") {
    const f = data.file;
    return { textResultForLlm: `File result: ${f.path} (${f.mimeType ?? "unknown type"}, ${f.size ?? "?"} bytes, readable until ${f.expiresAt ?? "?"})`, resultType: "success" };
  }
  return { textResultForLlm: typeof data === "string" ? data : JSON.stringify(data ?? null), resultType: "success" };
}

/** The connection to the gateway and everything this session host keeps across reconnects. */
class Host {
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
    this.ws = null;
    this.registered = false;
    this.nextId = 0;
    this.pending = new Map(); // requestId → {resolve, reject, timer}
    this.calls = new Map(); // callId → resolve
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

  /** Connects (resuming when it can) and registers; resolves true when the session is registered. */
  connect() {
    const found = discover();
    debug("connect:", found.error ?? found.address);
    if (found.error) return Promise.resolve(this.away(found.error));
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
    this.send(this.stateMessage());
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
        return this.deliver(msg);
      case "session.warning":
        this.firstTools?.resolve(); // a project provider that cannot start will not send tools
        return this.log(`Tap: ${msg.message}`, "warning");
      case "session.context":
        return this.log(`Tap (${msg.provider}): ${msg.startupContext}`);
      case "session.ended":
        if (msg.sessionId === this.sessionId && !this.ending) {
          // "gateway stopping": the socket closes next and the reconnect registers again.
          this.registered = false;
        }
        answered?.resolve(msg);
        if (answered) this.pending.delete(msg.requestId);
        return;
      default:
        return; // tool.progress and anything newer: nothing to show
    }
  }

  /** `surface` → a line in the timeline; `inject` → the line and a new turn with its prompt. */
  deliver(d) {
    // Sent at once even when a reload is due: the CLI queues the turn, and a prompt-mode CLI
    // (`copilot -p`) would exit before a reloaded process could send it.
    if (!this.session || this.reloading) {
      this.queued.push({ kind: "delivery", delivery: d });
      return;
    }
    const source = d.stream && d.stream !== d.provider ? `${d.provider}/${d.stream}` : d.provider;
    this.session.log(`[${source}] ${d.event}`).catch(() => {});
    if (d.level === "inject") {
      this.session.send({ prompt: d.prompt ?? d.event }).catch((e) => this.log(`Tap: could not start a turn for ${source}: ${e.message}`, "warning"));
    }
  }

  flushQueued() {
    const queued = this.queued;
    this.queued = [];
    for (const q of queued) {
      if (q.kind === "log") this.log(q.text, q.level);
      else this.deliver(q.delivery);
    }
  }

  async invoke(tool, args) {
    if (!this.registered) {
      return { textResultForLlm: `The Tap gateway is not reachable, so '${tool}' cannot run now.`, resultType: "failure" };
    }
    const callId = this.id("call");
    const result = new Promise((resolve) => this.calls.set(callId, resolve));
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
                revision: this.revision, busy: this.busy, queued: this.queued, report: this.report });
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
    if (this.registered) this.send(this.stateMessage());
  }

  /** `session.state` with what the CLI told of the agent (docs/session-host-protocol.md,
   * "Host capabilities"). */
  stateMessage() {
    return { type: "session.state", sessionId: this.sessionId, state: this.busy ? "busy" : "idle", ...this.report };
  }

  /** Records a change of mode, model or capabilities and tells the gateway. Texts are cut
   * to the gateway's limit (MAX_HOST_REPORT_TEXT_LEN): a longer one would refuse the whole
   * message, busy state included. */
  setReport(changes) {
    const cut = (t) => (typeof t === "string" ? t.slice(0, 128) : undefined);
    if ("mode" in changes && cut(changes.mode)) this.report.mode = cut(changes.mode);
    if ("model" in changes && cut(changes.model)) this.report.model = cut(changes.model);
    if (changes.capabilities) this.report.capabilities = changes.capabilities;
    if (this.registered) this.send(this.stateMessage());
  }

  /** What the CLI's extension API says of this session: `session.capabilities` (its UI:
   * `session.ui.confirm` and `.elicitation` both need `ui.elicitation`), and, through the
   * experimental `session.rpc`, the mode and the model. Each read is bounded: a CLI that
   * does not answer one leaves that field out. Modes are not listed: whether an extension
   * may call `session.rpc.mode.set` is not established, so Tap does not claim it can. */
  async learnReport() {
    const s = this.session;
    const within = (p) => Promise.race([Promise.resolve().then(p), new Promise((r) => setTimeout(() => r(undefined), REPORT_READ_MS))]).catch(() => undefined);
    const elicitation = s?.capabilities?.ui?.elicitation === true;
    // At once, before any tool call of this session can reach the gateway.
    this.setReport({ capabilities: { ui: { confirm: elicitation, elicitation }, client: { name: "copilot-cli" } } });
    const mode = await within(() => s.rpc.mode.get());
    if (typeof mode === "string") this.setReport({ mode });
    const model = await within(() => s.rpc.model.getCurrent());
    if (typeof model?.modelId === "string") this.setReport({ model: model.modelId });
  }

  event(event, data) {
    if (this.registered) this.send({ type: "session.event", sessionId: this.sessionId, event, data });
  }

  async preToolUse(input) {
    if (!this.registered) return undefined;
    const args = input.toolArgs && typeof input.toolArgs === "object" && !Array.isArray(input.toolArgs) ? input.toolArgs : {};
    try {
      const d = await this.request({ type: "tool.precheck", sessionId: this.sessionId, tool: input.toolName, args }, PRECHECK_TIMEOUT_MS);
      if (d.decision === "deny") return { permissionDecision: "deny", permissionDecisionReason: d.reason ?? "Denied by a Tap provider." };
      if (d.decision === "context" && d.context) return { additionalContext: d.context };
    } catch (e) {
      // Without an answer the providers' rules cannot apply; their gates deny by themselves
      // when they must (fail-closed gates answer the gateway, not us).
      this.log(`Tap: no pre-tool-use decision for ${input.toolName} (${e.message}); allowed.`, "warning");
    }
    return undefined;
  }

  async promptSubmitted(input) {
    if (!this.registered) return undefined;
    try {
      const sections = Object.fromEntries(SECTIONS.map((s) => [s, ""]));
      const a = await this.request({ type: "prompt.apply", sessionId: this.sessionId, prompt: input.prompt, sections }, PROMPT_APPLY_TIMEOUT_MS);
      const parts = [a.sections?.custom_instructions, ...(a.context ?? []), a.sections?.safety].filter((p) => p && p.trim());
      if (parts.length > 0) return { additionalContext: parts.join("\n\n") };
    } catch (e) {
      this.log(`Tap: prompt transforms and context were not applied (${e.message}).`, "warning");
    }
    return undefined;
  }
}

/** The providers' tools of a set: every set also holds the gateway's built-in tap_* tools
 * (provider "tap") from its first revision on, and the first prompt waits for the project's. */
function fromProviders(tools) {
  return tools.filter((t) => t.provider !== "tap");
}

const saved = takeSavedState();
const host = new Host(saved);
// The CLI stops extensions with SIGTERM when it exits. Not onSessionEnd: in prompt mode it
// fires before the turns queued by inject pushes have run. Installed before anything is
// awaited: the CLI may run this process's hooks, and exit, before `joinSession` resolves,
// and without the handler the default action would kill the process with its session
// still registered (left for the gateway's resume window instead of ending at once).
process.on("SIGTERM", () => host.end().finally(() => process.exit(0)));

// Before joining: the tools the first prompt should see. After a reload the saved set is the
// current one; on a fresh start a project with tap.config.json, or a gateway whose
// every-session providers (its MCP servers) are adding tools, gets a bounded wait for them.
const connected = await Promise.race([
  host.connect(),
  new Promise((r) => setTimeout(() => r(false), CONNECT_TIMEOUT_MS)),
]);
if (!connected && !host.ws) host.reconnectLater();
if (connected && !saved && fromProviders(host.tools).length === 0 && (hasProjectConfig(cwd) || host.toolsPending)) {
  let resolveFirst;
  const first = new Promise((r) => (resolveFirst = r));
  host.firstTools = { resolve: resolveFirst };
  const timer = setTimeout(resolveFirst, FIRST_TOOLS_WAIT_MS);
  await first;
  clearTimeout(timer);
  host.firstTools = null;
  if (fromProviders(host.tools).length === 0 && hasProjectConfig(cwd)) host.log(`Tap: the project's providers offered no tools within ${FIRST_TOOLS_WAIT_MS} ms; they are added when they arrive.`, "warning");
}

host.joinedSignature = signature(host.tools);
const toolNames = new Map(); // toolCallId → toolName, for tool.execution_complete
host.session = await joinSession({
  tools: host.copilotTools(),
  hooks: {
    onPreToolUse: (input) => host.preToolUse(input),
    onUserPromptSubmitted: (input) => host.promptSubmitted(input),
  },
});
host.session.on((e) => {
  switch (e.type) {
    case "assistant.turn_start":
      return host.setBusy(true);
    case "session.idle":
      return host.setBusy(false);
    case "session.mode_changed":
      return host.setReport({ mode: e.data.newMode });
    case "session.model_change":
      return host.setReport({ model: e.data.newModel });
    case "user.message":
      return host.event("user.message", { content: e.data.content });
    case "assistant.message":
      if (e.data.content) host.event("assistant.message", { content: e.data.content });
      return;
    case "tool.execution_start":
      toolNames.set(e.data.toolCallId, e.data.toolName);
      return;
    case "tool.execution_complete":
      host.event("tool.execution_complete", { toolName: toolNames.get(e.data.toolCallId), toolCallId: e.data.toolCallId, success: e.data.success });
      toolNames.delete(e.data.toolCallId);
      return;
    default:
      return;
  }
});
// Not awaited: the queued deliveries and the first prompt do not wait for it.
host.learnReport().catch(() => {});
debug("joined with tools:", host.tools.map((t) => t.name).join(",") || "-", saved ? "(after a reload)" : "");
host.flushQueued();
// Tool-set changes that arrived while joining.
if (signature(host.tools) !== host.joinedSignature) host.scheduleReload();

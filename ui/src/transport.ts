// The one file that talks to the gateway, and the one file of the panel that knows about
// the desktop app (Tauri).
//
// In a browser tab served by `tap gateway`, the panel logs in over HTTP (`POST /api/login`,
// from a one-time `tap ui` link) and speaks the control protocol over a WebSocket to
// `ws://<this host>/control`.
//
// In the desktop app's webview (Tauri, origin `tauri://localhost`), the app hosts the
// engine in-process and hands the panel `{url, token}` through an IPC command
// (`control_endpoint`): no login link, and the token stays in memory (never in a URL or in
// storage). The frames then go over the same WebSocket, to `ws://127.0.0.1:PORT/control`
// (the gateway accepts the webview's origin). `desktop` exposes the few things only the app
// can do (login item, secret storage notice, windows, opening the system browser); it is
// null in a browser. `openInBrowser` opens a page in the user's browser from either.
//
// Every other module sees only `login()`/`connect()`, the typed `Connection` and `desktop`.

import type { ControlError, ControlEvent, ControlMethods, ServerFrame, Snapshot } from "./generated";
import { DesktopCommand, type DesktopCommands, type Endpoint, type IpcError, type NoArgs } from "./desktop-generated";

/** A method's params and result, from the generated method map. */
export type Method = keyof ControlMethods;
export type Params<M extends Method> = ControlMethods[M]["params"];
export type Result<M extends Method> = ControlMethods[M]["result"];

/** A failed request, carrying the gateway's machine-readable code. */
export class RpcError extends Error {
  constructor(
    readonly code: ControlError["code"],
    message: string,
  ) {
    super(message);
    this.name = "RpcError";
  }
}

/** Why an authenticated connection ended (the gateway stopped, the network failed…). */
export interface CloseReason {
  message: string;
}

/** What a live connection reports, besides responses to its own requests. */
export interface ConnectionHandlers {
  /** An event frame, with its per-connection sequence number. */
  onEvent(seq: number, event: ControlEvent): void;
  /** The connection is gone (never called twice). */
  onClose(reason: CloseReason): void;
}

/** An authenticated control connection. */
export interface Connection {
  /** Sends one request; resolves with its result or rejects with an `RpcError`. */
  rpc<M extends Method>(method: M, params: Params<M>): Promise<Result<M>>;
  /** Closes the connection (no `onClose` call follows). */
  close(): void;
}

// ---- The desktop app (Tauri) ------------------------------------------------------------

/** The part of Tauri's IPC bridge this file uses (injected by Tauri before any page script). */
interface TauriIpc {
  invoke<T>(command: string, args?: Record<string, unknown>): Promise<T>;
}

/** Tauri's IPC when running in the desktop app's webview, else null. */
const tauri: TauriIpc | null = (() => {
  const internals = (globalThis as { __TAURI_INTERNALS__?: Partial<TauriIpc> }).__TAURI_INTERNALS__;
  return internals && typeof internals.invoke === "function" ? (internals as TauriIpc) : null;
})();

/**
 * A failed desktop command. `code` is the app's `IpcError` code (crates/tap-desktop-core/src/ipc.rs);
 * `IPC` when Tauri itself refused the call (unknown command, bad arguments: a plain string).
 */
export class DesktopError extends Error {
  constructor(
    readonly code: IpcError["code"] | "IPC",
    message: string,
  ) {
    super(message);
    this.name = "DesktopError";
  }
}

function isIpcError(e: unknown): e is IpcError {
  return typeof e === "object" && e !== null && typeof (e as IpcError).code === "string" && typeof (e as IpcError).message === "string";
}

/** A desktop command's wire name, its args and its result, from the generated command map. */
type Command = keyof DesktopCommands;
type Args<C extends Command> = DesktopCommands[C]["args"];
type Reply<C extends Command> = DesktopCommands[C]["result"];

/** A command's arguments: none at all for a command that takes none (`NoArgs`). */
type CallArgs<C extends Command> = NoArgs extends Args<C> ? [] : [Args<C>];

/** Calls an app command (named from `DesktopCommand`); rejects with a `DesktopError`. A command
 * without arguments is invoked without any, as it always was on the wire. */
function call<C extends Command>(ipc: TauriIpc, command: C, ...args: CallArgs<C>): Promise<Reply<C>> {
  return ipc.invoke<Reply<C>>(command, args[0]).catch((e: unknown) => {
    throw isIpcError(e) ? new DesktopError(e.code, e.message) : new DesktopError("IPC", String(e));
  });
}

const C = DesktopCommand;

/** What only the desktop app can do; `desktop` is null in a browser. Failures reject with a `DesktopError`. */
export interface DesktopBridge {
  getAutostart(): Promise<Reply<typeof C.getAutostart>>;
  setAutostart(on: Args<typeof C.setAutostart>["on"]): Promise<Reply<typeof C.setAutostart>>;
  /** null when the OS keyring holds the secrets; otherwise a sentence for the panel's notice */
  secretStorageNotice(): Promise<Reply<typeof C.secretStorageNotice>>;
  openPanel(): Promise<Reply<typeof C.openPanel>>; // from the popup
  hideWindow(): Promise<Reply<typeof C.hideWindow>>; // the calling window hides itself (popup)
  /** the popup's content is `height` CSS px tall: the app sizes its window to it, within bounds */
  fitPopup(height: Args<typeof C.fitPopup>["height"]): Promise<Reply<typeof C.fitPopup>>;
  /** the popup says what it shows first: its window takes the title that names it */
  popupShows(shows: Args<typeof C.popupShows>["shows"]): Promise<Reply<typeof C.popupShows>>;
  /** the page has drawn its first frame: the app logs how long the window took to open */
  pageRendered(): Promise<Reply<typeof C.pageRendered>>;
  /** opens an http(s) URL in the user's own browser (not in a window of the app) */
  openUrl(url: Args<typeof C.openUrl>["url"]): Promise<Reply<typeof C.openUrl>>;
}

export const desktop: DesktopBridge | null = tauri && {
  getAutostart: () => call(tauri, C.getAutostart),
  setAutostart: (on) => call(tauri, C.setAutostart, { on }),
  secretStorageNotice: () => call(tauri, C.secretStorageNotice),
  openPanel: () => call(tauri, C.openPanel),
  hideWindow: () => call(tauri, C.hideWindow),
  fitPopup: (height) => call(tauri, C.fitPopup, { height }),
  popupShows: (shows) => call(tauri, C.popupShows, { shows }),
  pageRendered: () => call(tauri, C.pageRendered),
  openUrl: (url) => call(tauri, C.openUrl, { url }),
};

/** Whether `url` is an absolute http or https URL, the only kind `openInBrowser` opens. */
export function isWebUrl(url: string): boolean {
  try {
    const u = new URL(url);
    return (u.protocol === "https:" || u.protocol === "http:") && u.host !== "";
  } catch {
    return false;
  }
}

/**
 * Opens `url` (http or https only) in the user's browser: in the desktop app through the
 * shell (`open_url`: the system's browser, since the webview opens no other windows); in a
 * browser tab as a new tab with no way back to this one (`noopener`). Call it from a click
 * (a browser may block a tab opened later). Rejects when the URL is refused or the app could
 * not start the browser; a browser's popup blocker cannot be seen (`noopener` hides the new
 * tab), so callers also show the link.
 */
export async function openInBrowser(url: string): Promise<void> {
  if (!isWebUrl(url)) throw new Error(`Not opened: only http and https addresses are (${url})`);
  if (desktop) {
    await desktop.openUrl(url);
    return;
  }
  window.open(url, "_blank", "noopener");
}

/** The app's gateway, as `control_endpoint` reported it (desktop only; kept in memory). */
let desktopEndpoint: Endpoint | null = null;

/** Asks the desktop app where its gateway is and for the control token. */
async function desktopLogin(ipc: TauriIpc): Promise<string | null> {
  try {
    desktopEndpoint = await call(ipc, C.controlEndpoint);
    return null;
  } catch (e) {
    desktopEndpoint = null;
    return `The desktop app did not hand over its gateway's address: ${(e as DesktopError).message}`;
  }
}

// ---- Login ---------------------------------------------------------------------------------

/** Where the control token lives between reloads of this tab (never in a URL, never in localStorage). */
const TOKEN_KEY = "tap.controlToken";

export function storedToken(): string | null {
  if (tauri) return desktopEndpoint?.token ?? null;
  try {
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

export function forgetToken(): void {
  if (tauri) {
    desktopEndpoint = null;
    return;
  }
  try {
    sessionStorage.removeItem(TOKEN_KEY);
  } catch {
    /* storage disabled: nothing was kept */
  }
}

/**
 * Handles a one-time login link (`/#login=CODE`): takes the code out of the address bar at
 * once (so it is neither bookmarked nor left in history), exchanges it for the control token
 * and keeps that in sessionStorage. Returns an error sentence when the exchange failed, null
 * when there was nothing to do or it worked. In the desktop app, gets the token from the app.
 */
export async function loginFromLocation(): Promise<string | null> {
  // In the desktop app there is no login link: the app hands the token over.
  if (tauri) return desktopLogin(tauri);
  const match = /(?:^#|&)login=([^&]+)/.exec(location.hash);
  if (!match) return null;
  history.replaceState(null, "", location.pathname + location.search);
  let response: Response;
  try {
    response = await fetch("/api/login", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ code: decodeURIComponent(match[1]) }),
      credentials: "omit",
      cache: "no-store",
    });
  } catch (e) {
    return `Cannot reach the gateway: ${String(e)}`;
  }
  let body: { controlToken?: unknown; error?: unknown } = {};
  try {
    body = await response.json();
  } catch {
    /* not JSON: reported below */
  }
  if (response.ok && typeof body.controlToken === "string") {
    sessionStorage.setItem(TOKEN_KEY, body.controlToken);
    return null;
  }
  const why = typeof body.error === "string" ? body.error : `HTTP ${response.status}`;
  return `This login link did not work (${why}). Links work once and for two minutes: run \`tap ui\` for a new one.`;
}

/** The control endpoint: the desktop app's gateway, or the gateway that served this page. */
function controlUrl(): string {
  if (desktopEndpoint) return desktopEndpoint.url;
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}/control`;
}

type Pending = { resolve(value: unknown): void; reject(error: Error): void };

/**
 * Opens the control connection and authenticates with `token`. Resolves with the connection
 * and the snapshot `auth` returned; rejects with an `RpcError` (`AUTH_FAILED`: the token is
 * no longer valid, e.g. the gateway restarted) or an `Error` when the socket failed.
 */
export function connect(token: string, handlers: ConnectionHandlers): Promise<{ connection: Connection; snapshot: Snapshot }> {
  return new Promise((resolveConnect, rejectConnect) => {
    const ws = new WebSocket(controlUrl());
    const pending = new Map<string, Pending>();
    let nextId = 1;
    let authenticated = false;
    let closedByUs = false;
    let authError: RpcError | null = null;

    const send = (id: string, method: string, params: unknown) =>
      ws.send(JSON.stringify({ type: "request", id, method, params }));

    const connection: Connection = {
      rpc(method, params) {
        return new Promise((resolve, reject) => {
          if (ws.readyState !== WebSocket.OPEN) {
            reject(new RpcError("DISCONNECTED", "Not connected to the gateway"));
            return;
          }
          const id = `r${nextId++}`;
          pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
          send(id, method, params);
        });
      },
      close() {
        closedByUs = true;
        ws.close(1000);
      },
    };

    ws.onopen = () => {
      pending.set("auth", {
        resolve(snapshot) {
          authenticated = true;
          resolveConnect({ connection, snapshot: snapshot as Snapshot });
        },
        reject(error) {
          authError = error instanceof RpcError ? error : new RpcError("AUTH_FAILED", error.message);
        },
      });
      send("auth", "auth", { token });
    };

    ws.onmessage = (message) => {
      let frame: ServerFrame;
      try {
        frame = JSON.parse(String(message.data)) as ServerFrame;
      } catch {
        return; // the gateway only sends JSON; ignore anything else rather than crash
      }
      if (frame.type === "event") {
        if (authenticated) handlers.onEvent(frame.seq, frame.event);
        return;
      }
      const waiter = frame.id === null ? undefined : pending.get(frame.id);
      if (!waiter) return;
      pending.delete(frame.id as string);
      if ("error" in frame) waiter.reject(new RpcError(frame.error.code, frame.error.message));
      else waiter.resolve(frame.result);
    };

    ws.onclose = (event) => {
      const failure = new RpcError("DISCONNECTED", "The connection to the gateway closed");
      for (const waiter of pending.values()) waiter.reject(failure);
      pending.clear();
      if (!authenticated) {
        rejectConnect(authError ?? new Error(`Cannot reach the gateway's control plane (${event.code || "no answer"})`));
        return;
      }
      if (closedByUs) return;
      const message = event.code === 1001 ? "The gateway stopped" : `The connection to the gateway closed (${event.code})`;
      handlers.onClose({ message });
    };
  });
}

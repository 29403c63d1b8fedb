import { useEffect, useRef } from "preact/hooks";
import type { PairingEntry, SessionStatus } from "../generated";
import { store, useNow, type PanelState } from "../store";
import { desktop } from "../transport";
import { ConfirmButton } from "../components/ConfirmButton";
import { CodeAndCountdown, SessionPicker, configure, useAction, who } from "./Pairing";
import { ApprovalsPopup, useWaitingCalls } from "./popup/ApprovalsPopup";
import { HeldPopup, useHeldInPopup } from "./popup/HeldPopup";

/** What the popup shows first, which names its window (`popup_shows`). */
type Shows = "calls" | "held" | "pairing";
const LABELS: Record<Shows, string> = { calls: "Tool calls waiting for approval", held: "Held tool definitions", pairing: "Pending pairing requests" };

/**
 * The tray popup (`?view=popup`): the tool calls waiting for approval (popup/ApprovalsPopup),
 * the held tool definitions when the tray's line for them opened it (popup/HeldPopup), and
 * the pending pairing requests, compact, live. When the last of them is resolved (here, in
 * the panel, from the CLI, by the provider, or by expiry) the desktop app's popup window
 * hides itself. Its window is named for what it shows first.
 */
export function Popup({ state }: { state: PanelState }) {
  const now = useNow(1000);
  const pending = state.pairings.filter((p) => p.state === "pending");
  const sessions = state.status?.sessions ?? [];
  const calls = useWaitingCalls();
  const { held, keep, refresh } = useHeldInPopup();
  const waiting = pending.length + calls.length + held.length;
  const shows: Shows = calls.length > 0 ? "calls" : held.length > 0 ? "held" : "pairing";
  useEffect(() => {
    desktop?.popupShows(shows).catch(() => {});
  }, [shows]);
  const hadSome = useRef(false);

  useEffect(() => {
    if (waiting > 0) {
      hadSome.current = true;
    } else if (hadSome.current) {
      hadSome.current = false;
      desktop?.hideWindow().catch(() => {});
    }
  }, [waiting]);

  const main = useRef<HTMLElement>(null);
  useWantedHeight(main);

  const live = state.phase.kind === "live";
  return (
    <main class="popup" id="main" ref={main} aria-label={LABELS[shows]}>
      {calls.length > 0 && (
        <>
          <header class="popup-head">
            <h1>
              Tool calls waiting<span class="badge attention">{calls.length}</span>
            </h1>
            <OpenPanel />
          </header>
          <ApprovalsPopup calls={calls} sessions={sessions} now={now} />
        </>
      )}
      {held.length > 0 && (
        <>
          <header class="popup-head">
            <h1>
              Held tool definitions<span class="badge attention">{held.length}</span>
            </h1>
            {calls.length === 0 && <OpenPanel />}
          </header>
          <HeldPopup held={held} live={live} keep={keep} refresh={refresh} />
        </>
      )}
      {(shows === "pairing" || pending.length > 0) && (
        <header class="popup-head">
          <h1>
            Pairing requests{pending.length > 0 && <span class="badge attention">{pending.length}</span>}
          </h1>
          {shows === "pairing" && <OpenPanel />}
        </header>
      )}
      {!live && (
        <p class="notice" role="status">
          {state.phase.kind === "connecting" ? "Connecting to the gateway…" : "Not connected"}
        </p>
      )}
      {shows !== "pairing" && pending.length === 0 ? null : pending.length === 0 ? (
        <p class="empty" role="status" data-testid="popup-empty">
          No pending requests
        </p>
      ) : (
        <>
          <ul class="popup-list">
            {pending.map((entry) => (
              <PopupRequest key={entry.id} entry={entry} sessions={sessions} now={now} />
            ))}
          </ul>
          {pending.length > 1 && (
            <div class="popup-foot">
              <ConfirmButton
                label="Deny all"
                question={`Deny all ${pending.length}?`}
                confirmLabel="Deny all"
                onConfirm={() => store.call("pairing.denyAll", {})}
              />
            </div>
          )}
        </>
      )}
    </main>
  );
}

function PopupRequest({ entry, sessions, now }: { entry: PairingEntry; sessions: SessionStatus[]; now: number }) {
  const [error, act] = useAction();
  return (
    <li class="popup-request" aria-label={`Pairing request from ${who(entry)}`} data-pairing-id={entry.id}>
      <CodeAndCountdown entry={entry} now={now} />
      <p class="popup-origin">
        <span class="muted small">From </span>
        <span class="mono" data-testid="pairing-origin">
          {entry.origin ?? "a local program (no origin)"}
        </span>
        {entry.name && <span class="small muted"> · {entry.name}</span>}
      </p>
      <div class="popup-actions">
        <label class="field grow">
          <span>Session</span>
          <SessionPicker entry={entry} sessions={sessions} onPick={(session) => act(() => configure({ id: entry.id, session }))} />
        </label>
        <ConfirmButton
          label="Deny"
          ariaLabel={`Deny request ${entry.code ?? ""}`}
          question="Deny?"
          confirmLabel="Yes, deny"
          onConfirm={() => store.call("pairing.deny", { id: entry.id })}
        />
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </li>
  );
}

/**
 * Reports how tall the popup's content wants to be (CSS px): as `data-wanted-height` on
 * `<main>` (the tests read it) and, in the desktop app, to the app, which sizes the window
 * to it within its bounds (crates/tap-desktop-core/src/popup.rs). The list's full
 * height counts, not the part shown, so a list that scrolls asks for more room.
 */
function useWantedHeight(main: { current: HTMLElement | null }) {
  useEffect(() => {
    const el = main.current;
    if (!el) return;
    let last = -1;
    const measure = () => {
      const list = el.querySelector<HTMLElement>(".popup-list");
      const last_child = el.lastElementChild as HTMLElement | null;
      if (!last_child) return;
      const style = getComputedStyle(el);
      const top = el.getBoundingClientRect().top;
      const bottom = last_child.getBoundingClientRect().bottom;
      const hidden = list ? list.scrollHeight - list.clientHeight : 0;
      const wanted = Math.ceil(bottom - top + parseFloat(style.paddingBottom) + hidden);
      if (wanted === last) return;
      last = wanted;
      el.dataset.wantedHeight = String(wanted);
      // A fit the app refused is asked for again at the next change, not taken as done.
      desktop?.fitPopup(wanted).catch(() => {
        if (last === wanted) last = -1;
      });
    };
    // Content changes (requests come and go, an error line appears) and font loading
    // change the height; the observer sees the children, the mutation observer new ones.
    const resize = new ResizeObserver(measure);
    const watch = () => {
      resize.disconnect();
      resize.observe(el);
      for (const child of Array.from(el.querySelectorAll(".popup-head, .popup-list, .popup-list > li, .popup-foot, .popup-keys, .notice, .empty"))) resize.observe(child);
      measure();
    };
    const mutations = new MutationObserver(watch);
    mutations.observe(el, { childList: true, subtree: true });
    watch();
    return () => {
      resize.disconnect();
      mutations.disconnect();
    };
  }, []);
}

/** In the desktop app, asks it to show the panel window; in a browser, a link to the panel. */
function OpenPanel() {
  if (desktop) {
    const bridge = desktop;
    return (
      <button type="button" class="btn link" onClick={() => void bridge.openPanel().catch(() => {})}>
        Open panel
      </button>
    );
  }
  return (
    // Same tab: the tab's login (sessionStorage) carries over to the full panel.
    <a class="btn link" href="/#/pairing">
      Open panel
    </a>
  );
}

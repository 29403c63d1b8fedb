import { useEffect, useState } from "preact/hooks";
import type { SessionStatus, WaitingCall } from "../../generated";
import { countdown } from "../../format";
import { useMethod } from "../../method";
import { store } from "../../store";
import { showArgs } from "../approvals/args";
import "./approvals-popup.css";

// The tray popup's tool-call approvals (docs/approvals.md, "From the tray"): every call
// waiting for the user, oldest first, each with what the user decides from (tool, provider,
// session and client, the arguments masked and folded, the tool's annotations, why it is
// asked, the time left) and the answers. The selected call (the first, or the one clicked
// or moved to with ↑/↓) answers to the keyboard: A approve once, S for this session, H for 1
// hour, D deny. "Always" has no key: a grant for good takes a click.

/** Where the 400 px popup folds values: shorter than the panel's prompt. */
const POPUP_FOLD = { chars: 120, items: 10 };

/** One of the popup's answers. */
type Answer = "once" | "session" | "hour" | "always" | "deny";

const ANSWERS: readonly { answer: Answer; label: string; key?: string; title: string }[] = [
  { answer: "once", label: "Approve once", key: "a", title: "Let this call through; the next one is asked again (A)" },
  { answer: "session", label: "For this session", key: "s", title: "Let every call of this tool in this session through (S)" },
  { answer: "hour", label: "For 1 hour", key: "h", title: "Let every call of this tool through for an hour (H)" },
  { answer: "always", label: "Always", title: "Let every call of this tool through until the grant is revoked" },
  { answer: "deny", label: "Deny", key: "d", title: "Refuse this call; the next one is asked again (D)" },
];

function answer(call: WaitingCall, a: Answer): Promise<unknown> {
  switch (a) {
    case "once":
      return store.call("approvals.approve", { id: call.id });
    case "session":
      return store.call("approvals.approve", { id: call.id, for: "session" });
    case "hour":
      return store.call("approvals.approve", { id: call.id, for: "minutes", minutes: 60 });
    case "always":
      return store.call("approvals.approve", { id: call.id, for: "always" });
    case "deny":
      return store.call("approvals.deny", { id: call.id });
  }
}

/**
 * The calls waiting for approval: `approvals.list`, asked again on every `approval.waiting`
 * and `approval.resolved` event (and after a reconnect), never on a timer.
 */
export function useWaitingCalls(): WaitingCall[] {
  const { data } = useMethod("approvals.list", {}, { on: ["approval.waiting", "approval.resolved"] });
  return data?.waiting ?? [];
}

/** The MCP annotations a user decides from, in words (`destructiveHint: true` → "destructive"). */
function annotationWords(annotations: WaitingCall["annotations"]): string[] {
  if (!annotations) return [];
  const words: string[] = [];
  if (annotations.destructiveHint === true) words.push("destructive");
  if (annotations.readOnlyHint === true) words.push("read-only");
  if (annotations.idempotentHint === true) words.push("idempotent");
  if (annotations.openWorldHint === true) words.push("open world");
  if (typeof annotations.title === "string") words.push(`“${annotations.title}”`);
  return words;
}

export function ApprovalsPopup({ calls, sessions, now }: { calls: WaitingCall[]; sessions: SessionStatus[]; now: number }) {
  const [selected, setSelected] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const current = calls.find((c) => c.id === selected) ?? calls[0];

  const send = (call: WaitingCall, a: Answer) => {
    if (busy) return;
    setBusy(call.id);
    setError(null);
    answer(call, a)
      .catch((e) => setError(e instanceof Error ? e.message : String(e)))
      .finally(() => setBusy(null));
  };

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.ctrlKey || e.metaKey || e.altKey || !current) return;
      if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement || e.target instanceof HTMLTextAreaElement) return;
      const i = calls.findIndex((c) => c.id === current.id);
      if (e.key === "ArrowDown" || e.key === "ArrowUp") {
        const next = calls[Math.max(0, Math.min(calls.length - 1, i + (e.key === "ArrowDown" ? 1 : -1)))];
        setSelected(next.id);
        document.getElementById(`approval-${next.id}`)?.scrollIntoView({ block: "nearest" });
        e.preventDefault();
        return;
      }
      const hit = ANSWERS.find((x) => x.key === e.key.toLowerCase());
      if (hit) {
        e.preventDefault();
        send(current, hit.answer);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  });

  return (
    <section class="approvals-popup" aria-label="Tool calls waiting for approval">
      <ul class="popup-list approvals-list">
        {calls.map((call) => (
          <WaitingItem
            key={call.id}
            call={call}
            label={call.sessionLabel ?? sessions.find((s) => s.id === call.sessionId)?.label ?? undefined}
            now={now}
            selected={call.id === current?.id}
            busy={busy === call.id}
            onSelect={() => setSelected(call.id)}
            onAnswer={(a) => send(call, a)}
          />
        ))}
      </ul>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <p class="popup-keys muted small" data-testid="approval-keys">
        Keys: <kbd>A</kbd> once · <kbd>S</kbd> session · <kbd>H</kbd> 1 hour · <kbd>D</kbd> deny · <kbd>↑</kbd>/<kbd>↓</kbd> choose
      </p>
    </section>
  );
}

function WaitingItem(props: {
  call: WaitingCall;
  /** The session's label (the call's own, else the status's). */
  label?: string;
  now: number;
  selected: boolean;
  busy: boolean;
  onSelect: () => void;
  onAnswer: (a: Answer) => void;
}) {
  const { call, now, selected, busy } = props;
  const [whole, setWhole] = useState(false);
  const shown = showArgs(call.args, whole ? null : POPUP_FOLD);
  const words = annotationWords(call.annotations);
  const left = Date.parse(call.deadline) - now;
  const session = props.label ? `${props.label} (${call.sessionId})` : call.sessionId;
  return (
    <li
      id={`approval-${call.id}`}
      class={`popup-request approval${selected ? " selected" : ""}`}
      aria-label={`Tool call ${call.tool} from ${call.provider} waiting for approval`}
      aria-current={selected ? "true" : undefined}
      data-approval-id={call.id}
      onClick={props.onSelect}
    >
      <div class="approval-head">
        <span class="approval-tool mono" data-testid="approval-tool">
          {call.tool}
        </span>
        <span class="muted small" title="When it is denied unanswered">
          {left > 0 ? countdown(left) : "0:00"}
        </span>
      </div>
      <dl class="approval-facts small">
        <dt>From</dt>
        <dd class="mono" data-testid="approval-provider">
          {call.provider}
        </dd>
        <dt>Session</dt>
        <dd>
          <span class="mono">{session}</span>
          {call.client && <span class="muted"> · {call.client}</span>}
          {call.profile && <span class="muted"> · profile {call.profile}</span>}
        </dd>
        <dt>Asked</dt>
        <dd>
          {call.why}
          {call.reason && <span class="muted"> — {call.reason}</span>}
        </dd>
      </dl>
      {words.length > 0 && (
        <p class="approval-annotations" data-testid="approval-annotations">
          {words.map((w) => (
            <span key={w} class={`badge${w === "destructive" ? " attention" : ""}`}>
              {w}
            </span>
          ))}
        </p>
      )}
      <pre class="approval-args mono" data-testid="approval-args">
        {shown.text}
      </pre>
      {(shown.folded > 0 || whole) && (
        <button type="button" class="btn link small" onClick={() => setWhole(!whole)}>
          {whole ? "Fold long values" : `Show all (${shown.folded} folded)`}
        </button>
      )}
      {shown.masked > 0 && <p class="muted small">{shown.masked === 1 ? "1 value looks secret and is masked." : `${shown.masked} values look secret and are masked.`}</p>}
      <div class="approval-answers">
        {ANSWERS.map((a) => (
          <button
            key={a.answer}
            type="button"
            class={`btn${a.answer === "deny" ? " danger" : a.answer === "once" ? " primary" : ""}`}
            title={a.title}
            disabled={busy}
            data-answer={a.answer}
            aria-keyshortcuts={selected && a.key ? a.key.toUpperCase() : undefined}
            onClick={(e) => {
              e.stopPropagation();
              props.onAnswer(a.answer);
            }}
          >
            {a.label}
          </button>
        ))}
      </div>
    </li>
  );
}

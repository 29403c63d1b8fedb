import { useState } from "preact/hooks";
import type { ComponentChildren } from "preact";
import type { ArgPattern, WaitingCall } from "../../generated";
import { countdown, plural } from "../../format";
import { useNow } from "../../store";
import { showArgs } from "./args";
import "./approvals.css";
import { ANSWERS, answerCall, proposedPattern, type Answer } from "./model";

/**
 * One waiting call, as every prompt shows it: the tool and who calls it (provider or MCP
 * server, session, client, profile), why it is asked, the time left before it is denied, the
 * tool's annotations, its arguments (secrets masked, long values folded: `args.ts`), and the
 * answers. `compact` (the prompt on other pages) leaves out the two answers that remember for
 * good and keeps the arguments short.
 */
export function WaitingCard({ call, live, compact = false, extra }: { call: WaitingCall; live: boolean; compact?: boolean; extra?: ComponentChildren }) {
  const now = useNow();
  const [whole, setWhole] = useState(false);
  // The argument pattern a grant from this card is limited to (none: the tool whatever its arguments).
  const [pattern, setPattern] = useState<ArgPattern | null>(null);
  const shown = showArgs(call.args, whole ? null : undefined);
  const left = Date.parse(call.deadline) - now;
  const annotations = Object.entries(call.annotations ?? {});
  return (
    <article class={`waiting-card${compact ? " compact" : ""}`} data-testid="waiting-call" data-id={call.id} aria-label={`Call of ${call.tool} waiting for approval`}>
      <div class="waiting-head">
        <strong class="mono tool-name">{call.tool}</strong>
        <span class="muted">from</span> <span class="mono">{call.provider}</span>
        <span class="countdown push-right" title={`Denied at ${new Date(call.deadline).toLocaleTimeString()} if nobody answers`}>
          denied in {countdown(left)}
        </span>
      </div>
      <dl class="waiting-facts">
        <dt>Session</dt>
        <dd>
          <a href={`#/sessions/${encodeURIComponent(call.sessionId)}`}>{call.sessionLabel ? `${call.sessionLabel} (${call.sessionId})` : call.sessionId}</a>
        </dd>
        {call.client && (
          <>
            <dt>Client</dt>
            <dd class="mono">{call.client}</dd>
          </>
        )}
        {call.profile && (
          <>
            <dt>Profile</dt>
            <dd class="mono">{call.profile}</dd>
          </>
        )}
        <dt>Asked by</dt>
        <dd>
          {call.why}
          {call.reason ? `: ${call.reason}` : ""}
        </dd>
        {annotations.length > 0 && (
          <>
            <dt>Annotations</dt>
            <dd class="tags" data-testid="annotations">
              {annotations.map(([k, v]) => (
                <span key={k} class={`tag${k === "destructiveHint" && v === true ? " danger-tag" : ""}`}>
                  {k}: {JSON.stringify(v)}
                </span>
              ))}
            </dd>
          </>
        )}
      </dl>
      <pre class={`waiting-args${compact ? " short" : ""}`} data-testid="call-args">
        {shown.text}
      </pre>
      {(shown.masked > 0 || shown.folded > 0 || whole) && (
        <p class="small muted">
          {shown.masked > 0 && `${plural(shown.masked, "value")} that look secret masked. `}
          {(shown.folded > 0 || whole) && (
            <button type="button" class="btn link" onClick={() => setWhole(!whole)}>
              {whole ? "Fold long values" : `Show ${plural(shown.folded, "folded value")} whole`}
            </button>
          )}
        </p>
      )}
      {!compact && <PatternField call={call} value={pattern} onChange={setPattern} />}
      <AnswerButtons call={call} live={live} compact={compact} argsPattern={pattern ? [pattern] : []} />
      {extra}
    </article>
  );
}

/**
 * "Only for calls whose ARGUMENT matches REGEX": limits the grant that For this session / For 1
 * hour / Always make (`argsPattern`), proposed from the first plain string argument.
 */
function PatternField({ call, value, onChange }: { call: WaitingCall; value: ArgPattern | null; onChange: (p: ArgPattern | null) => void }) {
  const shown = value ?? proposedPattern(call.args);
  return (
    <div class="waiting-pattern small">
      <label class="check">
        <input type="checkbox" checked={value !== null} onChange={(e) => onChange(e.currentTarget.checked ? shown : null)} />
        Grant only for calls whose argument
      </label>
      <input
        class="mono"
        aria-label="Argument (JSON pointer)"
        value={shown.pointer}
        placeholder="/path"
        disabled={value === null}
        onInput={(e) => onChange({ ...shown, pointer: e.currentTarget.value })}
      />
      <span>matches</span>
      <input
        class="mono"
        aria-label="Regex"
        value={shown.regex}
        placeholder="^/tmp/"
        disabled={value === null}
        onInput={(e) => onChange({ ...shown, regex: e.currentTarget.value })}
      />
    </div>
  );
}

/** The answers, each with its shortcut shown (the keys work on every page: `components/ApprovalPrompt.tsx`). */
export function AnswerButtons({ call, live, compact, argsPattern = [] }: { call: WaitingCall; live: boolean; compact: boolean; argsPattern?: ArgPattern[] }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const answer = async (a: Answer) => {
    setBusy(true);
    setError(null);
    try {
      await answerCall(call, a, argsPattern);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="waiting-actions">
      {ANSWERS.filter((a) => !compact || a.key).map((a) => (
        <button
          key={a.answer}
          type="button"
          class={`btn${a.answer === "once" ? " primary" : a.answer.startsWith("deny") ? " danger-outline" : ""}`}
          disabled={busy || !live}
          title={a.title + (a.key ? ` (key ${a.key.toUpperCase()})` : "")}
          aria-keyshortcuts={a.key?.toUpperCase()}
          onClick={() => void answer(a.answer)}
        >
          {a.label}
          {a.key && <kbd aria-hidden="true">{a.key.toUpperCase()}</kbd>}
        </button>
      ))}
      {error && (
        <span class="error" role="alert">
          {error}
        </span>
      )}
    </div>
  );
}

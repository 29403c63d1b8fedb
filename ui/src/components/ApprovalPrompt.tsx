import { useEffect, useRef, useState } from "preact/hooks";
import { WaitingCard } from "../pages/approvals/WaitingCard";
import type { WaitingCall } from "../generated";
import { ANSWERS, answerCall } from "../pages/approvals/model";

/**
 * The prompt every panel page shows while a tool call waits for the user: the oldest waiting
 * call (compact), the count of the others, and a link to the Approvals page. `waiting` is the
 * shell's `useWaitingCalls()`, live from the `approval.waiting` / `approval.resolved` events.
 *
 * Keyboard (on every page, the Approvals page included, where `showBanner` is false because
 * the page lists the calls itself): A approves the oldest waiting call once, S for this
 * session, H for an hour, D denies it. Keys typed into a field, or with Ctrl/Alt/Meta, are
 * left alone, and a key does nothing while the previous answer is on its way (so a held key
 * answers one call, not the next ones too).
 */
export function ApprovalPrompt({ waiting, live, showBanner }: { waiting: WaitingCall[]; live: boolean; showBanner: boolean }) {
  const oldest = waiting[0];
  const [error, setError] = useState<string | null>(null);
  const busy = useRef(false);
  const current = useRef(oldest);
  current.current = oldest;

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.ctrlKey || e.altKey || e.metaKey || e.repeat) return;
      const t = e.target as HTMLElement | null;
      if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
      const choice = ANSWERS.find((a) => a.key === e.key.toLowerCase());
      const call = current.current;
      if (!choice || !call || busy.current) return;
      e.preventDefault();
      busy.current = true;
      setError(null);
      answerCall(call, choice.answer)
        .catch((err) => setError(`${choice.label}: ${err instanceof Error ? err.message : String(err)}`))
        .finally(() => (busy.current = false));
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  if (!showBanner || !oldest) return null;
  return (
    <section class="waiting-banner" role="region" aria-label="Tool call waiting for approval" data-testid="approval-prompt">
      <p class="waiting-banner-title">
        <strong>A tool call waits for your approval</strong>
        {waiting.length > 1 && <span class="badge attention">{waiting.length - 1} more waiting</span>}
        <a class="push-right" href="#/approvals">
          Approvals page
        </a>
      </p>
      <WaitingCard key={oldest.id} call={oldest} live={live} compact />
      <p class="small muted">Keys: A approve once · S for this session · H for 1 hour · D deny</p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}

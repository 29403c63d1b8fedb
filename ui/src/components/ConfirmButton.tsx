import { useEffect, useRef, useState } from "preact/hooks";

interface Props {
  /** The button's text before asking, e.g. "Deny". */
  label: string;
  /** The question shown in place of the button, e.g. "Deny this request?". */
  question: string;
  /** The confirming button's text, e.g. "Yes, deny". */
  confirmLabel: string;
  /** Runs when confirmed; a rejection is shown next to the buttons. */
  onConfirm: () => Promise<unknown>;
  /** Accessible name of the first button when `label` alone is ambiguous. */
  ariaLabel?: string;
}

/**
 * A destructive action with an in-page confirmation (window.confirm does nothing in
 * WebKit webviews, and blocks everything in a browser). Keyboard: the confirming button
 * takes focus when asked; Escape cancels and returns focus to the first button.
 */
export function ConfirmButton({ label, question, confirmLabel, onConfirm, ariaLabel }: Props) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const trigger = useRef<HTMLButtonElement>(null);
  const confirm = useRef<HTMLButtonElement>(null);
  const wasAsking = useRef(false);

  useEffect(() => {
    if (asking) confirm.current?.focus();
    else if (wasAsking.current) trigger.current?.focus();
    wasAsking.current = asking;
  }, [asking]);

  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
      setAsking(false);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };

  if (!asking) {
    return (
      <button type="button" ref={trigger} class="btn danger-outline" aria-label={ariaLabel} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <span
      class="confirm"
      role="group"
      aria-label={question}
      onKeyDown={(e) => {
        if (e.key === "Escape") setAsking(false);
      }}
    >
      <span class="confirm-question">{question}</span>
      <button type="button" ref={confirm} class="btn danger" disabled={busy} onClick={run}>
        {confirmLabel}
      </button>
      <button type="button" class="btn" disabled={busy} onClick={() => setAsking(false)}>
        Cancel
      </button>
      {error && (
        <span class="error" role="alert">
          {error}
        </span>
      )}
    </span>
  );
}

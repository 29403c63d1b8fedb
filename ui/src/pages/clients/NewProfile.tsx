import { useEffect, useRef, useState } from "preact/hooks";
import type { ProfilesList } from "../../generated";
import { store } from "../../store";
import { NAME_RE } from "./model";

/**
 * "New profile": a name (checked here as the gateway checks it) and a description; Create
 * makes a profile that sees every tool (`profiles.set` with empty lists), to be narrowed in
 * its editor.
 */
export function NewProfile({ list, live, onCreated }: { list: ProfilesList | null; live: boolean; onCreated: (list: ProfilesList, name: string) => void }) {
  const [open, setOpen] = useState(false);
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [touched, setTouched] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => void (open && input.current?.focus()), [open]);

  const taken = list?.profiles.some((p) => p.name === name) ?? false;
  const problem = !NAME_RE.test(name) ? "1 to 64 letters, digits, '_', '-' or '.'" : taken ? `A profile named ${name} exists already.` : null;

  if (!open) {
    return (
      <button type="button" class="btn" disabled={!live} onClick={() => setOpen(true)}>
        New profile
      </button>
    );
  }
  const close = () => {
    setOpen(false);
    setName("");
    setDescription("");
    setTouched(false);
    setError(null);
  };
  const create = async () => {
    setTouched(true);
    if (problem) return;
    setBusy(true);
    setError(null);
    try {
      const d = description.trim();
      const result = await store.call("profiles.set", { name, def: d ? { description: d } : {} });
      close();
      onCreated(result, name);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form
      class="new-profile"
      aria-label="New profile"
      onSubmit={(e) => {
        e.preventDefault();
        void create();
      }}
      onKeyDown={(e) => {
        if (e.key === "Escape") close();
      }}
    >
      <label class="field">
        Profile name
        <input
          ref={input}
          type="text"
          class="mono"
          value={name}
          maxLength={64}
          aria-invalid={touched && problem ? "true" : undefined}
          aria-describedby="new-profile-problem"
          onInput={(e) => setName(e.currentTarget.value)}
          onBlur={() => name && setTouched(true)}
        />
      </label>
      <label class="field grow">
        Description
        <input type="text" value={description} maxLength={500} onInput={(e) => setDescription(e.currentTarget.value)} />
      </label>
      <button type="submit" class="btn primary" disabled={busy || !live}>
        Create
      </button>
      <button type="button" class="btn" onClick={close}>
        Cancel
      </button>
      <p id="new-profile-problem" class={touched && problem ? "error small" : "small muted"} role={touched && problem ? "alert" : undefined}>
        {touched && problem ? problem : "It starts with every tool; switch off what this client should not see."}
      </p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}

import { useState } from "preact/hooks";
import type { EmitterRule, EmitterStart, EventOutcome, FilterTestResult } from "../../generated";
import { store } from "../../store";
import { useMethod, useSettled } from "../../method";

const OUTCOMES: EventOutcome[] = ["drop", "keep", "surface", "inject"];
/** The rule tester asks the gateway after a pause in typing. */
const DEBOUNCE_MS = 300;

interface Rule extends EmitterRule {
  /** Stable across moves (the list's key). */
  key: number;
}

interface Form {
  name: string;
  kind: "command" | "prompt";
  command: string;
  prompt: string;
  every: string;
  /** Prompts only: `every: "idle"`. */
  idle: boolean;
  stream: string;
  cwd: string;
  includeStderr: boolean;
  maxRuns: string;
  restart: boolean;
  description: string;
  force: boolean;
}

const EMPTY: Form = {
  name: "",
  kind: "command",
  command: "",
  prompt: "",
  every: "",
  idle: false,
  stream: "",
  cwd: "",
  includeStderr: false,
  maxRuns: "",
  restart: false,
  description: "",
  force: false,
};

let nextKey = 1;

/**
 * The rule a gateway error names, as an index into the list, if any: the gateway counts
 * from 0 (`eventFilter rule 1: '(' is not a valid regex: …` is the form's second rule).
 */
export function ruleInError(message: string, count: number): number | null {
  const m = /eventFilter\s*(?:rule\s*|\[)(\d+)/i.exec(message);
  if (!m) return null;
  const index = Number(m[1]);
  return index < count ? index : null;
}

/** The parameters of `emitters.start`, or what is wrong with the form (checked in the page). */
function build(sessionId: string, f: Form, rules: Rule[]): { params?: EmitterStart; problems: string[] } {
  const problems: string[] = [];
  const p: EmitterStart = { sessionId, name: f.name.trim() };
  if (!p.name) problems.push("Give the emitter a name.");
  if (f.kind === "command") {
    if (!f.command.trim()) problems.push("Type the command to run.");
    p.command = f.command;
    if (f.includeStderr) p.includeStderr = true;
    if (f.restart) p.restart = "on-failure";
  } else {
    if (!f.prompt.trim()) problems.push("Type the prompt to deliver.");
    p.prompt = f.prompt;
  }
  if (f.kind === "prompt" && f.idle) p.every = "idle";
  else if (f.every.trim()) p.every = f.every.trim();
  if (f.stream.trim()) p.stream = f.stream.trim();
  if (f.cwd.trim()) p.cwd = f.cwd.trim();
  if (f.maxRuns.trim()) {
    const n = Number(f.maxRuns);
    if (!Number.isInteger(n) || n < 1) problems.push("Max runs is a whole number, 1 or more.");
    else p.maxRuns = n;
  }
  if (rules.length > 0) p.eventFilter = rules.map(({ match, outcome }) => ({ match, outcome }));
  if (f.description.trim()) p.description = f.description.trim();
  if (f.force) p.force = true;
  return problems.length ? { problems } : { params: p, problems };
}

/**
 * A new emitter for a live session (`emitters.start`): a command or a prompt, its schedule,
 * stream and options, and its EventFilter: ordered rules (regex, outcome), the first match
 * deciding, with a tester that asks the gateway (`emitters.testFilter`) which rule a pasted
 * line matches. The gateway's refusals (a bad regex names its rule) show next to the form.
 */
export function EmitterForm({ sessionId, live, onStarted }: { sessionId: string; live: boolean; onStarted: () => void }) {
  const [form, setForm] = useState<Form>(EMPTY);
  const [rules, setRules] = useState<Rule[]>([]);
  const [problems, setProblems] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const set = (patch: Partial<Form>) => setForm((f) => ({ ...f, ...patch }));
  const badRule = error ? ruleInError(error, rules.length) : null;

  const setRule = (i: number, patch: Partial<EmitterRule>) => setRules((rs) => rs.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  const move = (i: number, by: number) =>
    setRules((rs) => {
      const j = i + by;
      if (j < 0 || j >= rs.length) return rs;
      const next = [...rs];
      [next[i], next[j]] = [next[j], next[i]];
      return next;
    });

  const submit = async (e: Event) => {
    e.preventDefault();
    const built = build(sessionId, form, rules);
    setProblems(built.problems);
    setError(null);
    if (!built.params) return;
    setBusy(true);
    try {
      await store.call("emitters.start", built.params);
      setForm(EMPTY);
      setRules([]);
      onStarted();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  const text = (key: "name" | "every" | "stream" | "cwd" | "description") => ({
    value: form[key],
    onInput: (e: Event) => set({ [key]: (e.currentTarget as HTMLInputElement).value }),
  });

  return (
    <form class="emitter-form" aria-label="New emitter" onSubmit={(e) => void submit(e)} noValidate>
      <h2>New emitter</h2>
      <div class="form-grid">
        <label class="field">
          <span>Name</span>
          <input type="text" {...text("name")} placeholder="tests" spellcheck={false} autocomplete="off" />
        </label>
        <fieldset class="field kind">
          <legend>Runs</legend>
          <label class="check">
            <input type="radio" name="emitter-kind" checked={form.kind === "command"} onChange={() => set({ kind: "command" })} />
            a command
          </label>
          <label class="check">
            <input type="radio" name="emitter-kind" checked={form.kind === "prompt"} onChange={() => set({ kind: "prompt" })} />
            a prompt
          </label>
        </fieldset>
        {form.kind === "command" ? (
          <label class="field wide">
            <span>Command (bash -lc, in the session's directory)</span>
            <textarea class="mono" rows={2} spellcheck={false} value={form.command} onInput={(e) => set({ command: e.currentTarget.value })} />
          </label>
        ) : (
          <label class="field wide">
            <span>Prompt (delivered to the session)</span>
            <textarea rows={2} value={form.prompt} onInput={(e) => set({ prompt: e.currentTarget.value })} />
          </label>
        )}
        <label class="field">
          <span>Every</span>
          <input
            type="text"
            {...text("every")}
            disabled={form.kind === "prompt" && form.idle}
            placeholder={form.kind === "command" ? "30s, 5m, 1h; empty: continuous" : "5m, 1h; empty: once"}
            spellcheck={false}
          />
        </label>
        {form.kind === "prompt" && (
          <label class="check">
            <input type="checkbox" checked={form.idle} onChange={(e) => set({ idle: e.currentTarget.checked })} />
            whenever the session goes idle
          </label>
        )}
        <label class="field">
          <span>Stream</span>
          <input type="text" {...text("stream")} placeholder={form.name.trim() || "the emitter's name"} spellcheck={false} />
        </label>
        <label class="field">
          <span>Working directory</span>
          <input type="text" {...text("cwd")} placeholder="the session's" spellcheck={false} />
        </label>
        <label class="field">
          <span>Max runs</span>
          <input type="number" class="narrow" min={1} step={1} value={form.maxRuns} onInput={(e) => set({ maxRuns: e.currentTarget.value })} />
        </label>
        {form.kind === "command" && (
          <>
            <label class="check">
              <input type="checkbox" checked={form.includeStderr} onChange={(e) => set({ includeStderr: e.currentTarget.checked })} />
              include stderr
            </label>
            <label class="check">
              <input type="checkbox" checked={form.restart} onChange={(e) => set({ restart: e.currentTarget.checked })} />
              restart on failure
            </label>
          </>
        )}
        <label class="field wide">
          <span>Description</span>
          <input type="text" {...text("description")} placeholder="what it is for" />
        </label>
      </div>

      <FilterEditor rules={rules} setRules={setRules} setRule={setRule} move={move} badRule={badRule} />

      <div class="form-foot">
        <button type="submit" class="btn primary" disabled={busy || !live}>
          {busy ? "Starting…" : "Start emitter"}
        </button>
        <label class="check">
          <input type="checkbox" checked={form.force} onChange={(e) => set({ force: e.currentTarget.checked })} />
          replace a user-owned emitter of this name
        </label>
      </div>
      {problems.length > 0 && (
        <ul class="error" role="alert" aria-label="Problems">
          {problems.map((p) => (
            <li key={p}>{p}</li>
          ))}
        </ul>
      )}
      {error && (
        <p class="error" role="alert" data-testid="emitter-form-error">
          {error}
          {badRule !== null && ` (rule ${badRule + 1} in the form, marked above)`}
        </p>
      )}
    </form>
  );
}

interface EditorProps {
  rules: Rule[];
  setRules: (f: (rs: Rule[]) => Rule[]) => void;
  setRule: (i: number, patch: Partial<EmitterRule>) => void;
  move: (i: number, by: number) => void;
  badRule: number | null;
}

function FilterEditor({ rules, setRules, setRule, move, badRule }: EditorProps) {
  const [line, setLine] = useState("");
  // The tester: after a pause, which rule the line matches (the gateway's regexes, not the browser's).
  const asked = useSettled({ eventFilter: rules.map(({ match, outcome }) => ({ match, outcome })), line }, line === "" ? 0 : DEBOUNCE_MS);
  const tested = useMethod("emitters.testFilter", asked, { enabled: asked.line !== "" });
  const result: FilterTestResult | null = line === "" ? null : tested.data;
  const testError = line === "" ? null : (tested.error?.message ?? null);

  const matched = result?.rule;
  const testBad = testError ? ruleInError(testError, rules.length) : null;
  return (
    <fieldset class="filter-editor">
      <legend>Event filter</legend>
      <p class="small muted">Each line goes to the first rule whose regex (case-insensitive) matches it; a line no rule matches is kept.</p>
      {rules.length > 0 && (
        <ol class="plain rules" aria-label="Rules, in order">
          {rules.map((r, i) => (
            <li key={r.key} class={`rule${matched === i ? " matched" : ""}`} data-rule={i}>
              <span class="rule-n small muted">{i + 1}</span>
              <input
                type="text"
                class="mono"
                aria-label={`Rule ${i + 1} regex`}
                placeholder="regex"
                spellcheck={false}
                value={r.match}
                aria-invalid={badRule === i || testBad === i}
                onInput={(e) => setRule(i, { match: e.currentTarget.value })}
              />
              <select aria-label={`Rule ${i + 1} outcome`} value={r.outcome} onChange={(e) => setRule(i, { outcome: e.currentTarget.value as EventOutcome })}>
                {OUTCOMES.map((o) => (
                  <option key={o} value={o}>
                    {o}
                  </option>
                ))}
              </select>
              <span class="rule-buttons">
                <button type="button" class="btn" aria-label={`Move rule ${i + 1} up`} disabled={i === 0} onClick={() => move(i, -1)}>
                  ↑
                </button>
                <button type="button" class="btn" aria-label={`Move rule ${i + 1} down`} disabled={i === rules.length - 1} onClick={() => move(i, 1)}>
                  ↓
                </button>
                <button type="button" class="btn" aria-label={`Remove rule ${i + 1}`} onClick={() => setRules((rs) => rs.filter((_, j) => j !== i))}>
                  Remove
                </button>
              </span>
            </li>
          ))}
        </ol>
      )}
      <div>
        <button type="button" class="btn" onClick={() => setRules((rs) => [...rs, { key: nextKey++, match: "", outcome: "drop" }])}>
          Add rule
        </button>
      </div>
      <label class="field tester">
        <span>Test a line</span>
        <input type="text" class="mono" value={line} placeholder="paste a line of output" spellcheck={false} onInput={(e) => setLine(e.currentTarget.value)} />
      </label>
      <p class="small" role="status" data-testid="rule-tester-result">
        {line === ""
          ? ""
          : testError
            ? ""
            : result === null
              ? "Testing…"
              : result.rule === undefined
                ? `No rule matches: ${result.outcome}`
                : `Rule ${result.rule + 1} (${rules[result.rule]?.match ?? "?"}) matches: ${result.outcome}`}
      </p>
      {testError && (
        <p class="error small" role="alert" data-testid="rule-tester-error">
          {testError}
          {testBad !== null && ` (rule ${testBad + 1} in the form)`}
        </p>
      )}
    </fieldset>
  );
}

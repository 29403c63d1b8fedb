import { useState } from "preact/hooks";
import type { ProfileInfo, ProfilesList } from "../../generated";
import { store } from "../../store";
import { bytes } from "../../format";
import { ConfirmButton } from "../../components/ConfirmButton";
import { choiceOf, count, defFor, defOf, estimate, groupsOf, sameChoice, share, shown, type Choice, type Group } from "./model";

interface Props {
  list: ProfilesList;
  profile: ProfileInfo;
  live: boolean;
  /** The gateway's answer to a set or remove (the list as it is now). */
  onChanged: (list: ProfilesList) => void;
  onDeleted: () => void;
}

/**
 * One profile's editor: a toggle per MCP server, provider and the gateway's own tools, and
 * per tool with its token cost; the total follows each toggle at once (summed from the
 * gateway's per-tool counts). Save writes it with `profiles.set`; Delete (asked first) with
 * `profiles.remove`. Mounted per profile (keyed by name), so a draft never leaks to another.
 */
export function ProfileEditor({ list, profile, live, onChanged, onDeleted }: Props) {
  const groups = groupsOf(list.tools);
  const saved = choiceOf(profile, groups);
  const [draft, setDraft] = useState<Choice | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const choice = draft ?? saved;
  const dirty = draft !== null && !sameChoice(draft, saved);
  const now = estimate(choice, groups, list.searchTools);

  const change = (f: (c: { off: Set<string>; hidden: Set<string>; description: string; surface: Choice["surface"]; approvalsInClient: boolean }) => void) => {
    setDraft((prev) => {
      const from = prev ?? saved;
      const next = { off: new Set(from.off), hidden: new Set(from.hidden), description: from.description, surface: from.surface, approvalsInClient: from.approvalsInClient };
      f(next);
      return next;
    });
  };
  const flip = (set: Set<string>, key: string, on: boolean) => (on ? set.delete(key) : set.add(key));

  const save = async () => {
    setBusy(true);
    setError(null);
    try {
      onChanged(await store.call("profiles.set", { name: profile.name, def: defFor(choice, groups, defOf(profile)) }));
      setDraft(null);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="profile-editor" aria-labelledby="profile-editor-head" data-editing={profile.name}>
      <div class="section-head">
        <h2 id="profile-editor-head">
          Profile <span class="mono">{profile.name}</span>
        </h2>
        <div class="editor-actions">
          <button type="button" class="btn primary" disabled={!live || busy || !dirty} onClick={() => void save()}>
            Save
          </button>
          <button type="button" class="btn" disabled={busy || !dirty} onClick={() => setDraft(null)}>
            Discard changes
          </button>
          <ConfirmButton
            label="Delete"
            question={`Delete profile ${profile.name}?`}
            confirmLabel="Yes, delete"
            onConfirm={async () => {
              onChanged(await store.call("profiles.remove", { name: profile.name }));
              onDeleted();
            }}
          />
        </div>
      </div>
      {profile.error && (
        <p class="error" data-testid="editor-profile-error">
          This profile cannot be used: {profile.error}. Save replaces it with what is chosen here.
        </p>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <label class="field description-field">
        Description
        <input type="text" value={choice.description} maxLength={500} onInput={(e) => change((c) => (c.description = e.currentTarget.value))} />
      </label>
      <label class="field surface-field">
        Clients get
        <select
          value={choice.surface}
          aria-describedby="surface-help"
          onChange={(e) => change((c) => (c.surface = e.currentTarget.value === "search" ? "search" : "tools"))}
        >
          <option value="tools">every tool listed</option>
          <option value="search">a search: tap_find_tools + tap_call_tool</option>
        </select>
      </label>
      <p id="surface-help" class="small muted">
        {choice.surface === "search"
          ? "Only the gateway's own tools and the two search tools are listed; the model finds the others when it needs one, which costs a round trip and the answer's tokens (docs/clients.md, \"Search surface: what it costs\")."
          : "Every tool shown below is in the client's tools/list, sent to the model with every turn."}
      </p>
      <label class="check approvals-in-client-field">
        <input
          type="checkbox"
          checked={choice.approvalsInClient}
          aria-describedby="approvals-in-client-help"
          onChange={(e) => change((c) => (c.approvalsInClient = e.currentTarget.checked))}
        />
        <span>Also ask approvals in the client that made the call</span>
      </label>
      <p id="approvals-in-client-help" class="small muted" data-testid="approvals-in-client-help">
        Calls of this profile's sessions that wait for approval are then also shown as a form in the MCP client that made them, when it
        supports forms (MCP elicitation); the tray, this panel and <code>tap approvals</code> still ask, and the first answer decides. Off by
        default: the gateway cannot tell your answer from the client's, so a client that accepts forms by itself, or lets the model answer
        them, would approve every call it makes. Turn it on only for clients that show you the form (docs/approvals.md, "Answering in the
        client").
      </p>
      <Total now={now} list={list} dirty={dirty} savedTokens={profile.tokens} />
      {groups.length === 0 && <p class="empty">The gateway offers no tool now: connect a provider or add an MCP server.</p>}
      {groups.map((g) => (
        <GroupBox
          key={g.key}
          group={g}
          choice={choice}
          onGroup={(on) => change((c) => flip(c.off, g.key, on))}
          onTool={(name, on) => change((c) => flip(c.hidden, name, on))}
        />
      ))}
      <p class="small muted">
        With every server and provider on, the profile also sees ones added later; a tool switched off is hidden by its exact name. Counts are{" "}
        {list.tokenizer} tokens of each tool's <code>tools/list</code> entry; other models' tokenizers count somewhat differently. Clients opened
        with the profile get the change in their next session.
      </p>
    </section>
  );
}

/** The live total against every tool, with a bar. */
function Total({ now, list, dirty, savedTokens }: { now: ReturnType<typeof estimate>; list: ProfilesList; dirty: boolean; savedTokens: number }) {
  const pct = list.tokens > 0 ? Math.min(100, (now.tokens / list.tokens) * 100) : 0;
  return (
    <div class="profile-total">
      <p role="status" data-testid="profile-total" data-tokens={now.tokens}>
        <strong>{count(now.tokens)} tokens</strong> · {now.tools} of {list.tools.length} tools{now.full ? " to find" : ""} · {bytes(now.bytes)} ·{" "}
        {now.full && <span data-testid="profile-full-tokens">listed in full: {count(now.full.tokens)} tokens · </span>}
        <span class="muted">
          {share(now.tokens, list.tokens)} of every tool ({count(list.tokens)} tokens)
        </span>
        {dirty && <span class="pill accent unsaved">unsaved · saved: {count(savedTokens)} tokens</span>}
      </p>
      <div class="bar" aria-hidden="true">
        <div class="bar-fill" style={{ width: `${pct}%` }} />
      </div>
    </div>
  );
}

const GROUP_TITLE = { gateway: "The gateway's own tools", server: "MCP server", provider: "Provider" } as const;

/** One server's, provider's or the gateway's tools: its toggle, then each tool's. */
function GroupBox({ group: g, choice, onGroup, onTool }: { group: Group; choice: Choice; onGroup: (on: boolean) => void; onTool: (name: string, on: boolean) => void }) {
  const on = !choice.off.has(g.key);
  const visible = g.tools.filter((t) => shown(choice, g, t.name));
  const label = g.kind === "gateway" ? "Show the gateway's own tools" : `Show ${g.kind === "server" ? "server" : "provider"} ${g.name}`;
  return (
    <fieldset class={`tool-group${on ? "" : " off"}`} data-group={g.key}>
      <legend>
        <label class="check">
          <input type="checkbox" checked={on} aria-label={label} onChange={(e) => onGroup(e.currentTarget.checked)} />
          <span>
            {g.kind === "gateway" ? GROUP_TITLE.gateway : (
              <>
                {GROUP_TITLE[g.kind]} <strong class="mono">{g.name}</strong>
              </>
            )}
          </span>
        </label>
        <span class="small muted group-cost">
          {visible.length}/{g.tools.length} · {count(visible.reduce((n, t) => n + t.tokens, 0))} of {count(g.tokens)} tokens
        </span>
      </legend>
      <ul class="tool-rows">
        {g.tools.map((t) => {
          const toolOn = !choice.hidden.has(t.name);
          return (
            <li key={t.name} class={`tool-row${shown(choice, g, t.name) ? "" : " hidden-tool"}`} data-tool={t.name}>
              <label class="check">
                <input type="checkbox" checked={toolOn} disabled={!on} aria-label={`Show ${t.name}`} onChange={(e) => onTool(t.name, e.currentTarget.checked)} />
                <span class="mono tool-name">{t.name}</span>
              </label>
              <span class="num tool-tokens" data-tokens={t.tokens}>
                {count(t.tokens)} tokens
              </span>
              <span class="num small muted tool-bytes">{bytes(t.bytes)}</span>
            </li>
          );
        })}
      </ul>
    </fieldset>
  );
}

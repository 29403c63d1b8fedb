import { useEffect, useState } from "preact/hooks";
import type { ClientChange, ClientInfo, ClientState, ClientsList } from "../../generated";
import { store, useNow } from "../../store";
import { useMethod } from "../../method";
import { ago, fullTime } from "../../format";
import { copyText } from "../../components/IdText";
import { ActivityCell, rowClass, useRowActivity, WindowSelect, type RowActivity } from "../../components/RowActivity";

/** A state as `tap connect` words it, and its badge's tone. */
const STATES: Record<ClientState, { word: string; tone: string }> = {
  "not-installed": { word: "not installed", tone: "muted" },
  installed: { word: "installed", tone: "" },
  connected: { word: "connected", tone: "ok" },
  drifted: { word: "drifted", tone: "warn" },
  invalid: { word: "invalid", tone: "attention" },
};

/** The client connected by tap's extension rather than an entry in a file. */
const COPILOT = "copilot";

/** The command that connects `client` with `profile` (every client takes one, the Copilot
 * CLI's extension too: `tap connect copilot --profile NAME`). */
export const connectCommand = (client: ClientInfo, profile: string | null) => `${client.command}${profile ? ` --profile ${profile}` : ""}`;

interface Props {
  /** The profile selected below the list (`#/clients/NAME`), offered first to connect with. */
  profile: string | null;
  /** `profiles.list`'s usable profiles. */
  profiles: readonly string[];
  live: boolean;
}

/**
 * Every MCP client on this machine (`clients.list`, the gateway's HOME): its state as
 * `tap connect` sees it, its file, the profile its entry names, why it drifted, and its
 * latest sessions. Connect / Repair / Disconnect first show the change as a diff
 * (`dryRun`), then write it when asked; the gateway keeps every other byte and a backup.
 * The Copilot CLI's row does the same with tap's extension (`tap connect copilot`): its diff
 * is the extension file and Copilot's settings. Asked again on `status.changed` (the
 * gateway sends it after each change, and as sessions come and go), never on a timer. Each
 * present client shows the tool calls of its sessions over the chosen window (one
 * `activity.query` by client for the list).
 */
export function ConnectList({ profile, profiles, live }: Props) {
  const { data, error, refresh } = useMethod("clients.list", {}, { on: ["status.changed"], settleMs: 300 });
  const activity = useRowActivity("client");
  // The answer of our own change, shown until the next list arrives.
  const [fresh, setFresh] = useState<ClientInfo | null>(null);
  useEffect(() => setFresh(null), [data]);
  const list: ClientsList | null = data && fresh ? { ...data, clients: data.clients.map((c) => (c.id === fresh.id ? fresh : c)) } : data;
  // Clients not found on this machine are folded away: most machines have two or three.
  const present = list?.clients.filter((c) => c.state !== "not-installed") ?? [];
  const absent = list?.clients.filter((c) => c.state === "not-installed") ?? [];
  const row = (c: ClientInfo) => (
    <ClientRow
      key={c.id}
      client={c}
      activity={c.state === "not-installed" ? null : activity}
      selected={profile}
      profiles={profiles}
      // The Copilot CLI's extension launches no `tap`: it connects without one.
      live={live && (!list?.tapMissing || c.id === COPILOT)}
      onChanged={(info) => {
        setFresh(info);
        refresh();
      }}
    />
  );
  return (
    <section class="connect" aria-labelledby="connect-head">
      <h2 id="connect-head">Connect an agent</h2>
      <p class="small muted">
        Connect adds the gateway's <code>tap</code> entry to the client's own configuration file, keeping everything else in it and a timestamped
        backup beside it; you see the change before it is written. Disconnect removes that entry only. Restart the client (or reload its MCP servers)
        afterwards. The GitHub Copilot CLI is connected by tap's extension instead (in its <code>~/.copilot</code>, with Copilot's extensions
        feature turned on); new Copilot sessions use it. The same in a terminal: <code>tap connect CLIENT</code>.
      </p>
      {error && (
        <p class="error" role="alert">
          {error.message}
        </p>
      )}
      {list?.tapMissing && (
        <p class="notice" role="alert" data-testid="tap-missing">
          {list.tapMissing}
        </p>
      )}
      {!list && !error && <p class="muted">Loading…</p>}
      {list && (
        <>
          {present.length > 0 && <WindowSelect activity={activity} />}
          <ul class="client-rows" aria-label="Clients">
            {present.map(row)}
          </ul>
          {absent.length > 0 && (
            <details class="clients-absent">
              <summary class="small">
                {present.length ? "Not found on this machine" : "No client found on this machine"} ({absent.length}):{" "}
                {absent.map((c) => c.name).join(", ")}
              </summary>
              <ul class="client-rows" aria-label="Clients not found">
                {absent.map(row)}
              </ul>
            </details>
          )}
        </>
      )}
    </section>
  );
}

/** What a row is doing: nothing, showing a planned change, or writing it. */
type Pending = { kind: "connect" | "disconnect"; profile: string | null; change: ClientChange } | null;

function ClientRow({
  client,
  activity,
  selected,
  profiles,
  live,
  onChanged,
}: {
  client: ClientInfo;
  /** The list's figures; none for a client not on this machine. */
  activity: RowActivity | null;
  selected: string | null;
  profiles: readonly string[];
  live: boolean;
  onChanged: (c: ClientInfo) => void;
}) {
  const state = STATES[client.state];
  const hasEntry = client.state === "connected" || client.state === "drifted";
  // The profile to connect with: the one its entry names, else the one selected below.
  const [profile, setProfile] = useState<string | null>(hasEntry ? (client.profile ?? null) : selected);
  useEffect(() => setProfile(hasEntry ? (client.profile ?? null) : selected), [client.profile, hasEntry, selected]);
  const [pending, setPending] = useState<Pending>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const name = client.name;
  const removed = client.id === COPILOT ? "tap's extension" : "its tap entry";
  const calls = activity?.row(client.id) ?? null;

  const plan = async (kind: "connect" | "disconnect") => {
    setError(null);
    setDone(null);
    setBusy(true);
    try {
      const change =
        kind === "connect"
          ? await store.call("clients.connect", { client: client.id, ...(profile ? { profile } : {}), dryRun: true })
          : await store.call("clients.disconnect", { client: client.id, dryRun: true });
      setPending({ kind, profile, change });
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const apply = async () => {
    if (!pending) return;
    setError(null);
    setBusy(true);
    try {
      const p = pending.profile;
      const change =
        pending.kind === "connect"
          ? await store.call("clients.connect", { client: client.id, ...(p ? { profile: p } : {}) })
          : await store.call("clients.disconnect", { client: client.id });
      setPending(null);
      const kept = change.backup ? ` The previous file is kept as ${change.backup}.` : "";
      const what =
        pending.kind === "connect"
          ? change.written
            ? client.id === COPILOT
              ? `Connected ${name}.`
              : `Connected ${name}: restart it (or reload its MCP servers) to use the gateway.`
            : `${name} already had this entry; nothing was written.`
          : change.written
            ? `Disconnected ${name}: ${removed} was removed.`
            : `${name} had no tap entry; nothing was written.`;
      setDone(`${what}${kept}${change.note ? ` Note: ${change.note}` : ""}`);
      onChanged(change.client);
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const sameProfile = (client.profile ?? null) === profile;
  const connectLabel = client.state === "drifted" ? "Repair" : client.state === "connected" && !sameProfile ? "Change profile" : "Connect";
  const canConnect = client.editable && client.state !== "invalid" && !(client.state === "connected" && sameProfile);
  return (
    <li class={`client-row ${calls ? rowClass(calls) : ""}`.trim()} data-client={client.id} data-state={client.state} aria-label={name}>
      <div class="client-head">
        <strong>{name}</strong>
        <span class={`pill ${state.tone}`} data-testid="client-state">
          {state.word}
        </span>
        {client.profile && hasEntry && (
          <a
            class="pill accent"
            href={`#/clients/${encodeURIComponent(client.profile)}`}
            title="The profile its entry names: its tools and their cost"
            data-entry-profile={client.profile}
          >
            profile {client.profile}
          </a>
        )}
        <span class="mono small muted client-file" title="Its configuration file">
          {client.file}
        </span>
      </div>
      {calls && activity && <ActivityCell as="div" row={calls} name={name} window={activity.window} filter={{ client: client.id }} />}
      {client.detail && <p class={`small ${client.state === "drifted" || client.state === "invalid" ? "warn-text" : "muted"}`}>{client.detail}</p>}
      <div class="client-actions">
        {client.editable ? (
          <>
            <label class="small">
              Profile{" "}
              <select
                aria-label={`Profile for ${name}`}
                value={profile ?? ""}
                disabled={busy || !!pending}
                onChange={(e) => setProfile((e.currentTarget as HTMLSelectElement).value || null)}
              >
                <option value="">every tool</option>
                {[...new Set([...profiles, ...(profile ? [profile] : [])])].map((p) => (
                  <option key={p} value={p}>
                    {p}
                  </option>
                ))}
              </select>
            </label>
            {canConnect && (
              <button type="button" class="btn primary" disabled={!live || busy || !!pending} onClick={() => plan("connect")} aria-label={`${connectLabel} ${name}`}>
                {connectLabel}
              </button>
            )}
            {hasEntry && (
              <button type="button" class="btn" disabled={busy || !!pending} onClick={() => plan("disconnect")} aria-label={`Disconnect ${name}`}>
                Disconnect
              </button>
            )}
          </>
        ) : (
          <span class="small muted">Run in a terminal:</span>
        )}
        <CopyCommand command={connectCommand(client, profile)} />
      </div>
      {pending && (
        <div class="client-plan" role="region" aria-label={`Changes to ${name}'s file`}>
          {pending.change.diff ? (
            <pre class="diff mono small" data-testid="client-diff">
              {pending.change.diff.split("\n").map((line, i) => (
                <span key={i} class={line.startsWith("+") && !line.startsWith("+++") ? "add" : line.startsWith("-") && !line.startsWith("---") ? "del" : ""}>
                  {line}
                  {"\n"}
                </span>
              ))}
            </pre>
          ) : (
            <p class="small muted">Nothing to change in {client.file}.</p>
          )}
          <div class="client-actions">
            <button type="button" class="btn primary" disabled={busy} onClick={apply}>
              {pending.kind === "connect" ? "Write the change" : client.id === COPILOT ? "Remove the extension" : "Remove the entry"}
            </button>
            <button type="button" class="btn" disabled={busy} onClick={() => setPending(null)}>
              Cancel
            </button>
          </div>
        </div>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {done && (
        <p class="notice small" role="status">
          {done}
        </p>
      )}
      <RecentSessions client={client} />
    </li>
  );
}

/** The client's live session and its latest ones, each linked to the Sessions page. */
function RecentSessions({ client }: { client: ClientInfo }) {
  const now = useNow(30_000);
  if (client.sessions.length === 0) return null;
  return (
    <p class="small client-sessions">
      <span class="muted">Sessions: </span>
      {client.sessions.map((s, i) => (
        <span key={s.id}>
          {i > 0 && " · "}
          <a href={`#/sessions/${encodeURIComponent(s.id)}`} data-session={s.id} title={s.startedAt ? `started ${fullTime(s.startedAt)}` : undefined}>
            {s.live ? "live now" : s.endedAt ? `ended ${ago(s.endedAt, now)}` : s.startedAt ? `started ${ago(s.startedAt, now)}` : s.id}
          </a>
        </span>
      ))}
    </p>
  );
}

/** A command in monospace with a button that puts it on the clipboard. */
function CopyCommand({ command }: { command: string }) {
  const [copied, setCopied] = useState<"yes" | "failed" | null>(null);
  useEffect(() => {
    if (!copied) return;
    const t = setTimeout(() => setCopied(null), 1500);
    return () => clearTimeout(t);
  }, [copied]);
  return (
    <span class="connect-command">
      <code>{command}</code>
      <button
        type="button"
        class="btn copy-btn"
        aria-label={`Copy ${command}`}
        onClick={() => copyText(command).then(() => setCopied("yes"), () => setCopied("failed"))}
      >
        {copied === "yes" ? "Copied" : copied === "failed" ? "Copy failed" : "Copy"}
      </button>
    </span>
  );
}

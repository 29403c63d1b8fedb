import { useEffect, useRef, useState } from "preact/hooks";
import type { ClientTokenCreated, ClientTokensList } from "../../generated";
import { store, useNow } from "../../store";
import { useMethod } from "../../method";
import { fullTime, plural, relative } from "../../format";
import { copyText } from "../../components/IdText";
import { ConfirmButton } from "../../components/ConfirmButton";
import { NAME_RE } from "./model";

/**
 * The gateway's address for HTTP clients, `http://HOST:PORT`: from the status
 * (`ws://127.0.0.1:PORT`), else the page's own host (the panel is served by the gateway).
 */
export function gatewayBase(address: string | null | undefined): string {
  if (address) {
    try {
      const u = new URL(address);
      if (u.host) return `${u.protocol === "wss:" ? "https:" : "http:"}//${u.host}`;
    } catch {
      /* not a URL: the page's host below */
    }
  }
  return `${location.protocol === "https:" ? "https:" : "http:"}//${location.host}`;
}

/** The entry an MCP client's configuration takes to reach the gateway over HTTP with `token`. */
export const httpEntry = (base: string, client: string, token: string) =>
  JSON.stringify({ type: "http", url: `${base}/mcp/${client}`, headers: { Authorization: `Bearer ${token}` } }, null, 2);

/** `just now` in its first minute, then `3m ago` (never `in 5s` when the clock was read before it). */
function since(rfc3339: string, now: number): string {
  const at = Math.max(now, Date.now());
  const t = Date.parse(rfc3339);
  return !Number.isNaN(t) && at - t < 60_000 ? "just now" : relative(rfc3339, at);
}

interface Props {
  /** The profiles a token may hold its client to (`profiles.list`'s names). */
  profiles: readonly string[];
  live: boolean;
  /** `status.address` (`ws://127.0.0.1:PORT`), when known. */
  address: string | null;
}

/**
 * Client tokens of the MCP HTTP endpoint (`clientTokens.*`, docs/clients.md): the list (never
 * the values), New token, and Revoke (asked first). A token made here is shown once, with its
 * ready-to-paste HTTP entry, and lives only in this component's state until dismissed: never
 * stored. Asked again on `status.changed` (the gateway emits it on create and revoke).
 */
export function ClientTokens({ profiles, live, address }: Props) {
  const { data, error, refresh } = useMethod("clientTokens.list", {}, { on: ["status.changed"] });
  // The answer of our own revoke, shown until the next list arrives.
  const [fresh, setFresh] = useState<ClientTokensList | null>(null);
  useEffect(() => setFresh(null), [data]);
  const tokens = (fresh ?? data)?.tokens ?? null;
  const [created, setCreated] = useState<ClientTokenCreated | null>(null);
  const now = useNow(30_000);
  const base = gatewayBase(address);

  return (
    <section class="client-tokens" aria-labelledby="client-tokens-head">
      <h2 id="client-tokens-head">Client tokens</h2>
      <p class="small muted">
        A client that reaches the gateway over HTTP (<code>{base}/mcp/CLIENT</code>) sends a bearer token. A client token works across restarts
        (the host token changes at every start), can hold its client to a profile whatever it asks for, and is revoked on its own. The gateway
        keeps only its hash.
      </p>
      <NewToken
        profiles={profiles}
        live={live}
        onCreated={(c) => {
          setCreated(c);
          refresh();
        }}
      />
      {created && <CreatedToken created={created} base={base} onDismiss={() => setCreated(null)} />}
      {error && (
        <p class="error" role="alert">
          {error.message}
        </p>
      )}
      {tokens === null ? (
        !error && <p class="small muted">Loading…</p>
      ) : tokens.length === 0 ? (
        <p class="empty" data-testid="tokens-empty">
          No client token yet: New token makes one.
        </p>
      ) : (
        <div class="table-wrap">
          <table class="tokens-table" aria-label="Client tokens" data-testid="tokens-table">
            <thead>
              <tr>
                <th scope="col">Client</th>
                <th scope="col">Profile</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {tokens.map((t) => (
                <tr key={t.id} data-token-id={t.id} data-client={t.client}>
                  <td class="mono token-client">
                    {t.client}
                    <span class="small muted token-id">{t.id}</span>
                  </td>
                  <td class="mono">{t.profile ?? <span class="muted">—</span>}</td>
                  <td title={fullTime(t.created)}>{since(t.created, now)}</td>
                  <td class="actions">
                    <ConfirmButton
                      label="Revoke"
                      ariaLabel={`Revoke ${t.client} (${t.id})`}
                      question={`Revoke ${t.client}'s token? It stops working at once.`}
                      confirmLabel="Yes, revoke"
                      onConfirm={async () => {
                        const list = await store.call("clientTokens.revoke", { id: t.id });
                        setCreated((c) => (c?.info.id === t.id ? null : c));
                        setFresh(list);
                      }}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {tokens && tokens.length > 0 && <p class="small muted">{plural(tokens.length, "token")} · updated live · the values are never shown again</p>}
    </section>
  );
}

/** "New token": a client name (checked here as the gateway checks it) and an optional profile. */
function NewToken({ profiles, live, onCreated }: { profiles: readonly string[]; live: boolean; onCreated: (c: ClientTokenCreated) => void }) {
  const [client, setClient] = useState("");
  const [profile, setProfile] = useState("");
  const [touched, setTouched] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const problem = NAME_RE.test(client) ? null : "A client's name is 1 to 64 letters, digits, '_', '-' or '.'";
  // A profile removed meanwhile is no longer offered: back to none.
  useEffect(() => {
    if (profile && !profiles.includes(profile)) setProfile("");
  }, [profiles, profile]);

  const create = async () => {
    setTouched(true);
    if (problem) return;
    setBusy(true);
    setError(null);
    try {
      const c = await store.call("clientTokens.create", { client, ...(profile ? { profile } : {}) });
      setClient("");
      setProfile("");
      setTouched(false);
      onCreated(c);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };
  const showProblem = touched && problem;
  return (
    <form
      class="new-token"
      aria-label="New token"
      onSubmit={(e) => {
        e.preventDefault();
        void create();
      }}
    >
      <label class="field">
        Client name
        <input
          type="text"
          class="mono"
          value={client}
          maxLength={64}
          placeholder="e.g. cursor"
          autocomplete="off"
          aria-invalid={showProblem ? "true" : undefined}
          aria-describedby="new-token-problem"
          onInput={(e) => setClient(e.currentTarget.value)}
          onBlur={() => client && setTouched(true)}
        />
      </label>
      <label class="field">
        Profile
        <select value={profile} onChange={(e) => setProfile(e.currentTarget.value)}>
          <option value="">none (the client chooses)</option>
          {profiles.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" class="btn primary" disabled={busy || !live}>
        Create token
      </button>
      <p id="new-token-problem" class={showProblem ? "error small" : "small muted"} role={showProblem ? "alert" : undefined}>
        {showProblem ? problem : "With a profile, the client sees only that profile's tools, whatever it asks for."}
      </p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}

/** The token just made, shown this once with its HTTP entry; Done forgets it. */
function CreatedToken({ created, base, onDismiss }: { created: ClientTokenCreated; base: string; onDismiss: () => void }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => box.current?.focus(), [created]);
  const entry = httpEntry(base, created.info.client, created.token);
  return (
    <div class="token-created" role="region" aria-label="New client token" tabIndex={-1} ref={box} data-testid="token-created">
      <p class="token-created-head">
        <strong>
          Token for <span class="mono">{created.info.client}</span>
        </strong>
        {created.info.profile && (
          <>
            {" "}
            held to profile <span class="mono">{created.info.profile}</span>
          </>
        )}
      </p>
      <p class="token-warning">Copy it now: it will not be shown again. The gateway keeps only its hash; lost, it is revoked and made anew.</p>
      <div class="token-line">
        <code class="token-value" data-testid="token-value">
          {created.token}
        </code>
        <CopyButton text={created.token} label="Copy token" />
      </div>
      <p class="small muted">The entry for the client's MCP configuration (its server list, under a name such as "tap"):</p>
      <div class="token-line">
        <pre class="token-entry" data-testid="token-entry">
          {entry}
        </pre>
        <CopyButton text={entry} label="Copy entry" />
      </div>
      <button type="button" class="btn" onClick={onDismiss}>
        Done, hide the token
      </button>
    </div>
  );
}

function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState<"yes" | "failed" | null>(null);
  useEffect(() => {
    if (!copied) return;
    const t = setTimeout(() => setCopied(null), 1500);
    return () => clearTimeout(t);
  }, [copied]);
  return (
    <button type="button" class="btn copy-btn" aria-label={label} onClick={() => copyText(text).then(() => setCopied("yes"), () => setCopied("failed"))}>
      {copied === "yes" ? "Copied" : copied === "failed" ? "Copy failed" : "Copy"}
    </button>
  );
}

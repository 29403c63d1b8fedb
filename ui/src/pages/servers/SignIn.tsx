// Signing in to a remote MCP server (OAuth), as the Servers page and the Overview offer it.
//
// `mcpServers.signIn` answers with the authorization server's page; the panel opens it in
// the user's browser (`openInBrowser`: a new tab here, the system browser in the desktop
// app), and the browser comes back to the gateway's `/oauth/callback`, which finishes the
// sign-in and restarts the server. Meanwhile the server's `signIn.pending` is true and the
// panel says it waits for the browser, with the page's link to open it again (a popup
// blocker, a closed tab). Every change of a sign-in comes as `status.changed`, on which the
// pages ask `mcpServers.list` again: nothing here polls.

import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import type { McpServerInfo, McpSignInStart } from "../../generated";
import { store, useNow } from "../../store";
import { desktop, openInBrowser } from "../../transport";
import { fullTime, relative } from "../../format";
import { ConfirmButton } from "../../components/ConfirmButton";

/** A server's key: a user server by name, a project server by name and session. */
export const serverKey = (s: Pick<McpServerInfo, "name" | "sessionId">) => `${s.sessionId ?? ""}/${s.name}`;

/** An id for the DOM made from a server's key. */
export const domId = (prefix: string, s: Pick<McpServerInfo, "name" | "sessionId">) => `${prefix}-${serverKey(s).replace(/[^A-Za-z0-9_-]/g, "_")}`;

/** Whether the server waits for the user to sign in. */
export const needsSignIn = (s: McpServerInfo) => s.state === "needsSignIn";

// ---- The sign-in pages this tab opened, by server (for "open it again") ----------------

const started = new Map<string, McpSignInStart>();
const startedListeners = new Set<() => void>();

/** The sign-in page this tab last opened for `key`, kept across pages (Overview → Servers). */
function useStarted(key: string): McpSignInStart | undefined {
  const [, redraw] = useState(0);
  useEffect(() => {
    const listener = () => redraw((n) => n + 1);
    startedListeners.add(listener);
    return () => void startedListeners.delete(listener);
  }, []);
  return started.get(key);
}

function remember(key: string, start: McpSignInStart) {
  started.set(key, start);
  for (const l of startedListeners) l();
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** The gateway's reason (`it needs you to sign in`) as a sentence: a capital when it stands alone, a full stop. */
export function sentence(reason: string, alone = true): string {
  const text = reason.trim();
  const start = alone ? text.charAt(0).toUpperCase() + text.slice(1) : text;
  return /[.!?]$/.test(start) ? start : `${start}.`;
}

/** Why a sign-in could not start or its page could not be opened. */
interface Failure {
  text: string;
  /** The page, when it is the opening that failed: the user can still follow the link. */
  url?: string;
}

/**
 * Asks the gateway for a sign-in page and opens it in the browser. A failure of the call
 * rejects; a page that could not be opened is reported with its URL.
 */
async function startSignIn(s: McpServerInfo): Promise<Failure | null> {
  const start = await store.call("mcpServers.signIn", { name: s.name, sessionId: s.sessionId });
  remember(serverKey(s), start);
  try {
    await openInBrowser(start.url);
    return null;
  } catch (e) {
    return { text: `The browser could not be opened: ${message(e)}. Open the sign-in page yourself:`, url: start.url };
  }
}

/**
 * A link to a page for the user's browser: a new tab in a browser; in the desktop app, the
 * system browser (the webview opens no other windows).
 */
export function BrowserLink({ url, children }: { url: string; children: ComponentChildren }) {
  const [error, setError] = useState<string | null>(null);
  return (
    <>
      <a
        href={url}
        target="_blank"
        rel="noopener noreferrer"
        onClick={(e) => {
          if (!desktop) return;
          e.preventDefault();
          setError(null);
          openInBrowser(url).catch((err: unknown) => setError(message(err)));
        }}
      >
        {children}
      </a>
      {error && (
        <span class="error" role="alert">
          {" "}
          {error}
        </span>
      )}
    </>
  );
}

/**
 * The **Sign in** button, and under it, while the gateway waits for the browser to come
 * back, "Waiting for the browser…" with the page's link to open again. `describedBy` names
 * what the button is about (its name stays "Sign in" wherever it is).
 */
export function SignInAction({ s, live, primary = true, describedBy, onStarted }: { s: McpServerInfo; live: boolean; primary?: boolean; describedBy?: string; onStarted?: () => void }) {
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<Failure | null>(null);
  const start = useStarted(serverKey(s));
  const now = useNow(10_000);
  const pending = s.signIn?.pending === true;

  const signIn = async () => {
    setBusy(true);
    setFailure(null);
    try {
      setFailure(await startSignIn(s));
      onStarted?.();
    } catch (e) {
      setFailure({ text: `Sign-in could not start: ${message(e)}` });
    } finally {
      setBusy(false);
    }
  };

  const pageLive = start && Date.parse(start.expiresAt) > now;
  return (
    <div class="sign-in-action">
      <button type="button" class={`btn${primary ? " primary" : ""}`} disabled={busy || !live} aria-describedby={describedBy} onClick={() => void signIn()}>
        {busy ? "Signing in…" : "Sign in"}
      </button>
      {pending && (
        <p class="small sign-in-waiting" role="status" data-testid="sign-in-waiting">
          <strong>Waiting for the browser…</strong> Finish signing in on the page that opened; this updates when the browser comes back to the
          gateway.{" "}
          {start && pageLive ? (
            <BrowserLink url={start.url}>Open the sign-in page again</BrowserLink>
          ) : start ? (
            <span class="muted">The sign-in page has expired: press Sign in to start again.</span>
          ) : (
            <span class="muted">It was started elsewhere (another tab, or <code>tap mcp login {s.name}</code>); Sign in starts a new one here.</span>
          )}
        </p>
      )}
      {failure && (
        <p class="small error breakable" role="alert" data-testid="sign-in-error">
          {failure.text}
          {failure.url && (
            <>
              {" "}
              <BrowserLink url={failure.url}>{failure.url}</BrowserLink>
            </>
          )}
        </p>
      )}
    </div>
  );
}

/** The **Sign out** button, asking first in the page. */
function SignOutAction({ s, live, onDone }: { s: McpServerInfo; live: boolean; onDone?: () => void }) {
  if (!live) {
    return (
      <button type="button" class="btn danger-outline" disabled>
        Sign out
      </button>
    );
  }
  return (
    <ConfirmButton
      label="Sign out"
      question={`Sign out of ${s.name}? Its tokens are revoked and forgotten; it then waits for a new sign-in.`}
      confirmLabel="Yes, sign out"
      onConfirm={async () => {
        await store.call("mcpServers.signOut", { name: s.name, sessionId: s.sessionId });
        onDone?.();
      }}
    />
  );
}

/**
 * A remote server's sign-in on the Servers page, under its row: "Needs sign-in" with the
 * reason and **Sign in**, or "Signed in" with the issuer, the scopes and when the access
 * token expires, and **Sign out**.
 */
export function SignInPanel({ s, live, onChanged }: { s: McpServerInfo; live: boolean; onChanged: () => void }) {
  const now = useNow(10_000);
  const info = s.signIn;
  const waits = needsSignIn(s);
  const signedIn = info?.signedIn === true;
  const statusId = domId("sign-in-status", s);
  const expires = info?.expiresAt;
  return (
    <section class={`sign-in${waits ? " waits" : ""}`} aria-label={`Sign-in of ${s.name}`} data-testid="server-sign-in" data-sign-in={waits ? "needed" : signedIn ? "signed-in" : "signed-out"}>
      <div class="sign-in-status" id={statusId}>
        {waits ? (
          <>
            <span class="pill attention">Needs sign-in</span> <span class="strong">{s.name}</span>
            {info?.reason ? (
              <>
                : <span data-testid="sign-in-reason">{sentence(info.reason, false)}</span>
              </>
            ) : (
              " waits for you to sign in."
            )}
            <div class="small muted">
              {signedIn && "A token is stored, but the server did not accept it. "}
              Sign in opens its sign-in page in your browser; the server starts once you have allowed it there.
            </div>
          </>
        ) : signedIn ? (
          <>
            <span class="pill ok">Signed in</span> to <span class="strong">{s.name}</span>
            {info?.issuer && (
              <>
                {" with "}
                <span class="mono breakable" data-testid="sign-in-issuer">
                  {info.issuer}
                </span>
              </>
            )}
            <div class="small sign-in-facts">
              {info && info.scopes.length > 0 && (
                <span data-testid="sign-in-scopes">
                  Scopes:{" "}
                  {info.scopes.map((scope) => (
                    <span key={scope} class="tag mono">
                      {scope}
                    </span>
                  ))}
                </span>
              )}
              {expires && (
                <span class="muted" title={fullTime(expires)} data-testid="sign-in-expiry">
                  {Date.parse(expires) > now ? `Access token expires ${relative(expires, now)}` : `Access token expired ${relative(expires, now)}`}
                  {" (renewed when needed)"}
                </span>
              )}
            </div>
          </>
        ) : (
          <>
            <span class="pill">Not signed in</span> <span class="strong">{s.name}</span> has no sign-in stored.
          </>
        )}
      </div>
      <div class="sign-in-buttons">
        {(waits || !signedIn || info?.pending) && <SignInAction s={s} live={live} primary={waits} describedBy={statusId} onStarted={onChanged} />}
        {signedIn && <SignOutAction s={s} live={live} onDone={onChanged} />}
      </div>
    </section>
  );
}

import { useEffect, useState } from "preact/hooks";
import type { FileLocations } from "../generated";
import type { PanelState } from "../store";
import { useNow } from "../store";
import { useMethod } from "../method";
import { desktop } from "../transport";
import { duration, fullTime } from "../format";
import { IdText } from "../components/IdText";
import { domId, needsSignIn, sentence, serverKey, SignInAction } from "./servers/SignIn";
import { HeldTools } from "./HeldTools";

/** Health, address, uptime, version and counts, from the live snapshot; what needs attention first. */
export function Overview({ state }: { state: PanelState }) {
  useNow(1000); // uptime ticks locally between status updates
  const status = state.status!;
  const uptime = status.uptimeMs + (performance.now() - state.statusAt);
  const pending = state.pairings.filter((p) => p.state === "pending").length;
  const paired = state.pairings.filter((p) => p.state === "paired").length;
  const busy = status.sessions.filter((s) => s.state === "busy").length;
  const live = state.phase.kind === "live";

  return (
    <>
      <SecretStorageNotice />
      <NeedsAttention live={live} />
      <HeldTools live={live} />
      <section class="cards" aria-label="Gateway">
        <Card label="Health" value={live ? "Running" : "Unreachable"} tone={live ? "ok" : "warn"} />
        <Card label="Address" value={status.address} mono />
        <Card label="Uptime" value={duration(uptime)} hint={`since ${fullTime(status.startedAt)}`} />
        <Card label="Version" value={status.version} mono />
      </section>
      <section class="cards" aria-label="Counts">
        <Card label="Sessions" value={String(status.sessions.length)} hint={`${busy} busy`} href="#/sessions" />
        <Card label="Providers" value={String(status.providers.length)} hint="connected" href="#/providers" />
        <Card
          label="Pending pairings"
          value={String(pending)}
          tone={pending > 0 ? "attention" : undefined}
          hint={pending > 0 ? "waiting for you" : "none waiting"}
          href="#/pairing"
        />
        <Card label="Paired providers" value={String(paired)} href="#/pairing" />
      </section>
      {state.files && <Files files={state.files} />}
    </>
  );
}

/**
 * The MCP servers failing now (parked, or restarting after a failure), each with its last
 * error, and those waiting for the user to sign in, each with why and a **Sign in**; and the
 * way to the Servers page, where they are restarted. Nothing when none is: the tray asks for
 * attention on the same rule (`failing` of `mcpServers.list`, or `needsSignIn`). Asked again
 * on `status.changed`, which the gateway sends when a server fails, parks, recovers, or its
 * sign-in changes.
 */
function NeedsAttention({ live }: { live: boolean }) {
  const { data, refresh } = useMethod("mcpServers.list", {}, { on: ["status.changed"] });
  const servers = (data?.servers ?? []).filter((s) => s.failing || needsSignIn(s));
  if (servers.length === 0) return null;
  const failing = servers.some((s) => s.failing);
  return (
    <section class="needs-attention" aria-labelledby="attention-heading" data-testid="overview-attention">
      <h2 id="attention-heading">Needs attention</h2>
      <ul class="plain">
        {servers.map((s) => {
          const nameId = domId("attention", s);
          return (
            <li key={serverKey(s)} data-server={s.name}>
              <span class="strong" id={nameId}>
                MCP server {s.name}
              </span>{" "}
              {needsSignIn(s) ? <span class="pill attention">needs sign-in</span> : <span class="pill warn">{s.state}</span>}
              {s.sessionId && (
                <span class="small muted">
                  {" · session "}
                  <IdText id={s.sessionId} />
                </span>
              )}
              {needsSignIn(s) ? (
                <>
                  <div class="small breakable">{sentence(s.signIn?.reason ?? "it waits for you to sign in")}</div>
                  <SignInAction s={s} live={live} describedBy={nameId} onStarted={refresh} />
                </>
              ) : (
                s.lastError && <div class="small error breakable">{s.lastError}</div>
              )}
            </li>
          );
        })}
      </ul>
      <p class="small">
        <a href="#/servers">Servers</a> {failing ? "has their stderr and restarts them." : "has their sign-in."}
      </p>
    </section>
  );
}

/** The desktop app's word on where secrets are kept, when it is not the OS keyring. */
function SecretStorageNotice() {
  const [notice, setNotice] = useState<string | null>(null);
  useEffect(() => {
    desktop
      ?.secretStorageNotice()
      .then(setNotice)
      .catch(() => setNotice(null));
  }, []);
  if (!notice) return null;
  return (
    <p class="notice" role="status" data-testid="secret-storage-notice">
      <strong>Secret storage: </strong>
      {notice}
    </p>
  );
}

/** Where the token and state files are. Paths only: the files are private (mode 0600). */
function Files({ files }: { files: FileLocations }) {
  const rows: [string, string | undefined, string][] = [
    ["Provider token", files.providerToken, "what Core Profile providers authenticate with"],
    ["Provider token (Copilot)", files.copilotProviderToken, "the same token, where the spec's providers look"],
    ["Session-host token", files.hostToken, "what session hosts authenticate with"],
    ["Control token", files.controlToken ?? undefined, "what the panel and `tap pairing` authenticate with"],
    ["Gateway state", files.state, "address, pid and start time, for `tap` commands"],
    ["Settings", files.settings, "port and notifications"],
    ["Remembered pairings", files.pairedProviders, "hashes of remembered providers' tokens"],
  ];
  return (
    <section aria-labelledby="files-heading">
      <h2 id="files-heading">Files</h2>
      <p class="small muted">
        In <span class="mono">{files.dataDir}</span> (TAP_HOME). Token files are readable only by you (mode 0600); they are removed when
        the gateway stops.
      </p>
      <div class="table-wrap">
        <table aria-label="Token and state files" data-testid="overview-files">
          <tbody>
            {rows.map(([label, path, what]) => (
              <tr key={label}>
                <th scope="row">{label}</th>
                <td class="mono small wrap" data-file={label}>
                  {path ?? <span class="muted">{label === "Control token" ? "kept by the desktop app (not a file)" : "not written"}</span>}
                </td>
                <td class="small muted">{what}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function Card(props: { label: string; value: string; hint?: string; tone?: "ok" | "warn" | "attention"; mono?: boolean; href?: string }) {
  const body = (
    <>
      <span class="card-label">{props.label}</span>
      <span class={`card-value${props.mono ? " mono" : ""}`} data-testid={`overview-${props.label.toLowerCase().replace(/ /g, "-")}`}>
        {props.value}
      </span>
      {props.hint && <span class="card-hint">{props.hint}</span>}
    </>
  );
  const cls = `card${props.tone ? ` ${props.tone}` : ""}`;
  return props.href ? (
    <a class={`${cls} card-link`} href={props.href}>
      {body}
    </a>
  ) : (
    <div class={cls}>{body}</div>
  );
}

// The top of the Overview: what needs the user now, nothing when nothing does.
// - pairing requests waiting (the Pairing page answers them),
// - tool calls waiting for an approval (the Approvals page, or the banner on every page),
// - MCP servers failing (parked, restarting) or waiting for a sign-in,
// - tool calls that failed in the last hour, in all and per provider or server, each
//   linking to those traces.
// Everything here is refreshed by events (`pairing.*` through the store, `approval.*`,
// `status.changed`, `traces.changed` throttled); nothing polls.

import type { PanelState } from "../../store";
import { useMethod } from "../../method";
import { rowName, type ActivityReport } from "../../activity";
import { useWaitingCalls } from "../approvals/model";
import { IdText } from "../../components/IdText";
import { domId, needsSignIn, sentence, serverKey, SignInAction } from "../servers/SignIn";
import { count } from "../../components/charts/scale";
import { tracesHref } from "./links";

/** `hour`: `activity.query` for the last hour by provider (the Overview asks it once for both blocks). */
export function Attention({ state, live, hour }: { state: PanelState; live: boolean; hour: ActivityReport | null }) {
  const pending = state.pairings.filter((p) => p.state === "pending").length;
  const { waiting } = useWaitingCalls();
  const servers = useMethod("mcpServers.list", {}, { on: ["status.changed"] });
  const failing = (servers.data?.servers ?? []).filter((s) => s.failing || needsSignIn(s));
  const errors = hour?.total.errors ?? 0;
  const failingRows = (hour?.rows ?? []).filter((r) => r.errors > 0);
  if (pending === 0 && waiting.length === 0 && failing.length === 0 && errors === 0) return null;

  return (
    <section class="needs-attention" aria-labelledby="needs-heading" data-testid="overview-needs">
      <h2 id="needs-heading">Needs attention</h2>
      <ul class="plain needs-list">
        {pending > 0 && (
          <li data-need="pairings">
            <span class="pill attention">{pending}</span> {pending === 1 ? "pairing request waits" : "pairing requests wait"} for you:{" "}
            <a href="#/pairing">Pairing</a>
          </li>
        )}
        {waiting.length > 0 && (
          <li data-need="approvals">
            <span class="pill attention">{waiting.length}</span> {waiting.length === 1 ? "tool call waits" : "tool calls wait"} for your
            approval: <a href="#/approvals">Approvals</a>
          </li>
        )}
        {errors > 0 && hour && (
          <li data-need="errors" data-testid="overview-errors">
            <span class="pill danger">{errors}</span> of {count(hour.total.calls, "tool call")} failed in the last hour:{" "}
            <a href={tracesHref({ status: "error", range: "1h" })}>their traces</a>
            {failingRows.length > 0 && (
              <ul class="plain small needs-sub">
                {failingRows.map((r) => (
                  <li key={r.key ?? ""} data-provider={r.key ?? ""}>
                    <a href={tracesHref({ provider: r.key ?? "", status: "error", range: "1h" })}>{rowName(r)}</a>: {r.errors} of{" "}
                    {count(r.calls, "call")} failed
                  </li>
                ))}
              </ul>
            )}
          </li>
        )}
      </ul>
      {failing.length > 0 && (
        <div data-testid="overview-attention">
          <ul class="plain">
            {failing.map((s) => {
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
                      <SignInAction s={s} live={live} describedBy={nameId} onStarted={servers.refresh} />
                    </>
                  ) : (
                    s.lastError && <div class="small error breakable">{s.lastError}</div>
                  )}
                </li>
              );
            })}
          </ul>
          <p class="small">
            <a href="#/servers">Servers</a> {failing.some((s) => s.failing) ? "has their stderr and restarts them." : "has their sign-in."}
          </p>
        </div>
      )}
    </section>
  );
}

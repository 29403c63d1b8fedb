import { useEffect, useRef, useState } from "preact/hooks";
import type { PanelState } from "../store";
import { useNow } from "../store";
import { desktop } from "../transport";
import { duration, fullTime } from "../format";
import { HeldTools } from "./HeldTools";
import { Attention } from "./overview/Attention";
import { Activity } from "./overview/Activity";
import { useActivity, useSliding, type ActivityReport, type ActivityWindow } from "../activity";
import type { ActivityBy } from "../generated";

/**
 * Health first: what needs the user (pairings, approvals, held tools, failing servers,
 * errors in the last hour), then the activity over a chosen window (calls, errors, latency,
 * per provider, tool and client), then the gateway's address, uptime, version and counts.
 * The file paths are on Settings.
 */
export function Overview({ state }: { state: PanelState }) {
  const status = state.status!;
  const pending = state.pairings.filter((p) => p.state === "pending").length;
  const paired = state.pairings.filter((p) => p.state === "paired").length;
  const busy = status.sessions.filter((s) => s.state === "busy").length;
  const live = state.phase.kind === "live";
  const [window, setWindow] = useState<ActivityWindow>("1h");
  const [by, setBy] = useState<ActivityBy>("provider");
  const activity = useActivity({ window, by });
  // Needs attention wants the last hour by provider: the chart's own answer when it shows
  // that (the default), else one more query.
  const same = window === "1h" && by === "provider";
  const ownHour = useActivity({ window: "1h", by: "provider" }, { enabled: !same });
  // The last hour's answer, kept while another is on its way (the block must not blink).
  const lastHour = useRef<ActivityReport | null>(null);
  const fresh = same ? activity.data : ownHour.data;
  if (fresh && fresh.window === "1h") lastHour.current = fresh;
  // Both move on at each bucket's end while nothing happens (no query: activity.ts).
  const chart = useSliding(activity.data);
  const hour = useSliding(lastHour.current);

  return (
    <>
      <SecretStorageNotice />
      <Attention state={state} live={live} hour={hour} />
      <HeldTools live={live} />
      <Activity choice={{ window, by, setWindow, setBy }} answer={{ ...activity, data: chart }} />
      <section class="cards" aria-label="Gateway">
        <Card label="Health" value={live ? "Running" : "Unreachable"} tone={live ? "ok" : "warn"} />
        <Card label="Address" value={status.address} mono />
        <UptimeCard state={state} />
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
    </>
  );
}

/** Uptime, ticking locally between status updates: only this card redraws each second, not the charts. */
function UptimeCard({ state }: { state: PanelState }) {
  useNow(1000);
  const status = state.status!;
  const uptime = status.uptimeMs + (performance.now() - state.statusAt);
  return <Card label="Uptime" value={duration(uptime)} hint={`since ${fullTime(status.startedAt)}`} />;
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

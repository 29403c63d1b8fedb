import type { PanelState } from "../store";
import { useNow } from "../store";
import { duration, fullTime } from "../format";

/** Health, address, uptime, version and counts, from the live snapshot. */
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
    </>
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

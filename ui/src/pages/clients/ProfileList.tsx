import type { ProfilesList } from "../../generated";
import { bytes } from "../../format";
import { count, share } from "./model";

/**
 * "Every tool" (what a client without a profile lists) and each profile: its name,
 * description, tools and what they cost against every tool (a search profile: what its
 * clients list, its tools "to find"), or why it cannot be used.
 * Selecting one opens its editor (`#/clients/NAME`).
 */
export function ProfileList({ list, selected }: { list: ProfilesList; selected: string | null }) {
  const all = list.tools.length;
  return (
    <ul class="profile-list" aria-label="Profiles">
      <li class="profile-card every" data-testid="profile-every">
        <span class="profile-name">Every tool</span>
        <span class="small muted">no profile</span>
        <span class="profile-cost">
          <span data-tokens={list.tokens}>{count(list.tokens)} tokens</span> · {all} tools · {bytes(list.bytes)}
        </span>
      </li>
      {list.profiles.map((p) => {
        const current = p.name === selected;
        return (
          <li key={p.name} class={`profile-card${current ? " selected" : ""}${p.error ? " broken" : ""}`} data-profile={p.name}>
            <a class="profile-name" href={`#/clients/${encodeURIComponent(p.name)}`} aria-current={current ? "true" : undefined}>
              {p.name}
            </a>
            {p.def?.description && <span class="small muted profile-description">{p.def.description}</span>}
            {p.error ? (
              <span class="error small" data-testid="profile-error">
                {p.error}
              </span>
            ) : (
              <span class="profile-cost" data-testid="profile-cost">
                <span data-tokens={p.tokens}>{count(p.tokens)} tokens</span> · {(p.visible ?? []).length} of {all} tools
                {p.def?.surface === "search" ? " to find" : ""} · {bytes(p.bytes)} ·{" "}
                <span class="muted">{share(p.tokens, list.tokens)} of every tool</span>
              </span>
            )}
          </li>
        );
      })}
    </ul>
  );
}

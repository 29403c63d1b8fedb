import { useEffect, useState } from "preact/hooks";
import type { ProfilesList } from "../generated";
import type { PanelState } from "../store";
import { useMethod } from "../method";
import { plural } from "../format";
import { ConnectList } from "./clients/ConnectList";
import { ProfileList } from "./clients/ProfileList";
import { ProfileEditor } from "./clients/ProfileEditor";
import { NewProfile } from "./clients/NewProfile";
import { ClientTokens } from "./clients/ClientTokens";
import { SkillsList } from "./clients/SkillsList";

/**
 * Clients: every MCP client on this machine with its state, Connect / Repair / Disconnect
 * (`clients.*`, what `tap connect` does) and its recent sessions (`clients/ConnectList.tsx`),
 * and the profiles of
 * `$TAP_HOME/profiles.json` (`profiles.list`): each with the tools it lets through and what
 * they cost a client's context against every tool; `#/clients/NAME` opens one's editor.
 * Asked again on `status.changed` (a provider or MCP server came or went, so the tools
 * changed), never on a timer. Below, the client tokens of the MCP HTTP endpoint
 * (`clients/ClientTokens.tsx`), then the agent skills and where each is installed
 * (`clients/SkillsList.tsx`).
 */
export function Clients({ state, selected }: { state: PanelState; selected?: string }) {
  const live = state.phase.kind === "live";
  const { data, error } = useMethod("profiles.list", {}, { on: ["status.changed"] });
  // The answer of our own set or remove, shown until the next list arrives.
  const [fresh, setFresh] = useState<ProfilesList | null>(null);
  useEffect(() => setFresh(null), [data]);
  const list = normalized(fresh ?? data);
  const profile = list?.profiles.find((p) => p.name === selected);

  return (
    <div class="clients">
      <ConnectList
        profile={profile && !profile.error ? profile.name : null}
        profiles={list?.profiles.filter((p) => !p.error).map((p) => p.name) ?? []}
        live={live}
      />
      <div class="section-head">
        <h2>Profiles</h2>
        <NewProfile
          list={list}
          live={live}
          onCreated={(l, name) => {
            setFresh(l);
            location.hash = `#/clients/${encodeURIComponent(name)}`;
          }}
        />
      </div>
      <p class="small muted" data-testid="profiles-count">
        {list ? (
          <>
            {plural(list.profiles.length, "profile")} in <span class="mono">{list.path}</span> · updated live · a client uses one with{" "}
            <code>tap mcp --profile NAME</code>
          </>
        ) : error ? (
          ""
        ) : (
          "Loading…"
        )}
      </p>
      {error && (
        <p class="error" role="alert">
          {error.message}
        </p>
      )}
      {list?.warnings.map((w) => (
        <p key={w} class="notice">
          {w}
        </p>
      ))}
      {list && (
        <div class="profiles-layout">
          <ProfileList list={list} selected={profile?.name ?? null} />
          {profile ? (
            <ProfileEditor
              key={profile.name}
              list={list}
              profile={profile}
              live={live}
              onChanged={setFresh}
              onDeleted={() => (location.hash = "#/clients")}
            />
          ) : (
            <p class="empty profile-hint">
              {selected ? `There is no profile named ${selected}. ` : ""}
              {list.profiles.length > 0 ? "Select a profile to choose its tools." : "No profile yet: New profile makes one that sees every tool, to narrow down here."}
            </p>
          )}
        </div>
      )}
      <ClientTokens profiles={list?.profiles.filter((p) => !p.error).map((p) => p.name) ?? []} live={live} address={state.status?.address ?? null} />
      <SkillsList />
    </div>
  );
}

/** Lists the gateway may leave out when empty, present. */
function normalized(l: ProfilesList | null): ProfilesList | null {
  if (!l) return null;
  return {
    ...l,
    profiles: (l.profiles ?? []).map((p) => ({ ...p, visible: p.visible ?? [] })),
    tools: l.tools ?? [],
    warnings: l.warnings ?? [],
  };
}

import type { SkillInstallState, SkillsList as Skills } from "../../generated";
import { useMethod } from "../../method";

/** How each install state reads, and its pill's tone. */
const STATES: Record<SkillInstallState, { word: string; tone: string; why: string }> = {
  installed: { word: "installed", tone: "ok", why: "this gateway's text" },
  outdated: { word: "outdated", tone: "warn", why: "another tap's or edited: connecting the client again replaces it" },
  missing: { word: "not installed", tone: "", why: "connecting the client installs it" },
  shadowed: { word: "yours", tone: "attention", why: "a file tap did not write is there: the agent gets that one" },
};

/** Names a client as `clients.list` does (only the Copilot CLI has skills of its own today). */
const CLIENT_NAMES: Record<string, string> = { copilot: "Copilot CLI" };

/**
 * The agent skills this gateway ships (`skills.list`, docs/skills.md): each one's name and
 * description, that every MCP session has it as a prompt of the same name, and where it is
 * installed as a client's own skill (the Copilot CLI's, by Connect above or
 * `tap install copilot`). Asked again on `status.changed`, which the gateway sends after a
 * client is connected or disconnected.
 */
export function SkillsList() {
  const { data, error } = useMethod("skills.list", {}, { on: ["status.changed"], settleMs: 300 });
  return (
    <section class="skills" aria-labelledby="skills-head">
      <h2 id="skills-head">Skills</h2>
      <p class="small muted">
        How an agent drives Tap: every MCP session has each as a prompt (a slash command in Claude Code and others); connecting the Copilot CLI
        installs them as its own skills, with Tap's session-start instructions.
      </p>
      {error && (
        <p class="error" role="alert">
          {error.message}
        </p>
      )}
      {!data && !error && <p class="muted">Loading…</p>}
      {data && <SkillRows list={data} />}
    </section>
  );
}

function SkillRows({ list }: { list: Skills }) {
  return (
    <table class="skill-rows" aria-label="Skills">
      <thead>
        <tr>
          <th scope="col">Skill</th>
          <th scope="col">What it is for</th>
          <th scope="col">Where the agent has it</th>
        </tr>
      </thead>
      <tbody>
        {list.skills.map((s) => (
          <tr key={s.name} data-skill={s.name}>
            <td class="mono">{s.name}</td>
            <td class="small">{s.description}</td>
            <td class="small">
              <div>MCP prompt <code>{s.name}</code></div>
              {s.installed.map((i) => {
                const st = STATES[i.state];
                return (
                  <div key={i.client} data-client={i.client} title={`${i.path}: ${st.why}`}>
                    {CLIENT_NAMES[i.client] ?? i.client} <span class={`pill ${st.tone}`}>{st.word}</span>
                  </div>
                );
              })}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

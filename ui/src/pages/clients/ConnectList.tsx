import { useEffect, useState } from "preact/hooks";
import { copyText } from "../../components/IdText";

/** The clients `tap connect` writes for (docs/clients.md), by their `CLIENT` word. */
export const CLIENTS: readonly { id: string; name: string; profiles: boolean }[] = [
  { id: "claude-code", name: "Claude Code", profiles: true },
  { id: "claude-desktop", name: "Claude Desktop", profiles: true },
  { id: "cursor", name: "Cursor", profiles: true },
  { id: "vscode", name: "VS Code", profiles: true },
  { id: "windsurf", name: "Windsurf", profiles: true },
  { id: "zed", name: "Zed", profiles: true },
  { id: "codex", name: "Codex CLI", profiles: true },
  { id: "gemini", name: "Gemini CLI", profiles: true },
  { id: "opencode", name: "opencode", profiles: true },
  // Copilot sessions come through tap's extension, which takes no profile yet.
  { id: "copilot", name: "GitHub Copilot CLI", profiles: false },
];

/** The command that connects `client`, with `profile` when it takes one. */
export const connectCommand = (client: (typeof CLIENTS)[number], profile: string | null) =>
  `tap connect ${client.id}${profile && client.profiles ? ` --profile ${profile}` : ""}`;

/**
 * How to connect an agent: each client's `tap connect` command (with the selected profile)
 * and a button copying it. The panel cannot write a client's file itself yet: the command line does.
 */
export function ConnectList({ profile }: { profile: string | null }) {
  return (
    <section class="connect" aria-labelledby="connect-head">
      <h2 id="connect-head">Connect an agent</h2>
      <p class="small muted">
        Run your client's command in a terminal: it adds the gateway to that client's own configuration file, with a backup (
        <code>--dry-run</code> shows the change first; <code>tap disconnect CLIENT</code> undoes it). Connecting from the panel is not there
        yet: the command line does it.
        {profile ? (
          <>
            {" "}
            The commands name the selected profile, <strong class="mono">{profile}</strong>.
          </>
        ) : (
          " Select a profile below to give the client only its tools."
        )}
      </p>
      <ul class="connect-list" aria-label="Connect commands">
        {CLIENTS.map((c) => (
          <li key={c.id} data-client={c.id} title={c.name}>
            <span class="sr-only">{c.name}: </span>
            <CopyCommand command={connectCommand(c, profile)} />
          </li>
        ))}
      </ul>
    </section>
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


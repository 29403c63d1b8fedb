import { useState } from "preact/hooks";
import { store, type PanelState } from "../store";
import { useMethod } from "../method";
import { plural } from "../format";
import { ServerRows } from "./servers/ServerRows";

/**
 * Servers: the MCP servers the gateway runs as providers (`$TAP_HOME/mcp.json` and the
 * sessions' `tap.config.json`), each with its state, transport, process (pid, memory),
 * tools, restarts and last error; a row expands to its tools, warnings and stderr tail. A
 * remote server that signs in (OAuth) has its sign-in under its row: Sign in (the page opens
 * in the browser) or Sign out. Restart one, or reload mcp.json. Asked again on
 * `status.changed` (the gateway sends it when a server becomes ready, restarts after a
 * failure, parks, its sign-in changes, or the list changes): no polling, so the memory shown
 * is as of the last change.
 */
export function Servers({ state }: { state: PanelState }) {
  const live = state.phase.kind === "live";
  const { data: list, error: listError, refresh } = useMethod("mcpServers.list", {}, { on: ["status.changed"] });
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const act = async (what: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await what();
      refresh();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  // Empty lists may be left out on the wire (the engine skips them when serializing).
  const servers = (list?.servers ?? []).map((s) => ({ ...s, tools: s.tools ?? [], secretNames: s.secretNames ?? [], stderrTail: s.stderrTail ?? [], warnings: s.warnings ?? [] }));
  const shown = error ?? listError?.message ?? null;
  return (
    <div class="servers">
      <div class="toolbar">
        <button
          type="button"
          class="btn"
          disabled={busy || !live}
          title="Read $TAP_HOME/mcp.json again: new servers start, removed ones stop, changed ones restart"
          onClick={() => void act(() => store.call("mcpServers.reload", {}))}
        >
          Reload mcp.json
        </button>
      </div>
      <div class="tail-status">
        <p class="small muted" role="status" data-testid="servers-count">
          {list ? `${plural(servers.length, "server")} · updated live` : shown ? "" : "Loading…"}
        </p>
      </div>
      {shown && (
        <p class="error" role="alert">
          {shown}
        </p>
      )}
      {list && servers.length === 0 && (
        <div class="empty" data-testid="servers-empty">
          <p>
            No MCP server is configured. Add one with <code>tap mcp add NAME -- COMMAND ARGS…</code>, or write{" "}
            <code>$TAP_HOME/mcp.json</code> as <code>{'{"mcpServers": {"NAME": {"command": "…", "args": ["…"]}}}'}</code> and press{" "}
            <strong>Reload mcp.json</strong>.
          </p>
          <p class="small muted">
            A workspace's <code>tap.config.json</code> can list servers under <code>mcpServers</code> too; they run for the sessions opened there.
          </p>
        </div>
      )}
      {servers.length > 0 && (
        <ServerRows
          servers={servers}
          live={live}
          busy={busy}
          onRestart={(s) => void act(() => store.call("mcpServers.restart", { name: s.name, sessionId: s.sessionId }))}
          onChanged={refresh}
        />
      )}
    </div>
  );
}

// One held tool definition (docs/pins.md): the tool, why it is held, the diff of its
// description, input schema and annotations, and Accept, which accepts exactly the
// definition shown (its hash: a definition changed again meanwhile is refused, not accepted
// unseen). The Overview's "Held tool definitions" and the tray popup both show it; the
// popup adds its "Keep holding" as `children`.

import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import type { HeldTool } from "../../generated";
import { store } from "../../store";
import "./held-tool.css";

const REASONS: Record<HeldTool["reason"], string> = {
  changed: "definition changed",
  full: "pins full",
  unreadable: "pins.json unreadable",
};

export function HeldToolItem({ h, live, onDone, children }: { h: HeldTool; live: boolean; onDone: () => void; children?: ComponentChildren }) {
  const [error, setError] = useState<string | null>(null);
  const accept = async () => {
    setError(null);
    try {
      await store.call("pins.accept", { provider: h.provider, tool: h.tool, hash: h.offeredHash });
      onDone();
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  };
  return (
    <li class="held-item" data-provider={h.provider} data-tool={h.tool}>
      <span class="strong">
        {h.tool} of {h.provider}
      </span>{" "}
      <span class="pill attention">{REASONS[h.reason]}</span>
      {h.diff ? (
        <pre class="small held-diff" data-testid="held-diff">
          {h.diff}
        </pre>
      ) : (
        <div class="small muted">No diff to show (a definition over the size limit is pinned by its hash alone).</div>
      )}
      <div class="held-actions">
        {h.reason !== "unreadable" && (
          <button type="button" class="btn" disabled={!live} onClick={accept}>
            Accept
          </button>
        )}
        {children}
      </div>
      {error && <div class="small error breakable">{error}</div>}
    </li>
  );
}

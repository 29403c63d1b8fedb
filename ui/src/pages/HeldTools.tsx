// Held tool definitions (docs/pins.md), under the Overview's "Needs attention": a tool whose
// definition changed after it was pinned is not offered to sessions until the user accepts
// the change. Each held tool shows its diff (description, input schema, annotations) and an
// Accept button that accepts exactly the definition shown (its hash). The gateway sends
// `status.changed` when something is held or accepted; nothing here polls.

import { useState } from "preact/hooks";
import type { HeldTool } from "../generated";
import { store } from "../store";
import { useMethod } from "../method";

const REASONS: Record<HeldTool["reason"], string> = {
  changed: "definition changed",
  full: "pins full",
  unreadable: "pins.json unreadable",
};

/** Nothing when no tool is held and pins.json reads fine. */
export function HeldTools({ live }: { live: boolean }) {
  const { data, refresh } = useMethod("pins.list", {}, { on: ["status.changed"] });
  if (!data || (data.held.length === 0 && !data.problem)) return null;
  return (
    <section class="needs-attention" aria-labelledby="held-heading" data-testid="held-tools">
      <h2 id="held-heading">Held tool definitions</h2>
      {data.problem && <p class="small error breakable">{data.problem}</p>}
      <ul class="plain">
        {data.held.map((h) => (
          <Held key={`${h.provider}/${h.tool}`} h={h} live={live} onDone={refresh} />
        ))}
      </ul>
      <p class="small muted">
        Not offered to sessions until accepted (or with <span class="mono">tap pins accept PROVIDER TOOL</span>).
      </p>
    </section>
  );
}

function Held({ h, live, onDone }: { h: HeldTool; live: boolean; onDone: () => void }) {
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
    <li data-provider={h.provider} data-tool={h.tool}>
      <span class="strong">
        {h.tool} of {h.provider}
      </span>{" "}
      <span class="pill attention">{REASONS[h.reason]}</span>
      {h.diff ? (
        <pre class="small wrap" data-testid="held-diff">
          {h.diff}
        </pre>
      ) : (
        <div class="small muted">No diff to show (a definition over the size limit is pinned by its hash alone).</div>
      )}
      {h.reason !== "unreadable" && (
        <button type="button" disabled={!live} onClick={accept}>
          Accept
        </button>
      )}
      {error && <div class="small error breakable">{error}</div>}
    </li>
  );
}

// Held tool definitions (docs/pins.md), under the Overview's "Needs attention": a tool whose
// definition changed after it was pinned is not offered to sessions until the user accepts
// the change. Each held tool shows its diff (description, input schema, annotations) and an
// Accept button that accepts exactly the definition shown (its hash): `pins/HeldToolItem`,
// which the tray popup shows too. The gateway sends
// `status.changed` when something is held or accepted; nothing here polls.

import { useMethod } from "../method";
import { HeldToolItem } from "./pins/HeldToolItem";

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
          <HeldToolItem key={`${h.provider}/${h.tool}`} h={h} live={live} onDone={refresh} />
        ))}
      </ul>
      <p class="small muted">
        Not offered to sessions until accepted (or with <span class="mono">tap pins accept PROVIDER TOOL</span>).
      </p>
    </section>
  );
}

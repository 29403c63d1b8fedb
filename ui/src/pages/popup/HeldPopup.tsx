// Held tool definitions in the tray popup (docs/pins.md, docs/desktop.md): shown when the
// tray's "N tools held…" line opened the popup (its page is `?view=popup#held`, or an open
// popup gets the `tap-show-held` event), each with its diff and the Overview's Accept
// (pins/HeldToolItem), plus "Keep holding", which leaves the tool held (not offered to
// sessions) and only takes it out of the popup until the tray's line is chosen again.

import { useEffect, useState } from "preact/hooks";
import type { HeldTool } from "../../generated";
import { useMethod } from "../../method";
import { HeldToolItem } from "../pins/HeldToolItem";

/** The event the desktop app sends an open popup when its held-tools line is chosen. */
const SHOW_HELD_EVENT = "tap-show-held";

const key = (h: HeldTool) => `${h.provider}/${h.tool}/${h.offeredHash}`;

/** The held definitions the popup shows (none until asked for), and a refresh. */
export function useHeldInPopup(): { held: HeldTool[]; keep: (h: HeldTool) => void; refresh: () => void } {
  const [asked, setAsked] = useState(() => location.hash === "#held");
  const [kept, setKept] = useState<ReadonlySet<string>>(new Set());
  useEffect(() => {
    const show = () => {
      setKept(new Set());
      setAsked(true);
    };
    window.addEventListener(SHOW_HELD_EVENT, show);
    return () => window.removeEventListener(SHOW_HELD_EVENT, show);
  }, []);
  const { data, refresh } = useMethod("pins.list", {}, { on: ["status.changed"], enabled: asked });
  const held = asked ? (data?.held ?? []).filter((h) => !kept.has(key(h))) : [];
  const keep = (h: HeldTool) => setKept((k) => new Set(k).add(key(h)));
  return { held, keep, refresh };
}

export function HeldPopup({ held, live, keep, refresh }: { held: HeldTool[]; live: boolean; keep: (h: HeldTool) => void; refresh: () => void }) {
  return (
    <section class="held-popup" aria-label="Held tool definitions" data-testid="held-popup">
      <ul class="plain popup-list">
        {held.map((h) => (
          <HeldToolItem key={key(h)} h={h} live={live} onDone={refresh}>
            <button type="button" class="btn" onClick={() => keep(h)} title="Leave it held (not offered to sessions); decide later">
              Keep holding
            </button>
          </HeldToolItem>
        ))}
      </ul>
      <p class="small muted">Not offered to sessions until accepted.</p>
    </section>
  );
}

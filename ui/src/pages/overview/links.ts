// Where a click on an activity figure goes: the Traces page, filtered to it
// (`#/traces?provider=…&status=error&range=1h`, read by the Traces page).

import type { ActivityWindow } from "../../activity";

export type RowKind = "provider" | "tool" | "client";

export interface TraceFilter {
  provider?: string;
  tool?: string;
  client?: string;
  status?: "error";
  range?: ActivityWindow;
}

/** The Traces page's address for `filter` (tool calls only: the figures count nothing else). */
export function tracesHref(filter: TraceFilter): string {
  const q = new URLSearchParams({ kind: "tool.call" });
  for (const [k, v] of Object.entries(filter)) if (v !== undefined) q.set(k, v);
  return `#/traces?${q.toString()}`;
}

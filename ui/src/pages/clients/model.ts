// The Clients page's profile editor, as data: the tools of `profiles.list` grouped by where
// they come from, the editor's choice (groups off, tools hidden), the choice a saved profile
// stands for, the live estimate, and the `ProfileDef` a choice is saved as. No rendering here.
//
// The rules are the gateway's (crates/tap-gateway/src/profiles/profile.rs): a tool is seen
// when its provider is allowed (`servers` names MCP servers, `providers` other providers;
// both empty: every one), its name matches one of `tools` (empty: any), and no `hideTools`
// glob matches it. The gateway's own tools (provider `tap`) pass the first two.

import type { ProfileDef, ProfileInfo, Surface, ToolCost } from "../../generated";

/** What a profile's name may be (crates/tap-gateway/src/profiles/file.rs `valid_name`). */
export const NAME_RE = /^[A-Za-z0-9_.-]{1,64}$/;

/** The provider name of the gateway's own tools in `ToolCost.provider`. */
export const GATEWAY = "tap";

/** Where tools come from, as a profile tells them apart. */
export interface Group {
  /** `gateway`, `server:NAME` or `provider:NAME`. */
  key: string;
  kind: "gateway" | "server" | "provider";
  /** The server's or provider's name (`tap` for the gateway). */
  name: string;
  tools: ToolCost[];
  tokens: number;
  bytes: number;
}

/** The editor's state: which groups are off, which tools are hidden, the description, how
 * clients get the tools (each listed, or found through `tap_find_tools`), and whether its
 * sessions' approvals are also asked in the client (`approvalsInClient`). */
export interface Choice {
  off: ReadonlySet<string>;
  hidden: ReadonlySet<string>;
  description: string;
  surface: Surface;
  approvalsInClient: boolean;
}

const groupKey = (t: ToolCost) => (t.server ? `server:${t.server}` : t.provider === GATEWAY ? "gateway" : `provider:${t.provider}`);

/** The tools by group: the gateway's first, then MCP servers, then providers, each by name. */
export function groupsOf(tools: readonly ToolCost[]): Group[] {
  const byKey = new Map<string, Group>();
  for (const t of tools) {
    const key = groupKey(t);
    let g = byKey.get(key);
    if (!g) {
      const kind = key === "gateway" ? "gateway" : t.server ? "server" : "provider";
      g = { key, kind, name: t.server ?? t.provider, tools: [], tokens: 0, bytes: 0 };
      byKey.set(key, g);
    }
    g.tools.push(t);
    g.tokens += t.tokens;
    g.bytes += t.bytes;
  }
  const rank = { gateway: 0, server: 1, provider: 2 } as const;
  return [...byKey.values()].sort((a, b) => rank[a.kind] - rank[b.kind] || a.name.localeCompare(b.name));
}

/** The gateway's glob: `*` any run of characters, `?` one character, the rest literal. */
export function globMatches(pattern: string, name: string): boolean {
  const p = [...pattern];
  const n = [...name];
  let pi = 0;
  let ni = 0;
  let star: [number, number] | null = null;
  while (ni < n.length) {
    if (p[pi] === "*") {
      star = [pi, ni];
      pi++;
    } else if (pi < p.length && (p[pi] === "?" || p[pi] === n[ni])) {
      pi++;
      ni++;
    } else if (star) {
      pi = star[0] + 1;
      ni = star[1] + 1;
      star = [star[0], star[1] + 1];
    } else {
      return false;
    }
  }
  return p.slice(pi).every((c) => c === "*");
}

/** A def with its lists present: the lists a def may leave out on the wire, filled in. */
export type FullDef = ProfileDef & Required<Pick<ProfileDef, "servers" | "providers" | "tools" | "hideTools">>;

const EMPTY_DEF: FullDef = { servers: [], providers: [], tools: [], hideTools: [] };

/** A def with its lists present (empty lists may be left out on the wire). */
export function defOf(profile: ProfileInfo | undefined): FullDef {
  const d = profile?.def;
  return d
    ? { servers: d.servers ?? [], providers: d.providers ?? [], tools: d.tools ?? [], hideTools: d.hideTools ?? [], description: d.description, surface: d.surface, approvalsInClient: d.approvalsInClient }
    : EMPTY_DEF;
}

/** Whether `def` lets a group's provider through. */
function allows(def: FullDef, g: Group): boolean {
  if (g.kind === "gateway") return true;
  if (def.servers.length === 0 && def.providers.length === 0) return true;
  return g.kind === "server" ? def.servers.includes(g.name) : def.providers.includes(g.name);
}

/** Whether `def`'s name rules (tools, hideTools) let `name` through. */
function namePasses(def: FullDef, name: string): boolean {
  if (def.hideTools.some((g) => globMatches(g, name))) return false;
  return def.tools.length === 0 || def.tools.some((g) => globMatches(g, name));
}

/**
 * The choice a saved profile stands for, from what the gateway says it lets through
 * (`visible`). A group whose provider it does not allow is off, its tools shown or hidden as
 * the name rules say (so turning it on shows what the profile would); the gateway's group is
 * off when every one of its tools is hidden. A profile that cannot be read starts from
 * every tool.
 */
export function choiceOf(profile: ProfileInfo | undefined, groups: readonly Group[]): Choice {
  const def = defOf(profile);
  const readable = !!profile?.def;
  const visible = new Set(profile?.visible ?? []);
  const off = new Set<string>();
  const hidden = new Set<string>();
  for (const g of groups) {
    if (!readable) continue;
    if (g.kind === "gateway") {
      if (g.tools.length > 0 && g.tools.every((t) => !visible.has(t.name))) off.add(g.key);
      else for (const t of g.tools) if (!visible.has(t.name)) hidden.add(t.name);
    } else if (!allows(def, g)) {
      off.add(g.key);
      for (const t of g.tools) if (!namePasses(def, t.name)) hidden.add(t.name);
    } else {
      for (const t of g.tools) if (!visible.has(t.name)) hidden.add(t.name);
    }
  }
  return { off, hidden, description: def.description ?? "", surface: def.surface ?? "tools", approvalsInClient: def.approvalsInClient === true };
}

/** Whether the tool `name` of group `g` is shown under `choice`. */
export const shown = (choice: Choice, g: Group, name: string) => !choice.off.has(g.key) && !choice.hidden.has(name);

/** The live estimate of what `choice`'s clients list: the tools it shows, their tokens and
 * bytes together; with the search surface (`search`: the two search tools' costs) only the
 * gateway's own tools and the search tools are listed, and `full` is what listing every
 * shown tool would cost instead (the gateway sums the same way: clients/offered_tools.rs). */
export function estimate(
  choice: Choice,
  groups: readonly Group[],
  search: readonly ToolCost[] = [],
): { tools: number; tokens: number; bytes: number; full?: { tokens: number; bytes: number } } {
  let tools = 0;
  let tokens = 0;
  let bytes = 0;
  let listedTokens = 0;
  let listedBytes = 0;
  for (const g of groups) {
    for (const t of g.tools) {
      if (!shown(choice, g, t.name)) continue;
      tools++;
      tokens += t.tokens;
      bytes += t.bytes;
      if (g.kind === "gateway") {
        listedTokens += t.tokens;
        listedBytes += t.bytes;
      }
    }
  }
  if (choice.surface !== "search") return { tools, tokens, bytes };
  for (const t of search) {
    listedTokens += t.tokens;
    listedBytes += t.bytes;
  }
  return { tools, tokens: listedTokens, bytes: listedBytes, full: { tokens, bytes } };
}

/**
 * The def `choice` is saved as, keeping what `base` (the saved def) says that the choice
 * does not contradict:
 * - every server and provider on: `servers` and `providers` empty (it then also sees ones
 *   added later); otherwise the ones that are on, plus the names `base` lists that offer no
 *   tool now (a stopped server keeps its place); none on at all: `providers: ["tap"]`, only
 *   the gateway's own tools;
 * - `base.tools` globs kept when every tool to show matches one of them, else dropped;
 * - `base.hideTools` globs kept when they hide no tool to show; then each hidden tool by its
 *   exact name (all of the gateway's when its group is off), unless a kept rule hides it.
 */
export function defFor(choice: Choice, groups: readonly Group[], base: FullDef): ProfileDef {
  const sources = groups.filter((g) => g.kind !== "gateway");
  const on = sources.filter((g) => !choice.off.has(g.key));
  const known = new Set(sources.map((g) => `${g.kind}:${g.name}`));
  let servers: string[] = [];
  let providers: string[] = [];
  if (on.length < sources.length) {
    servers = [...on.filter((g) => g.kind === "server").map((g) => g.name), ...base.servers.filter((n) => !known.has(`server:${n}`))];
    providers = [...on.filter((g) => g.kind === "provider").map((g) => g.name), ...base.providers.filter((n) => !known.has(`provider:${n}`))];
    if (servers.length === 0 && providers.length === 0) providers = [GATEWAY];
  }

  const toShow = groups.flatMap((g) => g.tools.filter((t) => shown(choice, g, t.name)).map((t) => ({ name: t.name, gateway: g.kind === "gateway" })));
  // The `tools` globs apply to providers' tools only; the gateway's pass them.
  const tools = base.tools.length > 0 && toShow.every((t) => t.gateway || base.tools.some((p) => globMatches(p, t.name))) ? [...base.tools] : [];
  const hideTools = base.hideTools.filter((p) => !toShow.some((t) => globMatches(p, t.name)));
  for (const g of groups) {
    const groupHidden = g.kind === "gateway" && choice.off.has(g.key);
    for (const t of g.tools) {
      if (!groupHidden && !choice.hidden.has(t.name)) continue;
      const already = hideTools.some((p) => globMatches(p, t.name)) || (g.kind !== "gateway" && tools.length > 0 && !tools.some((p) => globMatches(p, t.name)));
      if (!already) hideTools.push(t.name);
    }
  }
  const description = choice.description.trim();
  // Off is the key left out, as `tap profiles set` writes it (docs/approvals.md).
  return { servers, providers, tools, hideTools, ...(description ? { description } : {}), ...(choice.surface === "search" ? { surface: "search" as const } : {}), ...(choice.approvalsInClient ? { approvalsInClient: true } : {}) };
}

/** Whether two choices are the same. */
export function sameChoice(a: Choice, b: Choice): boolean {
  const eq = (x: ReadonlySet<string>, y: ReadonlySet<string>) => x.size === y.size && [...x].every((v) => y.has(v));
  return a.description === b.description && a.surface === b.surface && a.approvalsInClient === b.approvalsInClient && eq(a.off, b.off) && eq(a.hidden, b.hidden);
}

/** `1,234`: counts grouped by thousands, the same in every locale the tests run in. */
export const count = (n: number) => n.toLocaleString("en-US");

/** `34%` of `all` (— when there is nothing). */
export const share = (n: number, all: number) => (all > 0 ? `${Math.round((n / all) * 100)}%` : "—");

// What a tool set is to the model and where its tools come from.

/** What a tool set looks like to the model: a change in it needs a reload. */
export const signature = (tools) => JSON.stringify(tools.map((t) => [t.name, t.description ?? "", t.parameters ?? {}]));

/** The providers' tools of a set: every set also holds the gateway's built-in tap_* tools
 * (provider "tap") from its first revision on, and the first prompt waits for the project's. */
export function fromProviders(tools) {
  return tools.filter((t) => t.provider !== "tap");
}

// Provider pushes in the Copilot session: `surface` → a line in the timeline; `inject` → the
// line and a new turn with its prompt.

export function deliver(host, d) {
  // Sent at once even when a reload is due: the CLI queues the turn, and a prompt-mode CLI
  // (`copilot -p`) would exit before a reloaded process could send it.
  if (!host.session || host.reloading) {
    host.queued.push({ kind: "delivery", delivery: d });
    return;
  }
  const source = d.stream && d.stream !== d.provider ? `${d.provider}/${d.stream}` : d.provider;
  host.session.log(`[${source}] ${d.event}`).catch(() => {});
  if (d.level === "inject") {
    host.session.send({ prompt: d.prompt ?? d.event }).catch((e) => host.log(`Tap: could not start a turn for ${source}: ${e.message}`, "warning"));
  }
}

/** Shows what arrived before the session was joined (or while a reload was due). */
export function flushQueued(host) {
  const queued = host.queued;
  host.queued = [];
  for (const q of queued) {
    if (q.kind === "log") host.log(q.text, q.level);
    else deliver(host, q.delivery);
  }
}

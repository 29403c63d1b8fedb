// A TCP proxy in front of the gateway, so a test can drop a provider's socket the way a network
// does (no close frame) and keep it down for a while.
import net from "node:net";

export async function startProxy(targetUrl) {
  const target = new URL(targetUrl);
  const sockets = new Set();
  let blocked = false;
  const server = net.createServer((client) => {
    if (blocked) { client.destroy(); return; }
    const upstream = net.connect(Number(target.port), target.hostname);
    const pair = [client, upstream];
    for (const s of pair) { sockets.add(s); s.on("error", () => {}); s.on("close", () => { sockets.delete(s); for (const o of pair) o.destroy(); }); }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `ws://127.0.0.1:${server.address().port}`,
    /** Destroys every proxied connection at once (both directions, no close frame). */
    drop() { for (const s of sockets) s.destroy(); },
    /** While blocked, new connections are accepted and destroyed at once. */
    block(on) { blocked = on; },
    close() { this.drop(); return new Promise((r) => server.close(r)); },
  };
}

// The front of the gateway for the MCP conformance suite's SERVER scenarios
// (scripts/test-mcp-conformance-server.sh): the suite's runner has no header option, and the
// gateway's MCP endpoint wants the host token, so this local proxy adds
// `Authorization: Bearer <host token>` to every request and forwards it to
// `http://<gateway>/mcp/<session>` (any path here maps there, the query string kept). The
// method, body and every other header go as they came, `Host` and `Origin` included, so the
// gateway's own checks (DNS rebinding) see what the suite sent. Answers come back as they
// are, status and headers too, each chunk written as it arrives: SSE streams pass through
// unbuffered, and a client that goes away closes the request to the gateway.
//
// Before it listens it waits, with a deadline, for the gateway to be ready: TAP_HOME's
// gateway.json naming the gateway's pid (--pid), its host token, and `tap mcp list --json`
// (TAP_BIN) showing the MCP server --server `ready`. Then it listens on 127.0.0.1 (port 0:
// the OS picks) and prints one line `PORT <n>` on stdout; everything else goes to stderr.
//
// node proxy.mjs --pid PID --session NAME --server NAME   (env: TAP_HOME, TAP_BIN)

import http from "node:http";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { gatewayJson, tapBin } from "../../js-support/gateway.mjs";
import { run } from "../../js-support/process.mjs";
import { GiveUp, waitFor } from "../../js-support/wait.mjs";

const { values: opts } = parseArgs({
  options: { pid: { type: "string" }, session: { type: "string" }, server: { type: "string" } },
});
const tapHome = process.env.TAP_HOME;
if (!tapHome || !opts.pid || !opts.session || !opts.server) {
  console.error("usage: TAP_HOME=… TAP_BIN=… node proxy.mjs --pid PID --session NAME --server NAME");
  process.exit(2);
}
const pid = Number(opts.pid);
const log = (...args) => console.error("proxy:", ...args);

/** Why the gateway will never be ready (its process is gone), or undefined. */
function gone() {
  try {
    process.kill(pid, 0);
    return undefined;
  } catch {
    return `the gateway (pid ${pid}) exited`;
  }
}

// Hop-by-hop headers (RFC 9110 7.6.1) are the connection's own; node sets its own.
const HOP = ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade"];
const endToEnd = (headers) => Object.fromEntries(Object.entries(headers).filter(([k]) => !HOP.includes(k)));

async function main() {
  const info = await gatewayJson(tapHome, pid, "the gateway's gateway.json", gone);
  const target = new URL(info.address.replace(/^ws/, "http"));
  const token = await waitFor(
    async () => (await readFile(path.join(tapHome, "host-token"), "utf8")).trim(),
    "the gateway's host-token",
  );
  const ready = await waitFor(async () => {
    const why = gone();
    if (why) throw new GiveUp(why);
    const r = await run(tapBin(), ["mcp", "list", "--json"]);
    if (r.code !== 0) return null;
    const entry = JSON.parse(r.stdout).find((e) => e.name === opts.server);
    if (entry?.state === "parked" || entry?.state === "disabled") {
      throw new GiveUp(`MCP server ${opts.server} is ${entry.state}: ${JSON.stringify(entry)}`);
    }
    return entry?.state === "ready" ? entry : null;
  }, `MCP server ${opts.server} to be ready in tap mcp list`);
  log(`gateway ${target.host} ready; MCP server ${opts.server}: ${JSON.stringify(ready)}`);

  const endpoint = `/mcp/${encodeURIComponent(opts.session)}`;
  const server = http.createServer((req, res) => {
    const query = req.url.includes("?") ? req.url.slice(req.url.indexOf("?")) : "";
    const upstream = http.request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: endpoint + query,
        headers: { ...endToEnd(req.headers), authorization: `Bearer ${token}` },
        agent: false,
      },
      (answer) => {
        res.writeHead(answer.statusCode, answer.statusMessage, endToEnd(answer.headers));
        res.flushHeaders();
        answer.on("data", (chunk) => res.write(chunk));
        answer.on("end", () => res.end());
        answer.on("error", () => res.destroy());
      },
    );
    upstream.on("error", (e) => {
      if (res.headersSent) res.destroy();
      else {
        res.writeHead(502, { "content-type": "text/plain" });
        res.end(`proxy: the gateway did not answer: ${e.message}`);
      }
    });
    // The client went away (an SSE stream it closed): so does the request to the gateway.
    res.on("close", () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  });
  server.listen(0, "127.0.0.1", () => {
    process.stdout.write(`PORT ${server.address().port}\n`);
  });
}

main().catch((e) => {
  log(e?.message ?? String(e));
  process.exit(1);
});

#!/usr/bin/env node
// A tiny static server for the template: the page, its script, and the SDK's browser build
// under /sdk/ (index.html maps the package name there with an import map, so page.js imports
// "@tap-gateway/provider/browser" exactly as it would through a bundler). Loopback only: it
// serves files from this directory and nothing else.
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** The port when PORT is not set; PORT=0 picks a free one (the tests do). */
const DEFAULT_PORT = 8080;
const HOST = "127.0.0.1";

const HERE = dirname(fileURLToPath(import.meta.url));
const PAGES = { "/": "index.html", "/index.html": "index.html", "/page.js": "page.js" };
const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8" };

function sdkDist() {
  let pkg;
  try {
    pkg = createRequire(import.meta.url).resolve("@tap-gateway/provider/package.json");
  } catch {
    fail("@tap-gateway/provider is not installed here: run `npm install` in examples/browser-page");
  }
  const dist = join(dirname(pkg), "dist");
  if (!existsSync(join(dist, "browser.js"))) fail(`${dist}/browser.js is missing: build the SDK (cd sdk/typescript && npm ci && npm run build)`);
  return dist;
}

function fail(message) {
  console.error(`browser-page: ${message}`);
  process.exit(2);
}

const rawPort = process.env.PORT ?? String(DEFAULT_PORT);
const port = Number(rawPort);
if (!/^\d+$/.test(rawPort) || port > 65535) fail(`PORT must be a port number (0-65535), got '${rawPort}'`);
const DIST = sdkDist();

/** Maps a request path to a file, or undefined (404). Never leaves HERE or DIST. */
function fileFor(path) {
  if (PAGES[path]) return join(HERE, PAGES[path]);
  if (!path.startsWith("/sdk/")) return undefined;
  const file = normalize(join(DIST, path.slice("/sdk/".length)));
  return file.startsWith(DIST + sep) && file.endsWith(".js") ? file : undefined;
}

const server = createServer(async (req, res) => {
  let path;
  try { path = decodeURIComponent(new URL(req.url, "http://localhost").pathname); } catch { path = ""; }
  const file = req.method === "GET" || req.method === "HEAD" ? fileFor(path) : undefined;
  if (!file) { res.writeHead(404, { "content-type": "text/plain" }); return res.end("not found\n"); }
  try {
    const body = await readFile(file);
    res.writeHead(200, { "content-type": TYPES[file.slice(file.lastIndexOf("."))] ?? "application/octet-stream", "cache-control": "no-store" });
    res.end(req.method === "HEAD" ? undefined : body);
  } catch {
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("not found\n");
  }
});

server.on("error", (e) => fail(`cannot listen on ${HOST}:${port}: ${e.message}`));
server.listen(port, HOST, () => {
  // The tests read this line to learn the port.
  console.log(`browser-page: serving http://${HOST}:${server.address().port}/`);
});
for (const sig of ["SIGINT", "SIGTERM"]) process.once(sig, () => { server.close(() => process.exit(0)); server.closeAllConnections(); });

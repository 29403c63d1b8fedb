// The test app (tests/browser/app): built once per run with Vite's JS API in development mode,
// so React's development build is bundled (component names, props, state and the DevTools
// hook's data stay in the page), and served by a tiny static server on 127.0.0.1 port 0.
//
//   node tests/browser/app-build.mjs OUT_DIR   # what scripts/test-browser.sh runs once; the
//                                              # test files then find it in TAP_BROWSER_APP_DIR

import { createReadStream, existsSync, statSync } from "node:fs";
import { createServer } from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const APP_SOURCE = path.join(HERE, "app");

/**
 * Builds the app into `outDir` (made if missing). Vite's mode alone does not choose React's
 * build: `vite build --mode development` still defines process.env.NODE_ENV as "production"
 * (Vite's "Modes vs NODE_ENV"), so the definition is given here too.
 */
export async function buildApp(outDir) {
  const { build } = await import("vite");
  const react = (await import("@vitejs/plugin-react")).default;
  await build({
    root: APP_SOURCE,
    configFile: false,
    logLevel: "warn",
    mode: "development",
    define: { "process.env.NODE_ENV": JSON.stringify("development") },
    plugins: [react()],
    build: { outDir, emptyOutDir: true, minify: false, sourcemap: false },
  });
  return outDir;
}

const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml", ".png": "image/png", ".json": "application/json" };

/**
 * Serves `dir` on 127.0.0.1 port 0: a file under it or 404 (so `/missing.json` fails as the
 * tests want). Resolves with { url (origin, no slash), port, close() }.
 */
export function serveDir(dir) {
  const root = path.resolve(dir);
  const server = createServer((req, res) => {
    const pathname = decodeURIComponent(new URL(req.url, "http://x").pathname);
    const file = path.resolve(root, "." + (pathname.endsWith("/") ? pathname + "index.html" : pathname));
    if (!file.startsWith(root + path.sep) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    res.writeHead(200, { "content-type": TYPES[path.extname(file)] ?? "application/octet-stream", "cache-control": "no-store" });
    createReadStream(file).pipe(res);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      resolve({
        url: `http://127.0.0.1:${port}`,
        port,
        close: () => new Promise((r) => server.close(r), server.closeAllConnections()),
      });
    });
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = process.argv[2];
  if (!out) {
    console.error("usage: node tests/browser/app-build.mjs OUT_DIR");
    process.exit(2);
  }
  await buildApp(path.resolve(out));
  console.log(`built ${APP_SOURCE} into ${out}`);
}

import { defineConfig } from "vite";

// The gateway serves dist/index.html at `/` and dist/assets/* at `/assets/*`, with a CSP
// of `default-src 'self'`: so no inline scripts, and every asset in one flat folder.
//
// During development, `TAP_GATEWAY=127.0.0.1:PORT npm run dev` proxies /control and
// /api to a running gateway (note: the gateway accepts the control WebSocket only from
// its own origin, so the proxy rewrites Origin to the gateway's).
const gateway = process.env.TAP_GATEWAY ?? "127.0.0.1:9400";

export default defineConfig({
  base: "/",
  build: {
    outDir: "dist",
    assetsDir: "assets",
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    target: "es2022",
  },
  server: {
    proxy: {
      "/api": { target: `http://${gateway}`, changeOrigin: true, headers: { origin: `http://${gateway}` } },
      "/control": { target: `ws://${gateway}`, ws: true, changeOrigin: true, headers: { origin: `http://${gateway}` } },
    },
  },
});

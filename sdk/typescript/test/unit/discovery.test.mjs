// The SDK's discovery order (docs/sdk/typescript.md, "Discovery"), with a fake file system.
import { test } from "node:test";
import assert from "node:assert/strict";
import { discoverUrl, discoverToken, tapHome } from "../../dist/index.js";

const HOME = "/home/ada";
const files = (map) => (path) => map[path];

test("tapHome: TAP_HOME, else the platform data dir; empty means unset", () => {
  assert.equal(tapHome({ TAP_HOME: "/x" }, HOME, "linux"), "/x");
  assert.equal(tapHome({ TAP_HOME: "" }, HOME, "linux"), "/home/ada/.local/share/tap");
  assert.equal(tapHome({ XDG_DATA_HOME: "/data" }, HOME, "linux"), "/data/tap");
  assert.equal(tapHome({}, HOME, "darwin"), "/home/ada/Library/Application Support/tap");
});

test("url: TAP_GATEWAY_URL, then gateway.json's address, then ws://127.0.0.1:9400", () => {
  const fs = files({ "/t/gateway.json": JSON.stringify({ address: "ws://127.0.0.1:5555" }) });
  assert.deepEqual(discoverUrl({ TAP_GATEWAY_URL: "ws://127.0.0.1:1", TAP_HOME: "/t" }, fs, HOME, "linux"), { value: "ws://127.0.0.1:1", source: "TAP_GATEWAY_URL" });
  assert.deepEqual(discoverUrl({ TAP_HOME: "/t" }, fs, HOME, "linux"), { value: "ws://127.0.0.1:5555", source: "/t/gateway.json" });
  assert.deepEqual(discoverUrl({ TAP_HOME: "/none" }, fs, HOME, "linux"), { value: "ws://127.0.0.1:9400", source: "the default address" });
  const broken = files({ "/t/gateway.json": "{not json" });
  assert.equal(discoverUrl({ TAP_HOME: "/t" }, broken, HOME, "linux").value, "ws://127.0.0.1:9400");
});

test("token: TAP_PROVIDER_TOKEN, then TAP_PROVIDER_TOKEN_FILE, then the Copilot file, then TAP_HOME's", () => {
  const all = {
    "/named": "ptk-named\n",
    "/c/extensions/tap/.provider-token": "ptk-copilot",
    "/t/provider-token": " ptk-tap ",
  };
  const env = { TAP_PROVIDER_TOKEN: "ptk-env", TAP_PROVIDER_TOKEN_FILE: "/named", COPILOT_HOME: "/c", TAP_HOME: "/t" };
  const tok = (e, fs, src = "TAP_GATEWAY_URL") => discoverToken(e, src, files(fs), HOME, "linux");
  assert.deepEqual(tok(env, all), { value: "ptk-env", source: "TAP_PROVIDER_TOKEN" });
  assert.deepEqual(tok({ ...env, TAP_PROVIDER_TOKEN: "" }, all), { value: "ptk-named", source: "/named" });
  assert.deepEqual(tok({ COPILOT_HOME: "/c", TAP_HOME: "/t" }, all), { value: "ptk-copilot", source: "/c/extensions/tap/.provider-token" });
  assert.deepEqual(tok({ COPILOT_HOME: "/c", TAP_HOME: "/t" }, { "/t/provider-token": "ptk-tap" }), { value: "ptk-tap", source: "/t/provider-token" });
  // A named file that is missing falls through to the next place.
  assert.equal(tok({ TAP_PROVIDER_TOKEN_FILE: "/gone", COPILOT_HOME: "/c", TAP_HOME: "/t" }, all).value, "ptk-copilot");
  assert.equal(tok({ COPILOT_HOME: "/c", TAP_HOME: "/t" }, {}), null);
});

test("token: when the URL came from $TAP_HOME/gateway.json, that gateway's own token file wins over the Copilot file", () => {
  const all = { "/c/extensions/tap/.provider-token": "ptk-copilot", "/t/provider-token": "ptk-tap" };
  const found = discoverToken({ COPILOT_HOME: "/c", TAP_HOME: "/t" }, "/t/gateway.json", files(all), HOME, "linux");
  assert.deepEqual(found, { value: "ptk-tap", source: "/t/provider-token" });
});

// Runs docs/sdk/typescript.md's quick start verbatim, from the `npm pack` tarball installed in a
// clean temp dir, against the real gateway found the documented way (TAP_HOME's gateway.json).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { startGateway } from "../../../../tests/js-support/gateway.mjs";
import { start, waitForOutput } from "../../../../tests/js-support/process.mjs";
import { tap } from "../helpers/gateway.mjs";

const PKG = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const DOC = join(PKG, "..", "..", "docs", "sdk", "typescript.md");
/** npm install from the registry (or its cache) may take a while on a cold machine. */
const INSTALL_TIMEOUT_MS = 300_000;

/** The first ```js block after "## Quick start". */
export function quickStart(markdown) {
  const section = markdown.split(/^## Quick start$/m)[1];
  assert.ok(section, "docs/sdk/typescript.md has no '## Quick start' section");
  const m = section.match(/```js\n([\s\S]*?)```/);
  assert.ok(m, "no js code block in the quick start");
  return m[1];
}

let gw, dir, provider;
before(async () => {
  gw = await startGateway();
  dir = mkdtempSync(join(tmpdir(), "tap-sdk-ts-qs-"));
  let tarball = process.env.TAP_SDK_TARBALL;
  if (!tarball) {
    const name = execFileSync("npm", ["pack", "--silent", "--pack-destination", dir], { cwd: PKG, encoding: "utf8" }).trim().split("\n").pop();
    tarball = join(dir, name);
  }
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "qs", private: true, type: "module" }));
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", tarball], { cwd: dir, stdio: "inherit", timeout: INSTALL_TIMEOUT_MS });
});
after(async () => {
  await provider?.stop();
  await gw?.stop(); // and the session it opened
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test("the documented quick start binds and answers `tap call`", { timeout: INSTALL_TIMEOUT_MS }, async () => {
  const code = quickStart(readFileSync(DOC, "utf8"));
  assert.ok(code.trim().split("\n").length <= 10, "the quick start is ten lines at most");
  writeFileSync(join(dir, "greeter.mjs"), code);
  const sid = (await gw.openSession("demo")).id;
  // Only TAP_HOME and COPILOT_HOME point at the gateway: the SDK must find it through gateway.json.
  provider = start(process.execPath, ["greeter.mjs"], { cwd: dir, env: gw.env }, "the quick start");
  await waitForOutput(provider.child, provider.output, (out) => out.includes(`bound to ${sid}`), "the quick start to bind");
  const called = await tap(gw, ["call", "--session", sid, "greet", '{"name":"Ada"}']).done;
  assert.equal(called.stdout, '"Hello, Ada!"');
});

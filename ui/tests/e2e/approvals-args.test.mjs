// The approval prompt's view of a call's arguments (src/pages/approvals/args.ts): secrets
// masked by key and by shape, long values folded, everything else as it is. The module is
// transpiled with the TypeScript compiler the build uses and run here as it is, no copy.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../src");
/** A TypeScript module of src/ as a data: URL, its one import (the generated patterns) linked. */
async function load(file, imports = {}) {
  let { outputText } = ts.transpileModule(await readFile(path.join(src, file), "utf8"), {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  });
  for (const [specifier, url] of Object.entries(imports)) outputText = outputText.replace(`"${specifier}"`, JSON.stringify(url));
  return `data:text/javascript;base64,${Buffer.from(outputText).toString("base64")}`;
}
const masking = await load("generated/masking.ts");
const { showArgs, isSecretKey, looksSecret, FOLD_CHARS, FOLD_ITEMS } = await import(await load("pages/approvals/args.ts", { "../../generated/masking": masking }));

test("values under secret-sounding keys are masked, with their length", () => {
  const shown = showArgs({
    path: "/tmp/x",
    api_key: "abc123",
    Authorization: "whatever-it-is",
    "X-Auth-Token": "t0k3n",
    nested: { password: "hunter2", clientSecret: { a: 1 } },
    max_tokens: 512,
    token_optional: false,
  });
  const v = JSON.parse(shown.text);
  assert.equal(v.path, "/tmp/x");
  assert.equal(v.api_key, "••••• masked (6 chars)");
  assert.equal(v.Authorization, "••••• masked (14 chars)");
  assert.equal(v["X-Auth-Token"], "••••• masked (5 chars)");
  assert.equal(v.nested.password, "••••• masked (7 chars)");
  assert.match(v.nested.clientSecret, /^••••• masked/);
  // Counts and flags are not secrets, whatever their key.
  assert.equal(v.max_tokens, 512);
  assert.equal(v.token_optional, false);
  assert.equal(shown.masked, 5);
  for (const secret of ["abc123", "whatever-it-is", "t0k3n", "hunter2"]) assert.ok(!shown.text.includes(secret), secret);
});

test("values shaped like secrets are masked under any key, in lists too", () => {
  const values = [
    "Bearer abcdefghijklmnop.qrstuvwx",
    "sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAA",
    "ghp_0123456789abcdefghijABCDEFGHIJ",
    "xoxb-1234567890-abcdef",
    "AKIAIOSFODNN7EXAMPLE",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "curl -H 'Authorization: Bearer abcdefghijklmnop' https://x",
  ];
  for (const s of values) assert.ok(looksSecret(s), s);
  const shown = showArgs({ headers: values, note: "the bearer of this letter" });
  const v = JSON.parse(shown.text);
  assert.ok(v.headers.every((h) => h.startsWith("••••• masked")), shown.text);
  assert.equal(v.note, "the bearer of this letter");
  assert.equal(shown.masked, values.length);
  // Ordinary words and paths are not secrets.
  for (const s of ["/home/me/notes.md", "git push origin main", "skip-this", "Basic idea"]) assert.ok(!looksSecret(s), s);
  for (const k of ["path", "message", "content", "branch"]) assert.ok(!isSecretKey(k), k);
});

test("long strings and lists are folded, saying how much; fold null shows them whole", () => {
  const body = "x".repeat(FOLD_CHARS + 40);
  const items = Array.from({ length: FOLD_ITEMS + 5 }, (_, i) => i);
  const folded = showArgs({ body, items, short: "ok" });
  const v = JSON.parse(folded.text);
  assert.equal(v.body, `${"x".repeat(FOLD_CHARS)}… (40 more chars)`);
  assert.equal(v.items.length, FOLD_ITEMS + 1);
  assert.equal(v.items.at(-1), "… (5 more items)");
  assert.equal(v.short, "ok");
  assert.equal(folded.folded, 2);

  const whole = showArgs({ body, items, password: "p" }, null);
  const w = JSON.parse(whole.text);
  assert.equal(w.body, body);
  assert.deepEqual(w.items, items);
  assert.equal(w.password, "••••• masked (1 chars)");
  assert.equal(whole.folded, 0);
});

test("pretty-printed, and non-object arguments are shown as they are", () => {
  assert.equal(showArgs({ a: 1 }).text, '{\n  "a": 1\n}');
  assert.equal(showArgs(null).text, "null");
  assert.equal(showArgs("Bearer abcdefghijklmnop").text, '"••••• masked (23 chars)"');
});

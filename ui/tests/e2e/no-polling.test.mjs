// The panel asks the gateway on events, never on a timer (issue 42, "no setInterval refresh"):
// a check of the source and of the built bundle, no browser needed. The one repeating timer
// allowed is the clock that redraws relative times (`useNow` in src/store.ts), and it must ask
// the gateway nothing. One-shot `setTimeout`s are allowed where they debounce or coalesce
// (typing, bursts of events, the reconnect backoff) but may not re-arm themselves into a loop
// around a gateway call; the browser tests of each page (watchIdle) prove the rest: an idle
// page sends nothing.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const SRC = path.resolve(here, "../../src");
const DIST = path.resolve(here, "../../dist/assets");

function files(dir, ext) {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return files(p, ext);
    return ext.some((e) => name.endsWith(e)) ? [p] : [];
  });
}

const sources = files(SRC, [".ts", ".tsx"]).map((p) => ({ p: path.relative(SRC, p), text: readFileSync(p, "utf8") }));

/** The body of the function holding `at` in `text`, roughly: from the previous `function`/arrow to its closing brace. */
function enclosing(text, at) {
  const start = Math.max(text.lastIndexOf("\nexport function ", at), text.lastIndexOf("\nfunction ", at), text.lastIndexOf("\n  private ", at));
  let depth = 0;
  let i = text.indexOf("{", start);
  for (; i < text.length; i++) {
    if (text[i] === "{") depth++;
    else if (text[i] === "}" && --depth === 0) break;
  }
  return text.slice(start, i + 1);
}

test("setInterval appears once in the source: useNow's clock, which asks the gateway nothing", () => {
  const uses = sources.flatMap(({ p, text }) => [...text.matchAll(/\bsetInterval\s*\(/g)].map((m) => ({ p, at: m.index, text })));
  assert.deepEqual(
    uses.map((u) => u.p),
    ["store.ts"],
    `setInterval outside store.ts's clock: ${uses.map((u) => u.p).join(", ")}`,
  );
  const clock = enclosing(uses[0].text, uses[0].at);
  assert.match(clock, /export function useNow\(/, "the interval is useNow's");
  for (const asks of [/store\.call\(/, /\.rpc\(/, /useMethod\(/, /refresh\(/, /fetch\(/, /\.request\(/]) {
    assert.doesNotMatch(clock, asks, `the clock does ${asks}`);
  }
});

test("no setTimeout re-arms itself around a gateway call (a polling loop by another name)", () => {
  for (const { p, text } of sources) {
    for (const m of text.matchAll(/\bsetTimeout\s*\(/g)) {
      const body = enclosing(text, m.index);
      const asks = /store\.call\(|\.rpc\(|fetch\(/.test(body);
      const rearms = (body.match(/\bsetTimeout\s*\(/g) ?? []).length > 1 || /setTimeout\([^)]*\bpoll/i.test(body);
      assert.ok(!(asks && rearms && !/reconnect|backoff|retry\(/i.test(body)), `${p}: a setTimeout that asks the gateway and sets itself again`);
    }
  }
  // No hook or helper named for polling, and no refetch-on-interval option.
  for (const { p, text } of sources) {
    assert.doesNotMatch(text, /\b(usePoll|pollMs|refetchInterval|POLL_MS)\b/, `${p} polls`);
  }
});

test("the built bundle holds no more setInterval than the source", () => {
  // Preact and the panel's code are all there is in the bundle: a setInterval in it that the
  // source does not have would be a dependency's timer, worth a look.
  const bundle = files(DIST, [".js"]).map((p) => readFileSync(p, "utf8")).join("\n");
  const built = (bundle.match(/\bsetInterval\b/g) ?? []).length;
  assert.equal(built, 1, `setInterval ${built} times in ui/dist/assets (run npm run build first)`);
});

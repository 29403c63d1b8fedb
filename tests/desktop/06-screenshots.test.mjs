// The screenshots the README and the docs show are honest pictures of the app: none has a
// large flat block that does not belong to the page (a notification or another window drawn
// over it when it was captured; docs/screenshots/desktop-panel.png once had a black box over
// the Uptime card). Runs last, after the suites that rewrite docs/screenshots/*.png (the
// panel's browser tests run before these in scripts/test.sh).

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { PNG } from "pngjs";
import { MAX_FOREIGN_BLOCK, largestForeignBlock } from "../js-support/uniform-blocks.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const DOCS = ["README.md", "docs/browser.md", "docs/desktop.md", "docs/panel.md"];

/** Every docs/screenshots/*.png the README and the docs show. */
async function shown() {
  const files = new Set();
  for (const doc of DOCS) {
    const text = await readFile(path.join(root, doc), "utf8");
    for (const m of text.matchAll(/\]\(((?:docs\/)?screenshots\/[^)\s]+\.png)\)/g)) {
      files.add(path.resolve(path.dirname(path.join(root, doc)), m[1]));
    }
  }
  return [...files].sort();
}

test("no README or docs screenshot has a large flat block drawn over the app", async () => {
  const files = await shown();
  assert.ok(files.length >= 10, `screenshots found: ${files.length}`);
  const bad = [];
  for (const file of files) {
    const block = largestForeignBlock(PNG.sync.read(await readFile(file)));
    if (block && block.share > MAX_FOREIGN_BLOCK) {
      bad.push(`${path.relative(root, file)}: ${block.width}x${block.height} of ${block.colour} at ${block.x},${block.y} (${(block.share * 100).toFixed(2)}%)`);
    }
  }
  assert.deepEqual(bad, [], `flat blocks over more than ${MAX_FOREIGN_BLOCK * 100}% of a picture`);
});

test("the check catches the box a notification once left on desktop-panel.png", async () => {
  // A copy of that picture's fault: a 152x103 black box over an otherwise real page.
  const png = PNG.sync.read(await readFile(path.join(root, "docs/screenshots/desktop-panel.png")));
  for (let y = 52; y < 155; y++) {
    for (let x = png.width - 152; x < png.width; x++) {
      const i = (y * png.width + x) * 4;
      png.data[i] = png.data[i + 1] = png.data[i + 2] = 0;
    }
  }
  const block = largestForeignBlock(png);
  assert.ok(block.share > MAX_FOREIGN_BLOCK, JSON.stringify(block));
  assert.equal(block.colour, "#000000");
});

#!/usr/bin/env node
// Builds the unpacked extension: `node build.mjs [OUT_DIR]` (default extensions/browser/dist)
// copies manifest.json, src/, the icons and the TypeScript SDK's browser build into OUT_DIR;
// `node build.mjs [OUT_DIR] --zip FILE` also writes FILE, a zip of OUT_DIR's contents that the
// Chrome Web Store and "Load unpacked" (after unzipping) accept.
//
// No bundler and no npm dependencies: the worker is an ES module service worker and imports
// the SDK's own modules from vendor/tap-sdk/. The zip is written with Node's zlib (deflate)
// and a CRC-32 computed here, so packaging needs no `zip` binary.
//
// The SDK's dist/ is built by `npm run --prefix sdk/typescript build`; when a source file is
// newer than dist/browser.js (or dist is missing) this script runs that build first, so a
// stale SDK never lands in the extension.

import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { deflateRawSync } from "node:zlib";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../..");
const sdk = path.join(repo, "sdk/typescript");

function parseArgs(argv) {
  let out = path.join(here, "dist");
  let zip;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--zip") {
      zip = argv[++i];
      if (!zip) throw new Error("--zip needs a file name");
    } else if (argv[i].startsWith("-")) {
      throw new Error(`unknown option ${argv[i]} (usage: node build.mjs [OUT_DIR] [--zip FILE])`);
    } else {
      out = argv[i];
    }
  }
  return { out: path.resolve(out), zip: zip && path.resolve(zip) };
}

/** Newest modification time of the files under `dir` (recursively). */
function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

function ensureSdkBuilt() {
  const entry = path.join(sdk, "dist/browser.js");
  if (existsSync(entry) && statSync(entry).mtimeMs >= newest(path.join(sdk, "src"))) return;
  console.error("build.mjs: the SDK's dist is missing or older than its sources: npm run --prefix sdk/typescript build");
  execFileSync("npm", ["run", "--silent", "--prefix", sdk, "build"], { stdio: "inherit" });
}

/** The SDK's browser build and every module it imports (relative imports only: it has no others). */
function sdkModules() {
  const seen = new Set();
  const visit = (name) => {
    if (seen.has(name)) return;
    seen.add(name);
    const text = readFileSync(path.join(sdk, "dist", name), "utf8");
    for (const m of text.matchAll(/^\s*(?:import|export)\b[^"']*?from\s+["']\.\/([^"']+)["']/gm)) visit(m[1]);
    for (const m of text.matchAll(/^\s*import\s+["']\.\/([^"']+)["']/gm)) visit(m[1]);
    if (/from\s+["'](?!\.\/)[^"']+["']/.test(text)) throw new Error(`sdk dist/${name} imports a package: the browser build must not`);
  };
  visit("browser.js");
  return [...seen];
}

function build(out) {
  ensureSdkBuilt();
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  cpSync(path.join(here, "manifest.json"), path.join(out, "manifest.json"));
  cpSync(path.join(here, "src"), path.join(out, "src"), { recursive: true });
  mkdirSync(path.join(out, "icons"));
  cpSync(path.join(repo, "icons/32x32.png"), path.join(out, "icons/32.png"));
  cpSync(path.join(repo, "icons/128x128.png"), path.join(out, "icons/128.png"));
  const vendor = path.join(out, "vendor/tap-sdk");
  mkdirSync(vendor, { recursive: true });
  for (const name of sdkModules()) cpSync(path.join(sdk, "dist", name), path.join(vendor, name));
  cpSync(path.join(sdk, "package.json"), path.join(vendor, "package.json"));
}

// ---- zip (stored names relative to the root, deflated) ------------------------------------

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

function crc32(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function files(dir, prefix = "") {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name), `${prefix}${e.name}/`) : [[`${prefix}${e.name}`, path.join(dir, e.name)]]));
}

function writeZip(root, file) {
  const locals = [];
  const central = [];
  let offset = 0;
  // A fixed DOS date (1980-01-01): the same tree gives the same zip.
  const time = 0, date = (0 << 9) | (1 << 5) | 1;
  for (const [name, p] of files(root)) {
    const data = readFileSync(p);
    const packed = deflateRawSync(data, { level: 9 });
    const nameBuf = Buffer.from(name, "utf8");
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(8, 8); // deflate
    local.writeUInt16LE(time, 10);
    local.writeUInt16LE(date, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBuf.length, 26);
    local.writeUInt16LE(0, 28);
    locals.push(local, nameBuf, packed);
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE(0x0314, 4); // made by: Unix, 2.0
    c.writeUInt16LE(20, 6);
    c.writeUInt16LE(0x0800, 8);
    c.writeUInt16LE(8, 10);
    c.writeUInt16LE(time, 12);
    c.writeUInt16LE(date, 14);
    c.writeUInt32LE(crc, 16);
    c.writeUInt32LE(packed.length, 20);
    c.writeUInt32LE(data.length, 24);
    c.writeUInt16LE(nameBuf.length, 28);
    c.writeUInt32LE((0o100644 << 16) >>> 0, 38); // -rw-r--r--
    c.writeUInt32LE(offset, 42);
    central.push(c, nameBuf);
    offset += local.length + nameBuf.length + packed.length;
  }
  const centralBuf = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  const count = central.length / 2;
  end.writeUInt16LE(count, 8);
  end.writeUInt16LE(count, 10);
  end.writeUInt32LE(centralBuf.length, 12);
  end.writeUInt32LE(offset, 16);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, Buffer.concat([...locals, centralBuf, end]));
}

const { out, zip } = parseArgs(process.argv.slice(2));
build(out);
if (zip) writeZip(out, zip);
console.log(zip ? `${out}\n${zip}` : out);

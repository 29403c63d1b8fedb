#!/usr/bin/env bash
# The browser extension (extensions/browser, issue 41) end to end: real Chromium (Debian's,
# headless) with the unpacked extension, a real React app built by Vite (development mode),
# and the real `tap gateway` with its panel. tests/browser/*.test.mjs, one Chromium per file,
# each loading the extension's zip (built once, as scripts/package-linux.sh ships it) unzipped.
#
#   scripts/test-browser.sh [--install-only] [FILE…]
#
# --install-only: only `npm ci` tests/browser (scripts/test.sh runs it while Rust builds).
# FILE…: only these test files (default: every tests/browser/*.test.mjs).
#
# TAP_BIN: the `tap` binary to test against (default: `tap` on PATH, else the release build
# scripts/run.sh makes). This script builds no Rust. TAP_SCREENSHOTS=1 also rewrites
# docs/screenshots/browser-*.png. Node's runner prints `# pass N` / `# fail N`.
set -euo pipefail
caller_dir=$PWD # a relative TAP_BIN is relative to where the caller stands
cd "$(dirname "$0")/.."
source scripts/lib/setup.sh

install() {
  setup_node
  step "tests/browser: npm ci (playwright-core, Vite, React, the MCP SDK)"
  npm ci --prefix tests/browser --no-audit --no-fund --silent
}

if [ "${1:-}" = --install-only ]; then
  install
  exit 0
fi

require_tap_bin "$caller_dir" test-browser release
setup_chromium
# scripts/test.sh installed it already (--install-only, overlapped with the Rust build).
if [ ! -d tests/browser/node_modules/vite ] || [ tests/browser/package-lock.json -nt tests/browser/node_modules/.package-lock.json ]; then
  install
fi
# The gateway serves the panel, where the user reads the pairing code.
if [ ! -f ui/dist/index.html ]; then build_ui; fi
# The extension carries the TypeScript SDK's browser build (extensions/browser/build.mjs
# copies sdk/typescript/dist, and rebuilds it when older than its sources: tsc needs the
# SDK's dev dependencies).
if [ ! -d sdk/typescript/node_modules/typescript ]; then
  step "sdk/typescript: npm ci (the extension carries its browser build)"
  npm ci --prefix sdk/typescript --no-audit --no-fund --silent
fi

step "tests/browser: build the test app once (Vite, development mode) and the extension's zip"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
node tests/browser/app-build.mjs "$work/app" >&2
export TAP_BROWSER_APP_DIR="$work/app"
# The tests load what users get: the zip scripts/package-linux.sh ships, unzipped.
node extensions/browser/build.mjs "$work/extension-build" --zip "$work/extension.zip" >&2
command -v python3 >/dev/null 2>&1 || apt_install python3 # its zipfile module unzips
python3 -m zipfile -e "$work/extension.zip" "$work/extension"
export TAP_BROWSER_EXTENSION_DIR="$work/extension"

step "tests/browser: the extension in Chromium (TAP_BIN=$TAP_BIN)"
files=("$@")
if [ ${#files[@]} -eq 0 ]; then files=(tests/browser/*.test.mjs); fi
node --test --test-concurrency=1 "${files[@]}"

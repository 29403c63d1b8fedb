#!/usr/bin/env bash
# The TypeScript provider SDK (sdk/typescript): installs what it needs (Node 20+, Debian's
# Chromium, the package's dev dependencies), builds it with tsc, packs it with `npm pack`, then
# runs its unit tests, its integration suite and its browser pairing test against the real
# `tap gateway`, and the docs' quick start installed from the tarball in a clean temp dir.
#
# TAP_BIN: the `tap` binary to test against (default: `tap` on PATH, else the release build
# scripts/run.sh makes). This script builds no Rust.
set -euo pipefail
# A relative TAP_BIN means relative to where the caller stands: resolve it before the cd.
if [ -n "${TAP_BIN:-}" ] && [ -e "$TAP_BIN" ]; then TAP_BIN="$(cd "$(dirname "$TAP_BIN")" && pwd)/$(basename "$TAP_BIN")"; fi
cd "$(dirname "$0")/.."
source scripts/lib/setup.sh

if [ -z "${TAP_BIN:-}" ]; then
  TAP_BIN=$(command -v tap || true)
  [ -n "$TAP_BIN" ] || TAP_BIN="${CARGO_TARGET_DIR:-$HOME/.cache/tap-gateway/target}/release/tap"
fi
if [ ! -x "$TAP_BIN" ]; then
  echo "test-sdk-typescript: no tap binary at '$TAP_BIN'; set TAP_BIN to one (e.g. after cargo build: target/debug/tap)" >&2
  exit 1
fi
export TAP_BIN

setup_node
setup_chromium

cd sdk/typescript
step "sdk/typescript: npm ci && tsc"
npm ci --no-audit --no-fund --silent
npm run --silent build

step "sdk/typescript: npm pack"
pack_dir=$(mktemp -d)
trap 'rm -rf "$pack_dir"' EXIT
tarball="$pack_dir/$(npm pack --silent --pack-destination "$pack_dir" | tail -n 1)"
echo "packed $tarball" >&2
export TAP_SDK_TARBALL="$tarball"

step "sdk/typescript: unit, integration, browser and quick-start tests (TAP_BIN=$TAP_BIN)"
node --test test/unit/ test/integration/ test/browser/ test/package/

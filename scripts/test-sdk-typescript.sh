#!/usr/bin/env bash
# The TypeScript provider SDK (sdk/typescript): installs what it needs (Node 20+, Debian's
# Chromium, the package's dev dependencies), builds it with tsc, packs it with `npm pack`, then
# runs its unit tests, its integration suite and its browser pairing test against the real
# `tap gateway`, and the docs' quick start installed from the tarball in a clean temp dir.
#
# TAP_BIN: the `tap` binary to test against (default: `tap` on PATH, else the release build
# scripts/run.sh makes). This script builds no Rust.
set -euo pipefail
caller_dir=$PWD # a relative TAP_BIN is relative to where the caller stands
cd "$(dirname "$0")/.."
source scripts/lib/setup.sh

require_tap_bin "$caller_dir" test-sdk-typescript release

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

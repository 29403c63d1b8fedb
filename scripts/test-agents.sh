#!/usr/bin/env bash
# Real agent CLIs connected by `tap connect`, offline: installs the pinned Gemini CLI and
# opencode from npm into a cache reused across runs, builds `tap`, and runs tests/agents/
# (each CLI against a fake model on loopback, a real `tap gateway`, a test provider and an
# MCP server; docs/clients.md, "Tested with").
#
#   scripts/test-agents.sh                 install when needed, then test
#   scripts/test-agents.sh --install-only  only the install (scripts/test.sh runs it in the
#                                          background while the Rust steps run)
#
# Why these two: the cheapest of the big four to install (download, in the npm registry's
# tarballs): Gemini CLI ~21 MB of JavaScript, opencode ~60 MB per native binary (its wrapper
# installs two x64 builds, ~120 MB), where Codex's linux-x64 package is ~172 MB and Claude
# Code's ~186 MB. Both run offline against a base URL on loopback and have a
# non-interactive mode. A cold install (empty npm cache) took 8 s here and leaves ~450 MB in
# the cache; with the cache in place this script skips it.
set -euo pipefail
cd "$(dirname "$0")/.."
GEMINI_VERSION=0.61.0    # verified; tests/agents/support.mjs relies on its flags and policy files
OPENCODE_VERSION=1.18.33 # verified; tests/agents/support.mjs relies on OPENCODE_CONFIG_CONTENT
cache="${TAP_AGENTS_CACHE:-$HOME/.cache/tap-gateway/agents}"
mkdir -p "$cache"
[ -f "$cache/package.json" ] || echo '{"private":true}' >"$cache/package.json"
installed() { node -p "try{require('$cache/node_modules/$1/package.json').version}catch{''}"; }
if [ "$(installed @google/gemini-cli)" != "$GEMINI_VERSION" ] || [ "$(installed opencode-ai)" != "$OPENCODE_VERSION" ]; then
  npm install --no-audit --no-fund --silent --prefix "$cache" \
    "@google/gemini-cli@$GEMINI_VERSION" "opencode-ai@$OPENCODE_VERSION"
fi
npm install --no-audit --no-fund --silent --prefix tests/agents
[ "${1:-}" = "--install-only" ] && exit 0

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
cargo build -p tap-cli --locked
# A private copy: the target directory may be shared with builds of other checkouts, and
# `tap connect` writes this path into each CLI's configuration.
bin_dir=$(mktemp -d)
trap 'rm -rf "$bin_dir"' EXIT
cp "$CARGO_TARGET_DIR/debug/tap" "$bin_dir/tap"
export TAP_BIN="$bin_dir/tap" TAP_AGENTS_CACHE="$cache"
# support.mjs gives each CLI a clean environment (no inherited API keys, base URLs or
# settings), so nothing here can reach a real model.
node --test --test-concurrency=2 tests/agents/

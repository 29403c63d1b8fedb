#!/usr/bin/env bash
# The Copilot CLI extension's tests with the real `@github/copilot` CLI, offline: installs the
# pinned CLI into a cache reused across runs (its ~235 MB unpack goes to XDG_CACHE_HOME there),
# builds `tap`, and runs tests/copilot/ against a fake model on loopback. One test looks at the
# session in the panel with Debian's Chromium (installed when missing, as for the panel's tests).
#
#   scripts/test-copilot.sh                 install when needed, then test
#   scripts/test-copilot.sh --install-only  only the install (scripts/test.sh runs it in the
#                                           background while the Rust steps run)
set -euo pipefail
cd "$(dirname "$0")/.."
COPILOT_VERSION=1.0.102 # verified; newer versions may change the extension API
cache="${TAP_COPILOT_CACHE:-$HOME/.cache/tap-gateway/copilot}"
mkdir -p "$cache"
[ -f "$cache/package.json" ] || echo '{"private":true}' >"$cache/package.json"
if [ "$(node -p "try{require('$cache/node_modules/@github/copilot/package.json').version}catch{''}")" != "$COPILOT_VERSION" ]; then
  npm install --no-audit --no-fund --silent --prefix "$cache" "@github/copilot@$COPILOT_VERSION"
fi
npm install --no-audit --no-fund --silent --prefix tests/copilot
[ "${1:-}" = "--install-only" ] && exit 0
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
source scripts/lib/setup.sh
setup_chromium
cargo build -p tap-cli --locked
# A private copy: the target directory may be shared with builds of other checkouts.
bin_dir=$(mktemp -d)
trap 'rm -rf "$bin_dir"' EXIT
cp "$CARGO_TARGET_DIR/debug/tap" "$bin_dir/tap"
export TAP_BIN="$bin_dir/tap" COPILOT_BIN="$cache/node_modules/.bin/copilot" COPILOT_XDG_CACHE_HOME="$cache/xdg"
# Nothing inherited may reach GitHub or change the CLI's behaviour (support.mjs also builds a
# clean environment for each run).
for v in $(compgen -e | grep -E '^(COPILOT_|GH_|GITHUB_)' | grep -vE '^COPILOT_(BIN|XDG_CACHE_HOME)$'); do unset "$v"; done
node --test --test-concurrency=1 tests/copilot/

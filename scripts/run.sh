#!/usr/bin/env bash
# Runs Tap Gateway on a fresh Debian/Ubuntu machine: installs what is missing, builds,
# and starts the headless gateway in the foreground (Ctrl-C stops it). Extra arguments
# go to `tap gateway`, e.g. `./scripts/run.sh --listen 127.0.0.1:9401`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/setup.sh

setup_rust
setup_node
build_ui
step "cargo build --release -p tap-cli"
cargo build --release --locked -p tap-cli
step "tap gateway $*"
echo "Open the panel: run \`$CARGO_TARGET_DIR/release/tap ui\` in another terminal for a login link." >&2
exec "$CARGO_TARGET_DIR/release/tap" gateway "$@"

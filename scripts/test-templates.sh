#!/usr/bin/env bash
# The provider templates (examples/*): builds the TypeScript SDK they depend on
# (file:../../sdk/typescript), installs each template's dependencies from its lockfile, and runs
# its tests against the real `tap gateway` (the browser template also in headless Chromium).
# Each template's node:test output ends with `# pass N` / `# fail N`; a closing line
# `templates: N passed, N failed` sums them.
#
# TAP_BIN: the `tap` binary to test against (default: `tap` on PATH, else the release build
# scripts/run.sh makes). This script builds no Rust.
set -euo pipefail
caller_dir=$PWD # a relative TAP_BIN is relative to where the caller stands
cd "$(dirname "$0")/.."
source scripts/lib/setup.sh

require_tap_bin "$caller_dir" test-templates release

setup_node
setup_chromium

step "sdk/typescript: npm ci && tsc (the templates link to it)"
npm ci --prefix sdk/typescript --no-audit --no-fund --silent
npm run --prefix sdk/typescript --silent build

passed=0
failed=0
status=0
# A template's test helpers travel with it (they cannot import tests/js-support/ once the
# folder is copied out), so each template has its own copy: the same file everywhere.
for helper in examples/*/test/helpers/gateway.mjs; do
  if ! cmp -s "$helper" examples/ci-status/test/helpers/gateway.mjs; then
    echo "$helper differs from examples/ci-status/test/helpers/gateway.mjs: keep the templates' copies the same" >&2
    failed=$((failed + 1))
  fi
done
for dir in examples/*/; do
  name=$(basename "$dir")
  [ -f "$dir/package.json" ] || continue
  step "examples/$name: npm ci && npm test (TAP_BIN=$TAP_BIN)"
  npm ci --prefix "$dir" --no-audit --no-fund --silent
  log=$(mktemp)
  # The pass/fail lines are read from the output, so a crash before them still fails the run.
  if (cd "$dir" && node --test test/*.test.mjs) 2>&1 | tee "$log"; then :; else status=1; fi
  p=$(awk '/^# pass /{n=$3} END{print n+0}' "$log")
  f=$(awk '/^# fail /{n=$3} END{print n+0}' "$log")
  if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then f=1; status=1; echo "examples/$name: no test results" >&2; fi
  passed=$((passed + p))
  failed=$((failed + f))
  rm -f "$log"
done

echo "templates: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && exit "$status" || exit 1

#!/usr/bin/env bash
# The Python SDK (sdk/python): unit tests and the integration suite against a real
# `tap gateway`, then packaging: build the wheel, install it into a clean temporary venv and
# run the docs' quick start from there against the real gateway.
#
#   TAP_BIN        the tap binary (default: `tap` on PATH, else $CARGO_TARGET_DIR/debug/tap)
#   TAP_TEST_VENV  the venv whose Python runs the tests (default ~/.cache/tap-gateway/venv;
#                  created when missing); pytest and websockets are installed into it
#
# Ends with one line "sdk-python: N passed, N failed" and exits non-zero on any failure.
set -euo pipefail
caller_dir=$PWD # a relative TAP_BIN is relative to where the caller stands
cd "$(dirname "$0")/.."
root=$PWD
source scripts/lib/setup.sh
sdk=$root/sdk/python

TAP_TEST_VENV="${TAP_TEST_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/tap-gateway/venv}"
require_tap_bin "$caller_dir" test-sdk-python debug
if [ ! -x "$TAP_TEST_VENV/bin/python" ]; then
  python3 -m venv "$TAP_TEST_VENV"
fi
py="$TAP_TEST_VENV/bin/python"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0 status=0

# Adds one pytest run's counts (from its summary line) to the totals.
count() {
  local line p f e
  line=$(grep -E '^(=+ )?[0-9]+ (passed|failed|error)' "$1" | tail -1 || true)
  p=$(grep -oE '[0-9]+ passed' <<<"$line" | grep -oE '[0-9]+' || echo 0)
  f=$(grep -oE '[0-9]+ failed' <<<"$line" | grep -oE '[0-9]+' || echo 0)
  e=$(grep -oE '[0-9]+ errors?' <<<"$line" | grep -oE '[0-9]+' || echo 0)
  passed=$((passed + p)); failed=$((failed + f + e))
}

step "test dependencies (pytest, websockets) in $TAP_TEST_VENV"
"$py" -m pip install --quiet --disable-pip-version-check pytest 'websockets>=13'

step "unit and integration tests against $TAP_BIN"
(cd "$sdk" && "$py" -m pytest -q -p no:cacheprovider tests) 2>&1 | tee "$work/tests.log" || status=1
count "$work/tests.log"

step "packaging: build the wheel"
"$py" -m pip wheel --quiet --disable-pip-version-check --no-deps -w "$work/dist" "$sdk"
wheel=$(ls "$work"/dist/tap_provider-*.whl)
echo "$wheel"
case "$(basename "$wheel")" in
  tap_provider-2.*-py3-none-any.whl) ;;  # the version follows the protocol version (v2)
  *) echo "unexpected wheel name: $wheel" >&2; status=1 ;;
esac

step "packaging: install the wheel into a clean venv and run the quick start from it"
"$py" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$wheel"
(cd "$work" && TAP_SDK_INSTALLED=1 TAP_QUICKSTART_PYTHON="$work/venv/bin/python" \
  "$py" -m pytest -q -p no:cacheprovider --rootdir "$sdk" "$sdk/tests/test_quickstart.py") 2>&1 \
  | tee "$work/package.log" || status=1
count "$work/package.log"

if [ "$passed" -eq 0 ]; then status=1; fi
echo
echo "sdk-python: $passed passed, $failed failed"
exit "$status"

#!/usr/bin/env bash
# Coverage-guided fuzzing of the gateway's parsers of peer input (fuzz/, docs/reliability.md).
#
#   scripts/fuzz.sh --list             the targets
#   scripts/fuzz.sh TARGET SECONDS     fuzz one target, growing fuzz/corpus/TARGET
#                                      (SECONDS 0: no time bound, e.g. with -runs=10000000)
#   scripts/fuzz.sh all SECONDS        each target for SECONDS on a scratch copy of its
#                                      corpus (the committed corpus stays as it is)
#   scripts/fuzz.sh smoke SECONDS      the same on an unoptimised build (what CI runs: a
#                                      cold build takes ~3 min instead of ~40)
#
# Needs the nightly toolchain and cargo-fuzz (installed when missing). Exits non-zero when
# a target crashes, times out or runs out of memory; the reproducer is in
# fuzz/artifacts/TARGET/. Builds go to $FUZZ_TARGET_DIR (default: next to the test suite's
# target directory, so CI reuses it across clones). Extra arguments after SECONDS go to
# libFuzzer (e.g. -jobs=2). Long campaigns: run under `chrt --idle 0 nice -n 19`.
#
# Only this repository's crates and FUZZ_INSTRUMENT_DEPS (default: the parsers peer input
# reaches, "serde_json jsonschema regex_syntax") carry coverage instrumentation:
# scripts/fuzz-rustc.sh says why. FUZZ_INSTRUMENT_DEPS=all instruments the whole tree, as
# plain cargo-fuzz does.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

export TAP_FUZZ_ROOT=$ROOT
export FUZZ_INSTRUMENT_DEPS="${FUZZ_INSTRUMENT_DEPS-serde_json jsonschema regex_syntax}"
if [ "$FUZZ_INSTRUMENT_DEPS" != all ]; then
  if [ "${RUSTC_WRAPPER:-}" != "$ROOT/scripts/fuzz-rustc.sh" ]; then
    export TAP_FUZZ_NEXT_WRAPPER="${RUSTC_WRAPPER:-}" # sccache, say: still runs
  fi
  export RUSTC_WRAPPER="$ROOT/scripts/fuzz-rustc.sh"
fi
# Cargo does not rebuild when RUSTC_WRAPPER changes, but does when RUSTFLAGS do (cargo-fuzz
# appends these to its own): a build made with another instrumentation is never reused.
deps=${FUZZ_INSTRUMENT_DEPS// /,}
export RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }--cfg=tap_fuzz_instrument=\"${deps:-none}\""

FUZZ_TARGET_DIR="${FUZZ_TARGET_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tap-gateway/fuzz-target}"
# Release (cargo-fuzz's default) for campaigns; `smoke` sets --dev: no optimisation (but
# libFuzzer's and the regex compiler's, fuzz/Cargo.toml) and no debug info, so a cold build
# is minutes, at several times fewer executions per second.
PROFILE=()

setup_fuzz() {
  if ! rustup toolchain list | grep -q '^nightly'; then
    rustup toolchain install nightly --profile minimal
  fi
  if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install --locked cargo-fuzz
  fi
}

targets() { (cd fuzz && cargo fuzz list); }

# Safe Rust only (the crate forbids `unsafe`): no sanitizer, which halves the build and
# doubles the speed. What is hunted is panics, overflows (debug assertions stay on),
# hangs and unbounded memory.
build() {
  (cd fuzz && cargo +nightly fuzz build "${PROFILE[@]}" --sanitizer none --target-dir "$FUZZ_TARGET_DIR" "$@")
}

# fuzz TARGET SECONDS CORPUS_DIR [libFuzzer args...]
fuzz() {
  local target=$1 seconds=$2 corpus=$3
  shift 3
  local dict=()
  [ -f "fuzz/dict/$target.dict" ] && dict=("-dict=$ROOT/fuzz/dict/$target.dict")
  mkdir -p "fuzz/artifacts/$target"
  (cd fuzz && cargo +nightly fuzz run "${PROFILE[@]}" --sanitizer none --target-dir "$FUZZ_TARGET_DIR" "$target" \
    "$corpus" -- -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 "${dict[@]}" "$@")
}

case "${1:-}" in
  --list) setup_fuzz; targets ;;
  all|smoke)
    if [ "$1" = smoke ]; then
      PROFILE=(--dev)
      export CARGO_PROFILE_DEV_DEBUG=0
    fi
    seconds=${2:?usage: scripts/fuzz.sh all|smoke SECONDS}
    shift 2
    setup_fuzz
    build
    scratch=$(mktemp -d)
    trap 'rm -rf "$scratch"' EXIT
    failed=()
    for t in $(targets); do
      mkdir -p "$scratch/$t"
      cp -r "fuzz/corpus/$t/." "$scratch/$t/" 2>/dev/null || true
      printf '\n==> fuzz %s for %ss\n' "$t" "$seconds" >&2
      if fuzz "$t" "$seconds" "$scratch/$t" "$@" >"$scratch/$t.log" 2>&1; then
        grep -E '^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::average_exec_per_sec)' "$scratch/$t.log" >&2 || true
      else
        tail -n 60 "$scratch/$t.log" >&2
        failed+=("$t")
      fi
    done
    if [ ${#failed[@]} -gt 0 ]; then
      echo "fuzz: crashes in ${failed[*]} (reproducers in fuzz/artifacts/)" >&2
      exit 1
    fi
    ;;
  ""|-h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
  *)
    target=$1 seconds=${2:?usage: scripts/fuzz.sh TARGET SECONDS}
    shift 2
    setup_fuzz
    mkdir -p "fuzz/corpus/$target"
    fuzz "$target" "$seconds" "$ROOT/fuzz/corpus/$target" "$@"
    ;;
esac

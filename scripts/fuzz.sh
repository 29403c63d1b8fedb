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
#   scripts/fuzz.sh campaign TARGET RUNS [PROCS]
#                                      RUNS executions in all over PROCS processes (default 1)
#                                      at nice 19, on the campaign corpus (below); Ctrl-C
#                                      stops them early; prints the summed executions
#   scripts/fuzz.sh keep TARGET        minimises the campaign corpus into
#                                      fuzz/campaign/TARGET.tar.xz, to commit
#
# A campaign's corpus lives in $FUZZ_CAMPAIGN_DIR/TARGET/corpus (default: beside the build
# directory) and starts from fuzz/corpus/TARGET plus fuzz/campaign/TARGET.tar.xz, so what a
# campaign learned carries over to the next machine once kept. CI replays only fuzz/corpus.
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

CAMPAIGNS="${FUZZ_CAMPAIGN_DIR:-$(dirname "$FUZZ_TARGET_DIR")/fuzz-campaign}"

binary() { echo "$FUZZ_TARGET_DIR/$(rustc -vV | sed -n 's/^host: //p')/release/$1"; }

# The campaign corpus of TARGET, seeded from the committed seeds and the kept corpus.
campaign_corpus() {
  local dir="$CAMPAIGNS/$1/corpus"
  mkdir -p "$dir"
  if [ -z "$(ls -A "$dir")" ]; then
    cp -r "fuzz/corpus/$1/." "$dir/" 2>/dev/null || true
    if [ -f "fuzz/campaign/$1.tar.xz" ]; then tar -xJf "fuzz/campaign/$1.tar.xz" -C "$dir"; fi
  fi
  echo "$dir"
}

# campaign TARGET RUNS PROCS [libFuzzer args...]: the processes share one corpus directory
# (libFuzzer picks up what the others add) and each runs its share of RUNS.
campaign() {
  local target=$1 runs=$2 procs=$3
  shift 3
  local corpus bin dict=() pids=() i
  corpus=$(campaign_corpus "$target")
  bin=$(binary "$target")
  [ -f "fuzz/dict/$target.dict" ] && dict=("-dict=$ROOT/fuzz/dict/$target.dict")
  mkdir -p "fuzz/artifacts/$target"
  echo "campaign $target: $runs executions over $procs processes on $corpus ($(ls "$corpus" | wc -l) files)" >&2
  for i in $(seq 1 "$procs"); do
    (cd "$CAMPAIGNS/$target" && exec nice -n 19 "$bin" "$corpus" -runs=$(((runs + procs - 1) / procs)) \
      -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
      -artifact_prefix="$ROOT/fuzz/artifacts/$target/" "${dict[@]}" "$@" >"$CAMPAIGNS/$target/p$i.log" 2>&1) &
    pids+=($!)
  done
  # Ctrl-C reaches the processes too (same process group); wait for their final stats.
  trap 'echo "campaign: stopping" >&2' INT
  local failed=0 rc
  for i in "${pids[@]}"; do
    rc=0
    wait "$i" || rc=$?
    # 72: libFuzzer's exit code when interrupted (Ctrl-C, SIGINT), which is not a finding.
    if [ "$rc" != 0 ] && [ "$rc" != 72 ]; then failed=1; fi
  done
  trap - INT
  local total=0 n
  for i in $(seq 1 "$procs"); do
    n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$CAMPAIGNS/$target/p$i.log")
    echo "  process $i: ${n:-?} executions, $(sed -n 's/^stat::average_exec_per_sec: *//p' "$CAMPAIGNS/$target/p$i.log") exec/s" >&2
    total=$((total + ${n:-0}))
  done
  echo "campaign $target: $total executions, corpus $(ls "$corpus" | wc -l) files, logs in $CAMPAIGNS/$target" >&2
  if [ "$failed" = 1 ]; then
    grep -h -B2 -A20 "^==.*ERROR\|deadly signal\|panicked" "$CAMPAIGNS/$target"/p*.log | tail -n 60 >&2 || true
    echo "campaign $target: a process failed (reproducers in fuzz/artifacts/$target/)" >&2
    return 1
  fi
}

# keep TARGET: the inputs that add coverage, compressed, for the next campaign to start from.
keep() {
  local target=$1 corpus min
  corpus=$(campaign_corpus "$target")
  min=$(mktemp -d)
  "$(binary "$target")" -merge=1 -timeout=60 -rss_limit_mb=2048 -max_len=65536 "$min" "$corpus" 2>&1 |
    grep -E "MERGE-OUTER: [0-9]+ new files" >&2 || true
  mkdir -p fuzz/campaign
  tar -cJf "fuzz/campaign/$target.tar.xz" -C "$min" .
  echo "kept $(ls "$min" | wc -l) inputs of $(ls "$corpus" | wc -l): fuzz/campaign/$target.tar.xz ($(du -k "fuzz/campaign/$target.tar.xz" | cut -f1) KiB)" >&2
  rm -rf "$min"
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
  campaign)
    target=${2:?usage: scripts/fuzz.sh campaign TARGET RUNS [PROCS]}
    runs=${3:?usage: scripts/fuzz.sh campaign TARGET RUNS [PROCS]}
    procs=${4:-1}
    shift $(($# < 4 ? $# : 4))
    setup_fuzz
    build "$target"
    campaign "$target" "$runs" "$procs" "$@"
    ;;
  keep)
    target=${2:?usage: scripts/fuzz.sh keep TARGET}
    setup_fuzz
    build "$target"
    keep "$target"
    ;;
  ""|-h|--help) sed -n '2,/^set -e/{/^set -e/!p;}' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
  *)
    target=$1 seconds=${2:?usage: scripts/fuzz.sh TARGET SECONDS}
    shift 2
    setup_fuzz
    mkdir -p "fuzz/corpus/$target"
    fuzz "$target" "$seconds" "$ROOT/fuzz/corpus/$target" "$@"
    ;;
esac

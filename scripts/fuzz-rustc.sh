#!/usr/bin/env bash
# RUSTC_WRAPPER for the fuzz builds (scripts/fuzz.sh): coverage instrumentation only for
# this repository's crates and the dependencies named in $FUZZ_INSTRUMENT_DEPS.
#
# Why: cargo-fuzz instruments every crate. libFuzzer then walks the coverage counters of
# the whole dependency tree (tokio, axum, hyper, rusqlite, ...) after every input, which was
# half of a gateway target's time per input (docs/reliability.md, "What is instrumented").
# Coverage of the runtime's scheduling says nothing about the input and varies between runs
# of the same input, so it only adds noise to what libFuzzer keeps.
#
# Invoked by cargo as: fuzz-rustc.sh RUSTC ARGS... A wrapper the user had set before
# (sccache, say) is in $TAP_FUZZ_NEXT_WRAPPER and still runs.
set -euo pipefail
rustc=$1
shift
next=()
[ -n "${TAP_FUZZ_NEXT_WRAPPER:-}" ] && next=("$TAP_FUZZ_NEXT_WRAPPER")

root=${TAP_FUZZ_ROOT:?scripts/fuzz.sh sets TAP_FUZZ_ROOT}
# The list and its default are scripts/fuzz.sh's (empty: no dependency instrumented).
deps=" ${FUZZ_INSTRUMENT_DEPS?scripts/fuzz.sh sets FUZZ_INSTRUMENT_DEPS} "

crate="" source=""
prev=""
for a in "$@"; do
  [ "$prev" = --crate-name ] && crate=$a
  case $a in *.rs) source=$a ;; esac
  prev=$a
done

# Ours: cargo names a workspace member's source relative to the fuzz workspace, and a path
# dependency (crates/...) by its absolute path under the repository.
case $source in
  /*) case $source in "$root"/*) exec "${next[@]}" "$rustc" "$@" ;; esac ;;
  ?*) exec "${next[@]}" "$rustc" "$@" ;;
esac
case $deps in *" $crate "*) exec "${next[@]}" "$rustc" "$@" ;; esac

args=()
for a in "$@"; do
  case $a in
    -Cpasses=sancov-module | -Cllvm-args=-sanitizer-coverage-*) ;;
    # A spelling this script does not know (a newer cargo-fuzz): stop rather than build a
    # dependency instrumented after all while claiming otherwise.
    *sancov* | *sanitizer-coverage*)
      echo "fuzz-rustc.sh: unknown coverage flag '$a' for $crate; teach this script its spelling" >&2
      exit 1
      ;;
    *) args+=("$a") ;;
  esac
done
exec "${next[@]}" "$rustc" "${args[@]}"

#!/usr/bin/env bash
# Runs each libFuzzer target of the `fuzz` preset for a bounded time under ASan + UBSan.
#   tools/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]    default 60 s, every target in fuzz/
# Build first: cmake --preset fuzz && cmake --build --preset fuzz
# The seeds are copied to build/fuzz/corpus/<target>/, where new inputs go too (not kept). A crash stops
# with the input written to build/fuzz/crashes/<target>/: fix the bug, then keep the input as
# fuzz/regressions/<target>/<short-name> so ctest replays it in every build.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
[ $# -gt 0 ] && shift
targets=("$@")
((${#targets[@]})) || targets=(scenario_loader set_override nccl_tests_log)

seeds_of() {  # the seed files of a target; keep in step with fuzz/CMakeLists.txt
  case "$1" in
    scenario_loader) ls scenarios/*.yaml tests/data/*.yaml | grep -v 'ddp-70b-16k\.yaml$' ;;
    set_override) ls fuzz/corpus/set_override/* ;;
    nccl_tests_log) ls tests/data/nccl/* | grep -v 'README\.md$' ;;
    *) echo "fuzz: unknown target $1" >&2; return 1 ;;
  esac
  if [ -d "fuzz/regressions/$1" ]; then ls -d "fuzz/regressions/$1"/*; fi
}

for t in "${targets[@]}"; do
  bin=build/fuzz/fuzz/fuzz_$t
  [ -x "$bin" ] || { echo "fuzz: $bin not built (cmake --build --preset fuzz)" >&2; exit 2; }
  corpus=build/fuzz/corpus/$t
  crashes=build/fuzz/crashes/$t
  mkdir -p "$corpus" "$crashes"
  mapfile -t seeds < <(seeds_of "$t")
  cp "${seeds[@]}" "$corpus/"
  dict=()
  [ -f "fuzz/$t.dict" ] && dict=(-dict="fuzz/$t.dict")
  echo "fuzz: $t for ${seconds}s"
  # -timeout: an input taking over 60 s (the seeds take < 1 s) is a hang worth a look;
  # -rss_limit_mb: a scenario asking for more memory than a laptop has must be refused, not tried.
  log=build/fuzz/$t.log
  if ! "$bin" -max_total_time="$seconds" -timeout=60 -rss_limit_mb=2048 -max_len=8192 \
    -print_final_stats=1 -artifact_prefix="$crashes/" "${dict[@]}" "$corpus" >"$log" 2>&1; then
    grep -v '^"' "$log" | tail -n 80 >&2
    echo "fuzz: $t found a failing input (in $crashes/; full log $log)" >&2
    exit 1
  fi
  grep '^stat::\|^Done' "$log"

done

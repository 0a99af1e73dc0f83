#!/usr/bin/env bash
# Runs clang-tidy (the checks in .clang-tidy) on the project's own sources, as compiled in a
# build's compile_commands.json; any finding fails.
#   tools/clang-tidy.sh [BUILD_DIR [FILE...]]    default build/ci (configure it first), every source
# Parallel over `nproc` files (SYNCSIM_TIDY_JOBS overrides): about 540 CPU-seconds, so ~5 minutes
# on 2 idle cores. Sources listed in tools/clang-tidy-pending.txt (one path a line, '#' comments)
# are skipped: they have findings still to fix; delete a line once its file is clean.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

build=${1:-build/ci}
[ $# -gt 0 ] && shift
tidy=${CLANG_TIDY:-$(command -v clang-tidy-14 || command -v clang-tidy || true)}
[ -n "$tidy" ] || { echo "clang-tidy: not found (apt-get install clang-tidy)" >&2; exit 2; }
[ -f "$build/compile_commands.json" ] ||
  { echo "clang-tidy: no $build/compile_commands.json (cmake --preset ci first)" >&2; exit 2; }

if (($#)); then
  files=("$@")
else
  # Project sources only: not generated files in the build tree, not system headers' sources.
  mapfile -t files < <(grep -o '"file": "[^"]*"' "$build/compile_commands.json" |
    sed 's/^"file": "//; s/"$//' | grep "^$root/" | grep -v "^$root/build/" | sort -u)
  if [ -f tools/clang-tidy-pending.txt ]; then
    mapfile -t files < <(printf '%s\n' "${files[@]}" |
      grep -vxF -f <(grep -v '^\s*\(#\|$\)' tools/clang-tidy-pending.txt | sed "s|^|$root/|") ||
      true)
  fi
fi
# Project headers are checked too, through the sources that include them.
dirs='sim|topologies|models|calibration|scenario|run|cli|tests|fuzz'
jobs=${SYNCSIM_TIDY_JOBS:-$(nproc 2>/dev/null || echo 2)}
echo "clang-tidy: ${#files[@]} files, $jobs at a time"
printf '%s\0' "${files[@]}" |
  xargs -0 -n 1 -P "$jobs" "$tidy" -p "$build" --quiet --header-filter="^$root/($dirs)/" \
    2> >(grep -v '^[0-9]* warnings\? generated\.$' >&2) || {
  echo "clang-tidy: findings above (fix them, or justify a NOLINT(check) at the line)" >&2
  exit 1
}
echo "clang-tidy: no findings"

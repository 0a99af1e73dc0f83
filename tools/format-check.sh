#!/usr/bin/env bash
# Checks that C++ sources follow .clang-format (clang-format 14, Debian 12), changing nothing.
#   tools/format-check.sh              every tracked *.cpp / *.hpp / *.h / *.cu / *.cpp.in file
#   tools/format-check.sh FILE...      only those files
#   tools/format-check.sh --fix [FILE...]   rewrites them in place instead
# Files listed in tools/format-pending.txt (one path a line, '#' comments) are skipped: they are
# the ones not yet formatted; delete a line once its file is formatted.
set -euo pipefail
cd "$(dirname "$0")/.."

clang_format=${CLANG_FORMAT:-$(command -v clang-format-14 || command -v clang-format || true)}
if [ -z "$clang_format" ]; then
  echo "format-check: clang-format not found (apt-get install clang-format)" >&2
  exit 2
fi

fix=0
if [ "${1:-}" = "--fix" ]; then
  fix=1
  shift
fi

if (($#)); then
  files=("$@")
else
  mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.cu' '*.cpp.in')
  if [ -f tools/format-pending.txt ]; then
    mapfile -t files < <(printf '%s\n' "${files[@]}" |
      grep -vxF -f <(grep -v '^\s*\(#\|$\)' tools/format-pending.txt) || true)
  fi
fi
((${#files[@]})) || exit 0

if ((fix)); then
  exec "$clang_format" -i --style=file "${files[@]}"
fi
if ! "$clang_format" --dry-run -Werror --style=file "${files[@]}"; then
  echo "format-check: the files above do not follow .clang-format; fix with" >&2
  echo "  tools/format-check.sh --fix FILE..." >&2
  exit 1
fi
echo "format-check: ${#files[@]} files follow .clang-format"

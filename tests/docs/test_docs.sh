#!/usr/bin/env bash
# Checks of the documentation that can drift: the README stays a front door (at most 250 lines, the
# Quickstart commands unchanged), its docs/ links resolve, and every page under docs/ links only to
# files that exist.
# usage: test_docs.sh SOURCE_DIR
set -u
src=$1
# shellcheck source=../checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/../checks.sh"

readme="$src/README.md"
lines=$(wc -l <"$readme")
check "README.md has at most 250 lines (has $lines)" test "$lines" -le 250
check "README.md Quickstart runs ./setup.sh run" grep -q '^\./setup\.sh run ' "$readme"
check "README.md Quickstart runs ./setup.sh test" grep -q '^\./setup\.sh test ' "$readme"

# Relative Markdown links ](path) or ](path#anchor) in the README, CONTRIBUTING and docs/ must name
# files that exist.
for page in "$readme" "$src/CONTRIBUTING.md" "$src/CHANGELOG.md" "$src"/docs/*.md; do
  [ -f "$page" ] || continue
  dir=$(dirname "$page")
  for target in $(grep -o '](\([^)#: ]*\)[)#]' "$page" | sed 's/^](//; s/[)#]$//' | sort -u); do
    [ -n "$target" ] || continue
    check "$(basename "$page") links to an existing $target" test -e "$dir/$target"
  done
done

echo "docs: $passes passed, $fails failed"
[ "$fails" -eq 0 ]

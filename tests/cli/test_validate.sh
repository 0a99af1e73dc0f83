#!/usr/bin/env bash
# The whole validation suite, end to end: `syncsim validate` must exit 0 (all within tolerance) or
# 3 (some not), never 4 (a value worse than the committed baseline), 2 (a bad case file) or
# 1/crash, and print one row for every measured value of every case file, inexpressible ones
# included.
# usage: test_validate.sh SYNCSIM_BINARY SOURCE_DIR
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

start=$(date +%s)
# The regression gate: no value may get more than 2 points worse than validation/baseline.csv
# (exit 4). Regenerate the baseline with `syncsim validate --csv validation/baseline.csv` when a
# change moves the errors on purpose, and say why in the commit.
"$bin" validate --suite "$src/validation" --jobs 2 --json --csv "$tmp/rows.csv" \
  --baseline "$src/validation/baseline.csv" >"$tmp/out.json" 2>"$tmp/err"
rc=$?
elapsed=$(($(date +%s) - start))
echo "syncsim validate: exit $rc in ${elapsed}s"
if [ "$rc" -eq 4 ]; then
  fail "values regressed against validation/baseline.csv:"
  grep -A4 '"regressions"' "$tmp/out.json" | head -40
fi
[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || [ "$rc" -eq 4 ] || { fail "exit $rc (expected 0 or 3)"; cat "$tmp/err"; }

# Every value of every case file: one row in the CSV with that case's id.
for f in "$src"/validation/*.yaml; do
  id=$(sed -n 's/^id: *//p' "$f" | head -1)
  expected=$(grep -c '^ *- *{\? *quantity:' "$f")
  found=$(grep -c "^$id," "$tmp/rows.csv")
  [ "$expected" -gt 0 ] || fail "$f: no measured values found by this script"
  [ "$found" -eq "$expected" ] || fail "$id: $found rows, expected $expected (one per measured value)"
done
rows=$(($(wc -l <"$tmp/rows.csv") - 1))
listed=$(cat "$src"/validation/*.yaml | grep -c '^ *- *{\? *quantity:')
[ "$rows" -eq "$listed" ] || fail "$rows rows for $listed measured values"

# The JSON's groups are the three the suite reports.
for g in collectives training_steps congestion; do
  grep -q "\"$g\": {" "$tmp/out.json" || fail "group $g missing from --json"
done

# The text output (one group, so the suite runs once in full): a row per value, a line per group.
"$bin" validate training_steps --suite "$src/validation" --jobs 2 >"$tmp/out.txt" 2>&1
grep -q '^training_steps ' "$tmp/out.txt" || fail "text output lacks the training_steps summary"
[ "$(grep -c '^dgxc-llama3.1-8b ' "$tmp/out.txt")" -eq "$(grep -c '^dgxc-llama3.1-8b,' "$tmp/rows.csv")" ] ||
  fail "text output: not one row per value of dgxc-llama3.1-8b"

[ "$fails" -eq 0 ] && echo "validate suite: $rows rows, all printed"
exit $((fails > 0))

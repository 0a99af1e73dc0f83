#!/usr/bin/env bash
# tools/ab-compare.py end to end: `same` finds a binary equal to itself and tells a run with another
# seed apart; `time` prints a per-pair ratio for one pair; bad input exits 2. Seconds.
# usage: test_ab_compare.sh SYNCSIM_BINARY SOURCE_DIR
set -u
bin=$1
src=$2
tool="$src/tools/ab-compare.py"
# shellcheck source=../checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/../checks.sh"

python3 "$tool" same "$bin" "$bin" scenarios/incast-pfc.yaml >"$tmp/same" 2>&1
check "same: a binary against itself exits 0" test $? -eq 0
check "same: counts the case as the same" grep -q "^1 of 1 cases the same" "$tmp/same"

# A "binary" whose runs take another seed: incast-tcp's results then differ.
printf '#!/usr/bin/env bash\nexec "%s" "$@" --seed 7\n' "$bin" >"$tmp/other-seed"
chmod +x "$tmp/other-seed"
python3 "$tool" same "$bin" "$tmp/other-seed" scenarios/incast-tcp.yaml >"$tmp/differ" 2>&1
check "same: a difference exits 1" test $? -eq 1
check "same: names the case that differs" grep -q "^DIFFER  scenarios/incast-tcp.yaml" "$tmp/differ"

# A case that fails to run is reported, not compared.
python3 "$tool" same "$bin" "$bin" "scenarios/incast-pfc.yaml --set no.such.key=1" >"$tmp/failed" 2>&1
check "same: a run that fails exits 1" test $? -eq 1
check "same: names the failed case" grep -q "^FAILED  scenarios/incast-pfc.yaml" "$tmp/failed"

if [ "$(nproc)" -ge 2 ]; then
  python3 "$tool" time "$bin" "$bin" --pairs 1 scenarios/incast-pfc.yaml >"$tmp/time" 2>&1
  check "time: one pair exits 0" test $? -eq 0
  check "time: prints the case with a ratio" grep -qE "^scenarios/incast-pfc.yaml +[0-9.]+/[0-9.]+ +[0-9.]+/[0-9.]+ +[0-9.]+$" "$tmp/time"
fi

python3 "$tool" time "$bin" "$bin" --pairs 0 >"$tmp/pairs" 2>&1
check "time: --pairs 0 exits 2" test $? -eq 2
python3 "$tool" same "$bin" "$tmp/no-such-binary" >"$tmp/missing" 2>&1
check "same: a missing binary exits 2" test $? -eq 2
check "same: names the missing binary" grep -q "no-such-binary: expected an executable syncsim binary" "$tmp/missing"

echo "ab-compare: $passes passed, $fails failed"
test "$fails" -eq 0

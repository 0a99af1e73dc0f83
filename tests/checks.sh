# Sourced by the shell tests (tests/*/test_*.sh): a scratch directory `$tmp`, removed at exit, and
# check NAME CONDITION..., which runs the condition, counts it in `passes` or `fails`, and names a
# failed one. A test ends with `echo "...: $passes passed, $fails failed"; test "$fails" -eq 0`.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
passes=0
check() {  # check NAME CONDITION...
  local name=$1
  shift
  if "$@"; then passes=$((passes + 1)); else echo "FAIL: $name"; fails=$((fails + 1)); fi
}

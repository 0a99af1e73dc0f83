#!/usr/bin/env bash
# The command-line conventions end to end (docs/cli.md, "Conventions"): --version with the git
# commit, the bash completion working in bash, errors as JSON on stdout with --json, and no escape
# byte in any output under NO_COLOR.
# usage: test_conventions.sh SYNCSIM_BINARY SOURCE_DIR
set -u
bin=$1
src=$2
# shellcheck source=../checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/../checks.sh"

# --version: "syncsim X.Y.Z (git COMMIT)", the commit of this checkout when git can tell it.
"$bin" --version >"$tmp/version" 2>&1
check "--version exits 0" test $? -eq 0
check "--version names version and commit" grep -qE '^syncsim [0-9]+\.[0-9]+\.[0-9]+ \(git [^ ]+\)$' "$tmp/version"
if commit=$(git -C "$src" rev-parse --short=7 HEAD 2>/dev/null); then
  check "--version names this checkout's commit (a binary built before the last commit does not)" grep -q "$commit" "$tmp/version"
fi

# The completion script, sourced into bash, completes commands, subcommands and flags.
"$bin" completion bash >"$tmp/completion.bash"
check "completion bash exits 0" test $? -eq 0
complete_words() {  # complete_words WORD...: what _syncsim offers for the last word
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _syncsim; echo "${COMPREPLY[*]}"' \
    _ "$tmp/completion.bash" "$@"
}
check "completion: commands" bash -c "[[ ' $(complete_words syncsim re) ' == *' report '* ]]"
check "completion: run flags" bash -c "[[ ' $(complete_words syncsim run --str) ' == ' --strict-memory ' ]]"
check "completion: calibrate subcommands" bash -c "[[ ' $(complete_words syncsim calibrate tr) ' == ' trace ' ]]"
check "completion: a subcommand's flags" bash -c "[[ ' $(complete_words syncsim calibrate flow --si) ' == ' --size ' ]]"
check "completion: report --html" bash -c "[[ ' $(complete_words syncsim report x.json --ht) ' == ' --html ' ]]"
"$bin" completion zsh >/dev/null 2>&1
check "completion of an unknown shell exits 2" test $? -eq 2

# --json errors: one object on stdout, the line on stderr, exit 2.
cat >"$tmp/bad.yaml" <<'YAML'
name: bad
fabric:
  topology: spine_leaf
  spine_leaf: {leaves: 2, hosts_per_leaf: 2, spines: 2}
  links:
    host: {bandwidth: 400}
traffic:
  - {pattern: ring_shift, size: 1MiB}
YAML
"$bin" run "$tmp/bad.yaml" --json >"$tmp/out.json" 2>"$tmp/err"
check "--json scenario error exits 2" test $? -eq 2
check "--json scenario error: file, line, column, path, message" python3 -c "
import json, sys
e = json.load(open(sys.argv[1]))['error']
sys.exit(0 if e['file'].endswith('bad.yaml') and e['line'] == 6 and e['column'] > 0
         and e['path'] == 'fabric.links.host.bandwidth' and 'bandwidth' in e['message'] else 1)" "$tmp/out.json"
check "--json scenario error: still one line on stderr" test "$(wc -l <"$tmp/err")" -eq 1
"$bin" run --json --no-such-flag >"$tmp/out.json" 2>/dev/null
check "--json usage error exits 2" test $? -eq 2
check "--json usage error: null place, a message" python3 -c "
import json, sys
e = json.load(open(sys.argv[1]))['error']
sys.exit(0 if e['file'] is None and e['line'] is None and 'no-such-flag' in e['message'] else 1)" "$tmp/out.json"
echo 'not json {' >"$tmp/bad.json"
"$bin" report "$tmp/bad.json" --html "$tmp/x.html" --json >"$tmp/out.json" 2>"$tmp/err"
check "report: bad input exits 2" test $? -eq 2
check "report: bad input is one line" test "$(wc -l <"$tmp/err")" -eq 1
check "report: --json error names the file" python3 -c "
import json, sys
e = json.load(open(sys.argv[1]))['error']
sys.exit(0 if e['file'].endswith('bad.json') and e['line'] == 1 else 1)" "$tmp/out.json"
check "report: nothing written on bad input" test ! -e "$tmp/x.html"
"$bin" run "$tmp/bad.yaml" >"$tmp/out.txt" 2>/dev/null
check "without --json stdout stays empty" test ! -s "$tmp/out.txt"

# NO_COLOR (https://no-color.org): no escape byte anywhere, help, results or errors.
esc=$(printf '\033')
NO_COLOR=1 "$bin" --help >"$tmp/nc" 2>&1
NO_COLOR=1 "$bin" run --help >>"$tmp/nc" 2>&1
NO_COLOR=1 "$bin" run "$src/scenarios/ring-shift-8gpu.yaml" --set traffic.0.size=64KiB >>"$tmp/nc" 2>&1
NO_COLOR=1 "$bin" run "$tmp/bad.yaml" >>"$tmp/nc" 2>&1
check "NO_COLOR: output has text" test -s "$tmp/nc"
check "NO_COLOR: no escape sequence" bash -c "! grep -q '$esc' '$tmp/nc'"

echo "conventions: $passes passed, $fails failed"
[ "$fails" -eq 0 ]

#!/usr/bin/env bash
# `syncsim report` in a real browser: headless Chromium loads the pages of a packet incast, a
# training step and a sweep, and each must report no error (uncaught or console.error, collected
# by the page's own check into #page-check), have drawn its sections, and log no console error or
# Content-Security-Policy violation (which a fetch of anything external would be). With SCREENSHOT
# set, the step page's screenshot is written there (docs/report-page.png).
# usage: test_report_browser.sh SYNCSIM_BINARY SOURCE_DIR
# Chromium (Debian `chromium`, installed by ./setup.sh test) missing: FAIL when CI=true, else skip
# (exit 77, which ctest reports as skipped).
set -u
bin=$1
src=$2
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  if [ "${CI:-}" = true ]; then
    echo "FAIL: chromium not found (./setup.sh test installs Debian's chromium)"
    exit 1
  fi
  echo "SKIP: chromium not found; install it (apt-get install chromium) to run this test"
  exit 77  # ctest: skipped (SKIP_RETURN_CODE)
fi
# shellcheck source=../checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/../checks.sh"

# chromium_run PAGE ARGS...: one headless run with a private profile (root needs --no-sandbox).
chromium_run() {
  local page=$1
  shift
  timeout 90 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
    --user-data-dir="$tmp/profile" --enable-logging=stderr --v=0 --hide-scrollbars \
    "$@" "file://$page"
}

# load NAME PAGE IDS...: the page loads, its check says ok, the ids are drawn, the console is clean.
load() {
  local name=$1 page=$2
  shift 2
  chromium_run "$page" --dump-dom >"$tmp/$name.dom" 2>"$tmp/$name.log"
  check "$name: chromium loads the page" test -s "$tmp/$name.dom"
  check "$name: the page's own check is ok" grep -q 'id="page-check" data-status="ok"' "$tmp/$name.dom"
  for id in "$@"; do
    check "$name: #$id is drawn" grep -q "id=\"$id\"" "$tmp/$name.dom"
  done
  check "$name: no console error or blocked request" \
    bash -c "! grep -E 'CONSOLE|Content Security Policy|Refused to' '$tmp/$name.log'"
  grep -E 'CONSOLE|Content Security Policy|Refused to' "$tmp/$name.log" | head -5
}

"$bin" run "$src/scenarios/incast-dcqcn.yaml" --json >"$tmp/incast.json" 2>"$tmp/err"
check "incast runs" test $? -eq 0
"$bin" report "$tmp/incast.json" --html "$tmp/incast.html" 2>"$tmp/err"
check "report of a run exits 0" test $? -eq 0
load incast "$tmp/incast.html" summary fabric ports step timeline
check "incast: the paused ports are drawn" grep -q 'spine0-&gt;leaf0' "$tmp/incast.dom"

"$bin" run "$src/scenarios/bucket-size-study.yaml" --json >"$tmp/step.json" 2>"$tmp/err"
check "a training step runs" test $? -eq 0
"$bin" report "$tmp/step.json" --html "$tmp/step.html" 2>"$tmp/err"
load step "$tmp/step.html" summary fabric step timeline
check "step: the timeline shows 8 ranks" test "$(grep -o '>rank [0-9]<' "$tmp/step.dom" | wc -l)" -eq 8

"$bin" sweep "$src/scenarios/incast-pfc.yaml" --vary fabric.links.host.bandwidth=50Gbps,100Gbps,200Gbps \
  --vary traffic.0.messages.0.size=256KiB,1MiB --jobs 2 --quiet --csv "$tmp/sweep.csv" 2>"$tmp/err"
check "sweep runs" test $? -eq 0
"$bin" report "$tmp/sweep.csv" --html "$tmp/sweep.html" 2>"$tmp/err"
check "report of a sweep exits 0" test $? -eq 0
load sweep "$tmp/sweep.html" sweep sweep-table
check "sweep: plots are drawn" grep -q 'class="sweep-plot"' "$tmp/sweep.dom"

if [ -n "${SCREENSHOT:-}" ]; then
  chromium_run "$tmp/step.html" --screenshot="$SCREENSHOT" --window-size=1280,1250 >/dev/null 2>&1
  check "screenshot written" test -s "$SCREENSHOT"
fi
chromium_run "$tmp/incast.html" --screenshot="$tmp/shot.png" --window-size=1280,900 >/dev/null 2>&1
check "a screenshot is taken" test -s "$tmp/shot.png"

# The page opens offline: it names no URL to fetch.
check "no external URL in the pages" bash -c "! grep -lE 'https?://' '$tmp'/*.html"

echo "report browser: $passes passed, $fails failed"
[ "$fails" -eq 0 ]

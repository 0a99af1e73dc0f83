#!/usr/bin/env bash
# End-to-end checks of `syncsim sweep` and `syncsim plot`.
# usage: test_sweep.sh SYNCSIM_BINARY SOURCE_DIR [MPIEXEC]
# With MPIEXEC, only the MPI check runs: `MPIEXEC -n 2 syncsim sweep` must print what a serial run
# prints (the ctest entry sets OMPI_ALLOW_RUN_AS_ROOT*, and detect_leaks=0 for ASan builds).
set -u
bin=$1
src=$2
mpiexec=${3:-}
# shellcheck source=../checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/../checks.sh"

scenario="$src/scenarios/incast-pfc.yaml"
sweep_args=(sweep "$scenario" --vary fabric.links.host.bandwidth=100Gbps,200Gbps,400Gbps
            --vary fabric.switch.pfc.enabled=true,false --set traffic.0.messages.0.size=256KiB --no-wall --quiet)

"$bin" "${sweep_args[@]}" >"$tmp/serial.csv" 2>"$tmp/err"
check "serial sweep exits 0" test $? -eq 0

if [ -n "$mpiexec" ]; then
  "$mpiexec" --allow-run-as-root --oversubscribe -n 2 "$bin" "${sweep_args[@]}" >"$tmp/mpi.csv" 2>"$tmp/mpi.err"
  check "mpirun -n 2 sweep exits 0" test $? -eq 0
  check "mpirun -n 2 output equals the serial output" cmp -s "$tmp/serial.csv" "$tmp/mpi.csv"
  "$mpiexec" --allow-run-as-root --oversubscribe -n 3 "$bin" "${sweep_args[@]}" --json >"$tmp/mpi.json" 2>>"$tmp/mpi.err"
  "$bin" "${sweep_args[@]}" --json >"$tmp/serial.json" 2>/dev/null
  check "mpirun -n 3 --json equals the serial JSON" cmp -s "$tmp/serial.json" "$tmp/mpi.json"
  # The memory check decides alike on every rank: refused everywhere, printed once, exit 2.
  SYNCSIM_MEM_AVAILABLE=1000000 "$mpiexec" --allow-run-as-root --oversubscribe -x SYNCSIM_MEM_AVAILABLE -n 2 \
    "$bin" "${sweep_args[@]}" >"$tmp/mpi_refused.csv" 2>"$tmp/mpi_refused.err"
  check "mpirun -n 2: a sweep that does not fit exits 2" test $? -eq 2
  check "mpirun -n 2: refusal printed once per point" test "$(grep -c '^syncsim sweep: point 0 ' "$tmp/mpi_refused.err")" -eq 1
  check "mpirun -n 2: nothing runs" test ! -s "$tmp/mpi_refused.csv"
  SYNCSIM_MEM_AVAILABLE=1000000 "$mpiexec" --allow-run-as-root --oversubscribe -x SYNCSIM_MEM_AVAILABLE -n 2 \
    "$bin" "${sweep_args[@]}" --force >"$tmp/mpi_forced.csv" 2>/dev/null
  check "mpirun -n 2 --force runs it anyway" cmp -s "$tmp/serial.csv" "$tmp/mpi_forced.csv"
  [ "$fails" -eq 0 ] || { diff "$tmp/serial.csv" "$tmp/mpi.csv" | head; cat "$tmp/mpi.err"; }
  echo "$passes passed, $fails failed"
  [ "$fails" -eq 0 ]
  exit
fi

check "header: swept paths then metrics" \
  grep -q '^fabric.links.host.bandwidth,fabric.switch.pfc.enabled,sim_time_s,messages,messages_completed,fct_mean_s,fct_p99_s,fct_max_s,bytes_dropped,max_queue_bytes,pause_frames,ecn_marks,events,cnps,queue_mean_bytes,queue_p99_bytes$' "$tmp/serial.csv"
check "one row per point" test "$(wc -l <"$tmp/serial.csv")" -eq 7
check "points in order, last --vary fastest" \
  bash -c "cut -d, -f1,2 '$tmp/serial.csv' | tr '\n' ' ' | grep -q '100Gbps,true 100Gbps,false 200Gbps,true 200Gbps,false 400Gbps,true'"
check "not a terminal: no progress on stderr" test ! -s "$tmp/err"

"$bin" "${sweep_args[@]}" --jobs 4 >"$tmp/jobs.csv" 2>/dev/null
check "--jobs 4 exits 0" test $? -eq 0
check "--jobs 4 output equals the serial output" cmp -s "$tmp/serial.csv" "$tmp/jobs.csv"

"$bin" "${sweep_args[@]}" --jobs 2 --csv "$tmp/file.csv" --json >"$tmp/out.json" 2>/dev/null
check "--csv with --json exits 0" test $? -eq 0
check "--csv file equals stdout CSV" cmp -s "$tmp/serial.csv" "$tmp/file.csv"
check "--json prints an array of rows" \
  python3 -c "import json,sys; a=json.load(open('$tmp/out.json')); sys.exit(not (len(a)==6 and a[0]['fabric.links.host.bandwidth']=='100Gbps' and 'wall_s' not in a[0]))"

"$bin" sweep "$scenario" --vary seed=1,2 --set traffic.0.messages.0.size=256KiB --quiet >"$tmp/wall.csv" 2>/dev/null
check "wall_s is the last column by default" bash -c "head -1 '$tmp/wall.csv' | grep -q ',queue_p99_bytes,wall_s$'"
"$bin" sweep "$scenario" --vary seed=1,2 --set traffic.0.messages.0.size=256KiB --quiet --columns fct_p50_s,pause_frames \
  >"$tmp/cols.csv" 2>/dev/null
check "--columns chooses the columns" bash -c "head -1 '$tmp/cols.csv' | grep -qx 'seed,fct_p50_s,pause_frames'"
"$bin" sweep "$scenario" --vary seed=1,2 --columns no_such >/dev/null 2>"$tmp/err"
check "--columns with an unknown column exits 2" test $? -eq 2
check "... and lists the columns" grep -q "fct_p99_s" "$tmp/err"

# Memory check before running: a point too big for the machine is refused up front, naming the
# point and both numbers (a million GPUs at packet level; nothing runs, not even the small point).
"$bin" sweep "$src/scenarios/ddp-70b-16k.yaml" --vary fabric.fat_tree.pods=1,1024 --set fidelity=packet \
  --quiet >"$tmp/huge.csv" 2>"$tmp/err"
check "a sweep with a huge point exits 2" test $? -eq 2
check "the refusal names the point and both numbers" \
  grep -q "^syncsim sweep: point 1 (fabric.fat_tree.pods=1024): estimated memory [0-9.]* GiB exceeds the [0-9.]* GiB available" "$tmp/err"
check "the small point is not refused" bash -c "! grep -q 'point 0 ' '$tmp/err'"
check "nothing ran" test ! -s "$tmp/huge.csv"
# Points running at once count: with a 1 MB stand-in machine every point is refused, x --jobs...
SYNCSIM_MEM_AVAILABLE=1000000 "$bin" "${sweep_args[@]}" --jobs 2 >"$tmp/small.csv" 2>"$tmp/err"
check "a sweep that does not fit the (stand-in) machine exits 2" test $? -eq 2
check "the refusal counts the points running at once" grep -q "x 2 points at once" "$tmp/err"
# ...and --force runs it anyway, with the same rows.
SYNCSIM_MEM_AVAILABLE=1000000 "$bin" "${sweep_args[@]}" --force >"$tmp/forced.csv" 2>/dev/null
check "--force runs a refused sweep" cmp -s "$tmp/serial.csv" "$tmp/forced.csv"
SYNCSIM_MEM_AVAILABLE=1000000 "$bin" run "$src/scenarios/incast-pfc.yaml" --quiet >/dev/null 2>"$tmp/err"
check "run: refused on the stand-in machine" test $? -eq 2

# Bad --vary: the usual one-line error, exit 2, and no point has run (no --csv file written).
"$bin" sweep "$scenario" --vary fabric.links.host.bandwidth=100Gbps,fast --csv "$tmp/none.csv" >/dev/null 2>"$tmp/err"
check "bad --vary value exits 2" test $? -eq 2
check "bad --vary value names the path" grep -q "fabric.links.host.bandwidth" "$tmp/err"
check "bad --vary value prints one line" test "$(wc -l <"$tmp/err")" -eq 1
check "bad --vary value runs nothing" test ! -e "$tmp/none.csv"
"$bin" sweep "$scenario" --vary fabric.spine_leaf.bogus=1,2 >/dev/null 2>"$tmp/err"
check "unknown --vary path exits 2" test $? -eq 2
check "unknown --vary path is named" grep -q "bogus" "$tmp/err"
"$bin" sweep "$scenario" >/dev/null 2>"$tmp/err"
check "no --vary exits 2" test $? -eq 2
"$bin" sweep "$scenario" --vary seed=1 --jobs x >/dev/null 2>"$tmp/err"
check "bad --jobs exits 2" test $? -eq 2

# plot
"$bin" sweep "$scenario" --vary fabric.links.host.bandwidth=100Gbps,200Gbps,400Gbps \
  --vary fabric.switch.pfc.enabled=true,false --quiet --csv "$tmp/res.csv" >/dev/null 2>&1
check "sweep for the plots exits 0" test $? -eq 0
PATH=/nonexistent "$bin" plot "$tmp/res.csv" --x fabric.links.host.bandwidth --y fct_max_s --out "$tmp/x.svg" \
  >/dev/null 2>"$tmp/err"
check "plot without gnuplot exits 1" test $? -eq 1
check "plot without gnuplot names the package" grep -q "gnuplot-nox" "$tmp/err"
"$bin" plot "$tmp/res.csv" --x fabric.links.host.bandwidth --y no_such_column --out "$tmp/x.svg" >/dev/null 2>"$tmp/err"
check "plot of an unknown column exits 2" test $? -eq 2
check "plot of an unknown column lists the columns" grep -q "fct_max_s" "$tmp/err"
"$bin" plot "$tmp/res.csv" --x fabric.links.host.bandwidth --y fct_max_s --out "$tmp/x.pdf" >/dev/null 2>"$tmp/err"
check "plot to .pdf exits 2" test $? -eq 2
if command -v gnuplot >/dev/null 2>&1; then
  "$bin" plot "$tmp/res.csv" --x fabric.links.host.bandwidth --y fct_max_s \
    --series fabric.switch.pfc.enabled --out "$tmp/fct.svg" >/dev/null 2>"$tmp/err"
  check "plot exits 0" test $? -eq 0
  check "plot writes a non-empty SVG" test -s "$tmp/fct.svg"
  check "the SVG is an SVG" grep -q "<svg" "$tmp/fct.svg"
  check "plot keeps its gnuplot script" test -s "$tmp/fct.svg.gp"
  "$bin" plot "$tmp/res.csv" --x fabric.switch.pfc.enabled --y sim_time_s --out "$tmp/cat.png" >/dev/null 2>"$tmp/err"
  check "categorical plot to PNG exits 0" test $? -eq 0
  check "the PNG is a PNG" bash -c "head -c 4 '$tmp/cat.png' | grep -q PNG"
else
  echo "SKIP: gnuplot not installed (apt-get install gnuplot-nox): plot rendering not tested"
fi

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]

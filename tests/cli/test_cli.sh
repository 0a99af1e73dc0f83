#!/usr/bin/env bash
# End-to-end checks of the syncsim command line: exit codes, error format, JSON keys.
# usage: test_cli.sh SYNCSIM_BINARY SOURCE_DIR
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
passes=0
check() {  # check NAME CONDITION...
  local name=$1
  shift
  if "$@"; then passes=$((passes + 1)); else echo "FAIL: $name"; fails=$((fails + 1)); fi
}

# The default scenario runs, and --json carries the contract keys.
"$bin" run --json --set workload.model=gpt3-1.3b >"$tmp/out.json" 2>"$tmp/err"
check "default run exits 0" test $? -eq 0
for key in scenario seed fidelity sim_time_s wall_s events packet_hops bytes_injected bytes_delivered \
           bytes_dropped messages max_queue_bytes; do
  check "json has $key" grep -q "\"$key\"" "$tmp/out.json"
done
for key in count fct_s min mean p50 p99 max; do
  check "json messages has $key" grep -q "\"$key\"" "$tmp/out.json"
done
check "--seed is reported" bash -c "'$bin' run '$src/scenarios/ring-shift-8gpu.yaml' --json --seed 77 --set traffic.0.size=64KiB | grep -q '\"seed\": 77'"
for key in step_time_s forward_s backward_s sync_s exposed_comm_s tail_s mfu tokens_per_s buckets ready_s start_s end_s; do
  check "json has step key $key" grep -q "\"$key\"" "$tmp/out.json"
done
"$bin" run --trace "$tmp/trace.json" --set workload.model=gpt3-1.3b >"$tmp/out.txt" 2>"$tmp/err"
for event in '"name":"forward"' '"name":"backward"' '"name":"optimizer"' '"name":"process_name"' \
             '"name":"all_reduce bucket 0"' '"traceEvents"'; do
  check "--trace has $event" grep -q "$event" "$tmp/trace.json"
done
"$bin" run "$src/scenarios/ring-shift-8gpu.yaml" --trace "$tmp/t2.json" >/dev/null 2>"$tmp/err"
check "--trace without a workload exits 2" test $? -eq 2
"$bin" run >"$tmp/out.txt" 2>"$tmp/err"
check "default run prints the step breakdown" grep -q "^mfu" "$tmp/out.txt"

# Bad input: one line file:line:col: path: message, exit code 2.
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
"$bin" run "$tmp/bad.yaml" >"$tmp/out" 2>"$tmp/err"
check "bad unit exits 2" test $? -eq 2
check "bad unit names file:line:col and path" grep -q "bad.yaml:6:.*fabric.links.host.bandwidth" "$tmp/err"
check "bad input prints one line" test "$(wc -l <"$tmp/err")" -eq 1

"$bin" run "$tmp/missing.yaml" >/dev/null 2>"$tmp/err"
check "missing file exits 2" test $? -eq 2
"$bin" run --set 'nonsense' >/dev/null 2>"$tmp/err"
check "malformed --set exits 2" test $? -eq 2
"$bin" run "$src/scenarios/ring-shift-8gpu.yaml" --set fabric.spine_leaf.leaves=0 >/dev/null 2>"$tmp/err"
check "0 leaves exits 2" test $? -eq 2
check "0 leaves names the path" grep -q "fabric.spine_leaf.leaves" "$tmp/err"
"$bin" run --no-such-flag >/dev/null 2>"$tmp/err"
check "unknown flag exits 2" test $? -eq 2
"$bin" frobnicate >/dev/null 2>"$tmp/err"
check "unknown command exits 2" test $? -eq 2

# `collective`: nccl-tests' table, NCCL's cost model alone, the scenario's collective section.
"$bin" collective "$src/scenarios/ring-next-leaf-128.yaml" --set fidelity=analytic -b 1M -e 4M >"$tmp/coll" 2>"$tmp/err"
check "collective exits 0" test $? -eq 0
check "collective prints nccl-tests' footer" grep -q "^# Avg bus bandwidth" "$tmp/coll"
"$bin" collective "$src/scenarios/ring-next-leaf-128.yaml" --model nccl -b 8 -e 8G --json >"$tmp/coll" 2>"$tmp/err"
check "collective --model nccl exits 0" test $? -eq 0
"$bin" collective "$src/scenarios/ring-next-leaf-128.yaml" --set collective.protocol=LL64 >/dev/null 2>"$tmp/err"
check "bad collective.protocol exits 2" test $? -eq 2
check "bad collective.protocol names the path" grep -q "collective.protocol" "$tmp/err"

# Reference scenarios parse and analytic fidelity runs them quickly.
for f in "$src"/scenarios/*.yaml; do
  "$bin" run "$f" --set fidelity=analytic --json >/dev/null 2>"$tmp/err"
  check "$(basename "$f") runs (analytic)" test $? -eq 0
done

# Sweep: --set with a list is an axis; step columns and the best point for workload scenarios.
"$bin" sweep "$src/scenarios/bucket-size-study.yaml" --set workload.ddp.bucket_cap_mb=25,256 \
  --set workload.micro_batch=1 --no-wall --out "$tmp/sweep.json" >"$tmp/sweep.out" 2>"$tmp/sweep.err"
check "sweep with --set lists exits 0" test $? -eq 0
check "sweep --out writes JSON rows with step_time_s" test "$(grep -c '"step_time_s"' "$tmp/sweep.json")" -eq 2
check "sweep names the best point" grep -q "best point .*workload.ddp.bucket_cap_mb=" "$tmp/sweep.err"
"$bin" sweep "$src/scenarios/bucket-size-study.yaml" --no-wall --quiet >"$tmp/sweep2.csv" 2>/dev/null
check "sweep FILE runs the scenario's own sweep block" test "$(wc -l <"$tmp/sweep2.csv")" -eq 8

# Time series: --timeseries DIR writes queue and flow CSVs; a bad port name exits 2.
"$bin" run "$src/scenarios/incast-dcqcn.yaml" --timeseries "$tmp/ts" --json >"$tmp/ts.json" 2>"$tmp/err"
check "--timeseries exits 0" test $? -eq 0
check "--timeseries writes queues.csv" grep -q "^0,leaf0->host0.nic0,0,0" "$tmp/ts/queues.csv"
check "--timeseries writes flows.csv" grep -q "^time_s,flow,src,dst,rate_bps,delivered_bytes" "$tmp/ts/flows.csv"
check "--json has flow_rates" grep -q '"flow_rates"' "$tmp/ts.json"
"$bin" run "$src/scenarios/incast-dcqcn.yaml" --timeseries "$tmp/ts2" --set 'observe.ports=["nowhere"]' >/dev/null 2>"$tmp/err"
check "bad observe port exits 2" test $? -eq 2
check "bad observe port names the key" grep -q "observe.ports" "$tmp/err"

# PFC deadlock: detected, reported in JSON, the run stops (exit 0: a result, not an error).
"$bin" run "$src/scenarios/pfc-deadlock.yaml" --json >"$tmp/dl.json" 2>"$tmp/err"
check "pfc-deadlock exits 0" test $? -eq 0
check "pfc-deadlock reports the deadlock" grep -q '"detected": true' "$tmp/dl.json"

echo "cli: $passes passed, $fails failed"
test "$fails" -eq 0

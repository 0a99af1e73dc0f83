#!/usr/bin/env bash
# Fidelities agree where they should: each collective validation case's scenario, and RoCE staged
# through host memory and TCP on a 64-rank 2:1 spine-leaf fabric with a NIC per GPU, as an all_reduce on the idle
# fabric at packet, flow and analytic fidelity (`syncsim collective`, nccl-tests' bus bandwidth).
# Tolerances, per pair:
#   flow vs packet: within 5 %. Both share links
#     between the transfers in flight (flow: max-min fair fluid rates; packet: per-packet round
#     robin at every port); on an idle fabric they differ only by queueing and by per-packet
#     effects, a few percent at these sizes.
#   analytic vs packet: analytic >= 0.98 x packet. Analytic gives every transfer its idle-path
#     time (no link is shared between the transfers of different NIC pairs), so it is never
#     slower, only faster where links are shared (oversubscribed uplinks, NVLink ports shared by
#     channels); the 2 % absorbs its per-pair FIFO approximation. No upper bound: it is the
#     contention-free bound, and docs/fidelities.md gives how far above it lies per case.
# usage: test_fidelities.sh SYNCSIM_BINARY SOURCE_DIR
set -u
bin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
tol=0.05  # flow vs packet, relative (check)

busbw() {  # SCENARIO SIZE FIDELITY [--set ...]: the run's bus bandwidth in GB/s
  local scenario=$1 size=$2 fidelity=$3
  shift 3
  "$bin" collective "$scenario" --op all_reduce -b "$size" -e "$size" --set "fidelity=$fidelity" \
    "$@" 2>"$tmp/err" | awk '/Avg bus bandwidth/ {print $NF}'
}

check() {  # NAME SCENARIO SIZE [--set ...]
  local name=$1 scenario=$2 size=$3
  shift 3
  local p f a
  p=$(busbw "$scenario" "$size" packet "$@")
  f=$(busbw "$scenario" "$size" flow "$@")
  a=$(busbw "$scenario" "$size" analytic "$@")
  if [ -z "$p" ] || [ -z "$f" ] || [ -z "$a" ]; then
    fail "$name: no bus bandwidth (packet '$p', flow '$f', analytic '$a')"
    cat "$tmp/err"
    return
  fi
  echo "$name $size: packet $p flow $f analytic $a GB/s"
  last_packet=$p
  last_flow=$f
  awk -v p="$p" -v f="$f" -v t="$tol" 'BEGIN { d = (f - p) / p; exit !(d <= t && d >= -t) }' ||
    fail "$name: flow $f GB/s is not within $tol of packet $p GB/s"
  awk -v p="$p" -v a="$a" 'BEGIN { exit !(a >= 0.98 * p) }' ||
    fail "$name: analytic $a GB/s is below 0.98 x packet $p GB/s"
}

# The collective validation cases (validation/*.yaml, group collectives), at 64 MiB.
check dgx-h100-allreduce "$src/scenarios/default.yaml" 64MiB \
  --set fabric.rail_optimized.hosts_per_group=1
check dgx-h100-allreduce-ring "$src/scenarios/default.yaml" 64MiB \
  --set fabric.rail_optimized.hosts_per_group=1 --algo ring
# One rack: a ring, and NVLS (auto) at 16 MiB (about 1 s at packet fidelity). At packet fidelity
# the NVLS engine writes into the NVSwitch's GPU ports per destination (sim/net/in_switch_engine.hpp);
# as one lossless port it paused itself whenever one GPU port filled, and read 35 % below flow here.
check gb200-nvl72-allreduce-ring "$src/scenarios/gb200-nvl72.yaml" 64MiB \
  --set fabric.spine_leaf.leaves=1 --set traffic=null --algo ring
check gb200-nvl72-allreduce-nvls "$src/scenarios/gb200-nvl72.yaml" 16MiB \
  --set fabric.spine_leaf.leaves=1 --set traffic=null --algo nvls
# At 32 MiB (1.5 s) the GPUs' own NVLinks matter: while an NVSwitch ran PFC with headroom per port
# and class (73 x 8 of them, more than its buffer), every GPU link sat at XOFF 0 and flow read
# 5.5 % above packet here; NVLink's credits (sim/net/nvlink_credits.hpp) bring it within 2 %.
check gb200-nvl72-allreduce-nvls "$src/scenarios/gb200-nvl72.yaml" 32MiB \
  --set fabric.spine_leaf.leaves=1 --set traffic=null --algo nvls
# SHARP on 8 NDR nodes (the case's CollNet Chain and the ring on its scenario). When the NVSwitch
# ran PFC with the fabric's 1 us response time in its headroom, the QM9700-class buffer left every
# NVLink port at XOFF 0 and packet read half of flow here; NVLink now runs credits.
check h100-ndr-sharp-allreduce "$src/scenarios/ib-sharp.yaml" 32MiB --algo collnet_chain
check h100-ndr-sharp-allreduce-ring "$src/scenarios/ib-sharp.yaml" 32MiB --algo ring
# CollNet Direct there, 128 MiB (about 11 s at packet). A SHARP engine was an ordinary
# credit-based InfiniBand port of its switch at packet fidelity: its packets for one busy 400G
# port (a tree's uplink, a head's downlink) held the engine link's credits and its other
# destinations waited behind them (the first packet of an engine's transfer waited 5.5 us on
# average); packet read 330.7 against flow's 394.0 (-16 %). It now writes into its switch's ports
# per destination as the NVLS engine does (sim/net/in_switch_engine.hpp): -0.1 %.
check h100-ndr-sharp-allreduce-direct "$src/scenarios/ib-sharp.yaml" 128MiB --algo collnet_direct
# Two GB200 racks (144 GPUs; auto = NVLS-tree: NVLS in each rack, a tree between the racks'
# heads), 128 MiB (about 20 s at packet). The packet engine served its flows round robin from one
# shared position: with most GPU ports full that favoured a few flows per port, a head's reduced
# slice waited up to 180 us behind other channels' multicasts, and packet read 3.7 % below flow
# (6.4 % at 256 MiB). It now serves them least recently served first, round robin per destination
# (sim/net/nic.hpp): -1.1 % (-4.0 % at 256 MiB).
check gb200-nvl72-2racks-allreduce-nvls-tree "$src/scenarios/gb200-nvl72.yaml" 128MiB

# 64 ranks (8 hosts of 8 H100) on a 2:1 spine-leaf, 256 MiB, without GPUDirect.
staged() {  # NICS: the scenario file for 8 hosts of 8 GPUs with NICS 400G NICs each
  cat >"$tmp/staged-$1.yaml" <<YAML
name: staged-64
seed: 1
fidelity: flow
fabric:
  topology: spine_leaf
  spine_leaf: {leaves: 2, hosts_per_leaf: 4, oversubscription: 2}
  host: {gpus: 8, nics: $1}
  links:
    host:   {bandwidth: 400Gbps, delay: 500ns, mtu: 4096B, header: 64B}
    fabric: {bandwidth: 400Gbps, delay: 1us,   mtu: 4096B, header: 64B}
    nvlink: {delay: 100ns, mtu: 4096B, header: 32B}
  switch: {buffer: 64MiB, priorities: 8}
workload: {model: llama3-8b, gpu: h100, micro_batch: 1, algorithm: ring}
YAML
  echo "$tmp/staged-$1.yaml"
}
# One NIC per GPU (DGX H100): the copies of 16 channels spread over the 8 PCIe switches.
# Closed form: a ring's bus bandwidth B is also each host's staged rate per direction, bounded by
# min(host memory / 2, PCIe switches x PCIe, NICs x link) = min(2400 / 2, 8 x 512, 8 x 400) Gb/s
# = 150 GB/s; the copy latency and the pipeline's fill take some of it (at least 85 % here).
# (One stage per host for all 8 GPUs would cap it at the 64 GB/s of one PCIe x16.)
for kind in roce_host_staged tcp; do
  check "$kind 64 ranks 2:1, 8 NICs" "$(staged 8)" 256MiB --set "fabric.transport.kind=$kind" \
    --algo ring
  awk -v p="${last_packet:-0}" 'BEGIN { exit !(p <= 150 && p >= 0.85 * 150) }' ||
    fail "$kind, 8 NICs: packet ${last_packet:-?} GB/s, expected 127.5..150 GB/s (host memory bound)"
done
# One NIC per host: 4 channels share the NIC, each with 4 slices of 1 MiB in flight (NCCL's
# proxy posts a slice at a time), so the copies of one slice overlap the network time of the
# others and the NIC's 50 GB/s bounds the ring (closed form: at most 400 Gb/s x 4096 / 4160 =
# 49.2 GB/s, at least 85 % of it).
for kind in roce_host_staged tcp; do
  check "$kind 64 ranks 2:1, 1 NIC" "$(staged 1)" 256MiB --set "fabric.transport.kind=$kind" \
    --algo ring
  awk -v p="${last_packet:-0}" 'BEGIN { exit !(p <= 49.3 && p >= 0.85 * 49.2) }' ||
    fail "$kind, 1 NIC: packet ${last_packet:-?} GB/s, expected 41.8..49.2 GB/s (NIC bound)"
done
# 64 hosts of one GPU and one NIC each (auto picks LL128): every ring hop is staged, and a step's
# 1 MiB segment per channel is 2 pieces, so the 4 channels' pieces are all that keep the NIC busy
# while the others copy. How well the copies overlap the network depends on how far the channels
# are out of phase; fluid sharing alone would hold them in lockstep (equal pieces at equal rates
# finish together), so flow starts a NIC's staged transfers one packet apart, as the packet model's
# NIC sends them (sim/backends/host_staging.hpp). Closed form: the NIC bounds the ring at 400 Gb/s
# x 4096 / 4160 x 120 / 128 (LL128's payload per line) = 46.2 GB/s; the copies (64 GB/s of PCIe
# per direction) do not. Packet and flow reach at least 85 % of it. Flow reads 45.1 against
# packet's 41.9 (+7.6 %), a phase effect flow cannot follow (docs/fidelities.md): each channel keeps
# two pieces in flight per hop, about what covers a hop's copies and network time, so the result
# depends on how far the channels' copies are out of phase. Fluid sharing drifts the channels
# apart (the first 4 transfers, started a packet apart, end 7 packet times apart; round robin ends
# them within 2) into a state where the NIC never idles after the first 1.3 ms; the packet NIC
# keeps them close and their phases wander (host cables of 400 / 500 / 600 ns: packet 38.6 / 41.9 / 39.6, flow
# 45.1 each). Spacing a queue pair's next transfer a packet after its predecessor drains (packet
# does not) gives 44.4. Since queue pairs are numbered in the communicator's setup order (their
# ECMP paths over the 2:1 uplinks with them) packet reads 40.0 at 500 ns. The pair tolerance covers
# the wander measured (flow 45.1 against packet 38.6: 17 %); the bound that holds both to the NIC's
# closed form is the check after it.
tol=0.17
check "roce_host_staged 64 hosts x 1 GPU" "$(staged 1)" 256MiB \
  --set fabric.transport.kind=roce_host_staged --set fabric.host.gpus=1 \
  --set fabric.spine_leaf.hosts_per_leaf=32 --algo ring
awk -v p="${last_packet:-0}" -v f="${last_flow:-0}" \
  'BEGIN { exit !(p <= 46.2 && p >= 0.85 * 46.2 && f <= 46.2 && f >= 0.85 * 46.2) }' ||
  fail "roce_host_staged, 64 x 1 GPU: packet ${last_packet:-?}, flow ${last_flow:-?} GB/s," \
    "expected 39.3..46.2 GB/s (NIC bound)"
# TCP there: packet TCP keeps a connection's window across its messages, as a busy Linux socket
# does (sim/net/tcp_connection.hpp), so after the first messages the window no longer limits it;
# flow has no window. Packet also carries an ACK per segment (64 B per 4160 B, 1.5 % of each NIC's
# transmit) that flow does not. Flow was 5.1 % above packet until a connection's messages left in
# order (sim/net/send_queue.hpp); now -1.0 % (docs/fidelities.md): the RoCE tolerance.
tol=0.05
check "tcp 64 hosts x 1 GPU" "$(staged 1)" 256MiB \
  --set fabric.transport.kind=tcp --set fabric.host.gpus=1 \
  --set fabric.spine_leaf.hosts_per_leaf=32 --algo ring

if [ "$fails" -gt 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
echo "fidelities agree"

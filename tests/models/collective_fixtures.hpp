#pragma once
// Fixtures shared by the collective tests (plans, runner, pipelining, rails).
#include <cstdint>
#include <vector>

#include "models/collective_plan.hpp"
#include "models/gpu.hpp"
#include "models/step_sim.hpp"
#include "models/transformer.hpp"
#include "sim/core/units.hpp"
#include "topologies/fabric_builder.hpp"
#include "topologies/fabric_params.hpp"

namespace syncsim::collective_fixtures {

// Rank r on GPU r.
inline std::vector<uint32_t> identity(uint32_t n) {
  std::vector<uint32_t> v(n);
  for (uint32_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

// Plan options for `op` by `algo` over `ranks` ranks on one host of them (gpus_per_host = ranks;
// callers change it for several hosts), `channels` channels, NCCL Simple's 2 in flight per
// connection.
inline models::PlanOptions plan_options(models::CollectiveOp op, models::CollectiveAlgo algo,
                                        uint32_t ranks, int64_t bytes, uint32_t channels) {
  models::PlanOptions o;
  o.op = op;
  o.algo = algo;
  o.ranks = ranks;
  o.bytes = bytes;
  o.channels = channels;
  o.gpus_per_host = ranks;
  o.connection_depth = 2;
  return o;
}

// `leaves` leaves with one single-GPU host each and one spine, every link at `bw` with `delay`:
// every pair of ranks is 4 hops apart over identical links.
inline topo::FabricParams one_host_per_leaf(uint32_t leaves, Bandwidth bw, Time delay) {
  topo::FabricParams p;
  p.kind = topo::TopologyKind::SpineLeaf;
  p.spine_leaf.leaves = leaves;
  p.spine_leaf.hosts_per_leaf = 1;
  p.spine_leaf.spines = 1;
  for (net::LinkParams* l : {&p.links.host, &p.links.fabric}) {
    l->bandwidth = bw;
    l->delay = delay;
    l->mtu = Bytes{4096};
    l->header = Bytes{64};
  }
  p.switch_params.buffer = Bytes{64 << 20};
  return p;
}

// One host of `gpus` GPUs on an NVSwitch (with or without NVLink SHARP), NVLink at `nvlink`.
inline topo::FabricParams nvswitch_host(uint32_t gpus, Bandwidth nvlink, bool nvls = true) {
  topo::FabricParams p;
  p.kind = topo::TopologyKind::SpineLeaf;
  p.spine_leaf.leaves = 1;
  p.spine_leaf.hosts_per_leaf = 1;
  p.spine_leaf.spines = 1;
  p.host.gpus = gpus;
  p.host.nics = 1;
  p.host.nvls = nvls;
  p.links.nvlink.bandwidth = nvlink;
  p.switch_params.buffer = Bytes{64 << 20};
  return p;
}

// 4 leaves of 2 single-GPU hosts, 2 spines, 100G, cables of `delay`: a windowed packet run's
// partitions are one leaf each.
inline net::NetworkSpec four_leaves(Time delay = Time::us(1)) {
  topo::FabricParams p;
  p.kind = topo::TopologyKind::SpineLeaf;
  p.spine_leaf.leaves = 4;
  p.spine_leaf.hosts_per_leaf = 2;
  p.spine_leaf.spines = 2;
  for (net::LinkParams* l : {&p.links.host, &p.links.fabric}) {
    l->bandwidth = Bandwidth::gbps(100);
    l->delay = delay;
    l->mtu = Bytes{4096};
    l->header = Bytes{64};
  }
  p.switch_params.buffer = Bytes{64 << 20};
  return topo::build_fabric(p);
}

// A small model on H100s for a step's tests: ~6.6 M parameters (13 MB of gradients).
inline void small_gpt_on_h100(models::StepConfig& c) {
  c.model = *models::transformer_preset("gpt3-1.3b");
  c.model.layers = 2;
  c.model.hidden = 512;
  c.model.ffn = 2048;
  c.model.heads = c.model.kv_heads = 8;
  c.model.vocab = 1000;
  c.gpu = *models::gpu_preset("h100");
}

}  // namespace syncsim::collective_fixtures

#pragma once
// Fixtures shared by the training-step tests (DDP, FSDP, tensor/context/pipeline parallelism).
#include <cstdint>
#include <numeric>
#include <string>

#include "models/fsdp.hpp"
#include "models/gpu.hpp"
#include "models/step_sim.hpp"
#include "models/transformer.hpp"
#include "sim/backends/make_backend.hpp"
#include "topologies/fabric_builder.hpp"

namespace syncsim::step_fixtures {

// `hosts` hosts on two leaves and hosts/2 spines, every link at `bw` (non-blocking).
inline topo::FabricParams two_leaf_params(uint32_t hosts, Bandwidth bw) {
  topo::FabricParams p;
  p.spine_leaf.leaves = 2;
  p.spine_leaf.hosts_per_leaf = hosts / 2;
  p.spine_leaf.spines = hosts / 2;
  p.links.host.bandwidth = bw;
  p.links.fabric.bandwidth = bw;
  return p;
}

inline net::NetworkSpec two_leaf_fabric(uint32_t hosts, Bandwidth bw) {
  return topo::build_fabric(two_leaf_params(hosts, bw));
}

// `hosts` hosts of 8 GPUs with 8 NICs (one per GPU) on two leaves and 4 spines, every link at
// `bw`, NVLink inside a host: the fabric of the model-parallel step tests.
inline topo::FabricParams eight_gpu_host_params(uint32_t hosts, Bandwidth bw) {
  topo::FabricParams p = two_leaf_params(hosts, bw);
  p.spine_leaf.spines = 4;
  p.host.gpus = 8;
  p.host.nics = 8;
  return p;
}

inline net::NetworkSpec eight_gpu_hosts(uint32_t hosts, Bandwidth bw = Bandwidth::gbps(400)) {
  return topo::build_fabric(eight_gpu_host_params(hosts, bw));
}

// The step's first collective row of `kind` ("tp_all_gather", ...), or nullptr.
inline const models::CollectiveTiming* collective_row(const models::StepResult& r,
                                                      const std::string& kind) {
  for (const auto& c : r.collectives) {
    if (c.kind == kind) return &c;
  }
  return nullptr;
}

// A step of `model` on H100s, rank r on GPU r.
inline models::StepConfig step_config(const char* model, uint32_t ranks) {
  models::StepConfig c;
  c.model = *models::transformer_preset(model);
  c.gpu = *models::gpu_preset("h100");
  c.rank_to_gpu.resize(ranks);
  std::iota(c.rank_to_gpu.begin(), c.rank_to_gpu.end(), 0u);
  return c;
}

// One step of `c` on a fresh backend of `fidelity` over `spec`: the FSDP engine for FSDP, else DDP.
inline models::StepResult run_step(const net::NetworkSpec& spec, Fidelity fidelity,
                                   const models::StepConfig& c) {
  Simulation sim(c.seed);
  auto backend = make_backend(fidelity, sim, spec);
  return c.parallelism == models::DataParallelism::Fsdp
             ? models::simulate_fsdp_step(*backend, spec, fidelity, c)
             : models::simulate_ddp_step(*backend, spec, fidelity, c);
}

}  // namespace syncsim::step_fixtures

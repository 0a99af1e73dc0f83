#include "app/collective_cmd.hpp"

#include <algorithm>
#include <cctype>
#include <memory>

#include "app/scenario_loader.hpp"
#include "app/units.hpp"
#include "sim/backends/analytic_backend.hpp"
#include "sim/backends/make_backend.hpp"
#include "sim/backends/packet_backend.hpp"
#include "topologies/fabric_builder.hpp"

namespace syncsim::app {

int64_t parse_size_flag(std::string_view text) {
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits > 0 && digits + 1 >= text.size() && digits <= 15) {
    int64_t value = 0;
    for (std::size_t i = 0; i < digits; ++i) value = value * 10 + (text[i] - '0');
    if (digits == text.size()) return value;
    switch (std::toupper(static_cast<unsigned char>(text[digits]))) {
      case 'K': return value << 10;
      case 'M': return value << 20;
      case 'G': return value << 30;
      case 'T': return value << 40;
      default: break;
    }
  }
  return parse_bytes(text).count();
}

CollectiveSweep run_collective_sweep(const Scenario& scenario, const CollectiveSweepOptions& o) {
  using models::CollectiveAlgo;
  using models::CollectiveOp;
  const net::NetworkSpec spec = topo::build_fabric(scenario.fabric);
  const auto gpus = static_cast<uint32_t>(spec.gpus.size());
  const uint32_t n = o.ranks == 0 ? gpus : o.ranks;
  if (n < 2 || n > gpus) {
    throw CollectiveUsageError("--ranks " + std::to_string(n) + ": the fabric has " +
                               std::to_string(gpus) + " GPUs and a collective needs at least 2");
  }
  if (o.step_factor < 2) throw CollectiveUsageError("--step-factor must be at least 2");
  if (o.min_bytes < 0 || o.max_bytes < o.min_bytes) {
    throw CollectiveUsageError("--min-bytes must be >= 0 and <= --max-bytes");
  }
  const bool pairwise_op = o.op == CollectiveOp::AllToAll || o.op == CollectiveOp::SendRecv;
  const CollectiveAlgo algo = o.algo ? *o.algo : (pairwise_op ? CollectiveAlgo::Pairwise : CollectiveAlgo::Ring);
  std::vector<uint32_t> rank_to_gpu(n);
  for (uint32_t r = 0; r < n; ++r) rank_to_gpu[r] = r;

  // NCCL cost-model inputs from the fabric: ranks fill hosts in order; per-channel bandwidths are
  // the NVLink and per-GPU NIC bandwidths split over the channels.
  models::NcclCostInputs cost;
  cost.op = o.op;
  const uint32_t g = std::max(1u, scenario.fabric.host.gpus);
  cost.gpus_per_node = std::min(n, g);
  cost.nodes = (n + g - 1) / g;
  cost.channels = o.channels;
  const double nic_share = static_cast<double>(std::min(scenario.fabric.host.nics, g)) / g;
  cost.bw_intra = scenario.fabric.links.nvlink.bandwidth.bytes_per_second() / 1e9 / o.channels;
  cost.bw_inter =
      scenario.fabric.links.host.bandwidth.bytes_per_second() * nic_share / 1e9 / o.channels;

  CollectiveSweep sweep;
  NcclTestsHeader& h = sweep.header;
  h.program = nccl_tests_program(o.op);
  h.ngpus = static_cast<int>(n);
  h.min_bytes = o.min_bytes;
  h.max_bytes = o.max_bytes;
  h.step_factor = o.step_factor;
  const std::string fidelity = fidelity_name(scenario.fidelity);
  for (uint32_t r = 0; r < n; ++r) {
    const net::GpuAttachment& a = spec.gpus[rank_to_gpu[r]];
    h.devices.push_back(device_line(static_cast<int>(r), "host" + std::to_string(a.host),
                                    static_cast<int>(a.local_index),
                                    "syncsim " + fidelity + " GPU " + std::to_string(rank_to_gpu[r])));
  }

  for (int64_t size = o.min_bytes;; size *= o.step_factor) {
    const int64_t bytes = nccl_tests_size(o.op, n, size);
    models::PlanOptions po;
    po.op = o.op;
    po.algo = algo;
    if (o.auto_algo && !pairwise_op) po.algo = models::nccl_choose(cost, bytes).algo;
    po.ranks = n;
    po.bytes = bytes;
    po.channels = o.channels;
    po.chunk_bytes = o.chunk_bytes;
    po.root = o.root;
    po.peer = (o.root + 1) % n;
    po.gpus_per_host = scenario.fabric.host.gpus;
    models::CollectivePlan plan;
    try {
      plan = models::build_plan(po);
    } catch (const std::invalid_argument& e) {
      throw CollectiveUsageError(e.what());
    }
    // The symbolic check holds n counters per (rank, chunk); skip it (validation: 0 in the header)
    // when that would exceed ~64 Mi counters.
    int64_t wrong = 0;
    const double counters = static_cast<double>(n) * n * static_cast<double>(plan.chunk_bytes.size());
    if (counters <= double{1 << 26}) {
      wrong = models::verify_plan(plan).ok ? 0 : 1;
    } else {
      h.validation = 0;
    }
    Simulation sim(scenario.seed);
    std::unique_ptr<TransferBackend> backend = make_backend(scenario.fidelity, sim, spec);
    const auto result = models::run_collective(*backend, plan, rank_to_gpu, o.run);
    sweep.rows.push_back(make_row(o.op, n, bytes, result.duration().microseconds(),
                                  static_cast<int>(o.root), wrong));
    sweep.rows.back().algorithm = std::string(to_string(po.algo));
    if (size == 0 || size > o.max_bytes / o.step_factor) break;
  }
  return sweep;
}

}  // namespace syncsim::app

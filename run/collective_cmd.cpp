#include "run/collective_cmd.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <memory>

#include "models/collective_backend.hpp"
#include "models/nccl_setup.hpp"
#include "run/calibrated_collective.hpp"
#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"
#include "scenario/units.hpp"
#include "sim/backends/analytic_backend.hpp"
#include "sim/backends/make_backend.hpp"
#include "sim/backends/packet_backend.hpp"
#include "sim/core/parallel_for.hpp"
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
      case 'K':
        return value << 10;
      case 'M':
        return value << 20;
      case 'G':
        return value << 30;
      case 'T':
        return value << 40;
      default:
        break;
    }
  }
  return parse_bytes(text).count();
}

CollectiveSweep run_collective_sweep(const Scenario& scenario, const CollectiveSweepOptions& o) {
  using models::CollectiveAlgo;
  using models::CollectiveOp;
  const net::NetworkSpec spec = scenario_network(scenario);
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
  const models::CollectiveConfig& cfg = scenario.collective;
  if (o.channels && *o.channels < 1) throw CollectiveUsageError("--channels must be at least 1");
  models::NcclChannels nccl_channels;
  try {
    nccl_channels = scenario_nccl_channels(scenario, n, o.channels);
  } catch (const std::invalid_argument& e) {
    throw CollectiveUsageError(e.what());
  }
  const uint32_t channels = nccl_channels.channels;
  // Algorithm: flag, else the scenario's; auto when neither names one.
  // (Plain flag + value rather than std::optional: GCC's -Wmaybe-uninitialized misfires on it.)
  const bool algo_fixed = pairwise_op || (!o.auto_algo && (o.algo || cfg.algorithm));
  CollectiveAlgo fixed_algo = CollectiveAlgo::Pairwise;
  if (!pairwise_op && algo_fixed) fixed_algo = o.algo ? *o.algo : *cfg.algorithm;
  const bool proto_fixed = !o.auto_protocol && (o.protocol || cfg.protocol);
  models::NcclProtocol fixed_proto = models::NcclProtocol::Simple;
  if (proto_fixed) fixed_proto = o.protocol ? *o.protocol : *cfg.protocol;
  CollectiveSweep sweep;
  if (algo_fixed && models::is_nvls(fixed_algo) && nccl_channels.nvls_heads == 0) {
    throw CollectiveUsageError(
        std::string(to_string(fixed_algo)) +
        " needs NVLink SHARP: GPUs with a reducing NVSwitch (h100, h200, b200, gb200), two or "
        "more per host and, across hosts, a NIC for each of two or more of them");
  }
  std::vector<uint32_t> rank_to_gpu(n);
  for (uint32_t r = 0; r < n; ++r) rank_to_gpu[r] = r;
  // SHARP: one aggregation tree per NIC rail over the collective's hosts, as sharp_am builds them;
  // CollNet is off (as NCCL falls back when SHARP has no resources) when they do not fit.
  net::RailTrees rail = net::usable_rail_trees(spec, rank_to_gpu, scenario.fabric.host.gpus,
                                               scenario.fabric.host.nics);
  std::vector<net::AggregationTree> collnet_trees = std::move(rail.trees);
  const std::string collnet_off = rail.unavailable;
  if (!collnet_off.empty()) {
    nccl_channels.collnet_heads = 0;
    collnet_trees.clear();
  }
  sweep.collnet_unavailable = collnet_off;
  if (algo_fixed && models::is_collnet(fixed_algo) && !collnet_off.empty()) {
    throw CollectiveUsageError(std::string(to_string(fixed_algo)) + " " + collnet_off);
  }
  if (algo_fixed && fixed_algo == CollectiveAlgo::Nvls && n > scenario.fabric.host.gpus &&
      !collnet_off.empty()) {
    throw CollectiveUsageError(
        "nvls across hosts reduces between them in SHARP switches (else "
        "NCCL runs nvls_tree); " +
        collnet_off);
  }

  // NCCL cost-model inputs from the fabric (ranks fill hosts in order).
  const models::NcclCostInputs cost =
      models::nccl_cost_inputs(o.op, n, scenario.fabric.host.gpus, nccl_channels);

  sweep.channels = nccl_channels;
  NcclTestsHeader& h = sweep.header;
  h.program = nccl_tests_program(o.op);
  h.ngpus = static_cast<int>(n);
  h.min_bytes = o.min_bytes;
  h.max_bytes = o.max_bytes;
  h.step_factor = o.step_factor;
  const std::string fidelity = o.nccl_model ? "nccl_model" : fidelity_name(scenario.fidelity);
  for (uint32_t r = 0; r < n; ++r) {
    const net::GpuAttachment& a = spec.gpus[rank_to_gpu[r]];
    h.devices.push_back(device_line(
        static_cast<int>(r), "host" + std::to_string(a.host), static_cast<int>(a.local_index),
        "syncsim " + fidelity + " GPU " + std::to_string(rank_to_gpu[r])));
  }

  // One row per size, each a simulation of its own: run on o.threads threads into their slots,
  // then appended in size order (and the header's validation cleared if any size skipped it).
  // At packet level each size's fabric runs as partitions in windows (partition_windows.hpp), on
  // the threads the sizes leave over (all of them for one size); the partitions do not depend on
  // the thread count, so neither does any row.
  const std::vector<int64_t> sizes = collective_sweep_sizes(o);
  const auto partition_threads = static_cast<uint32_t>(
      std::max<std::size_t>(1, o.threads / std::max<std::size_t>(1, sizes.size())));
  std::vector<NcclTestsRow> rows(sizes.size());
  std::vector<char> unverified(sizes.size(), 0);
  parallel_for(sizes.size(), o.threads, [&](std::size_t index) {
    NcclTestsRow& out = rows[index];
    const int64_t bytes = nccl_tests_size(o.op, n, sizes[index]);
    // The (algorithm, protocol) for this size: fixed ones as given, auto ones by NCCL's cost model
    // (the algorithm among ring/tree, the protocol for the chosen algorithm's row).
    const CollectiveAlgo algo = algo_fixed ? fixed_algo : models::nccl_choose(cost, bytes).algo;
    models::NcclProtocol proto = models::NcclProtocol::Simple;
    if (proto_fixed) {
      proto = fixed_proto;
    } else if (!pairwise_op) {
      proto = models::nccl_best_protocol(algo, cost, bytes);
    }
    if (o.nccl_model) {
      const double t = models::nccl_predicted_time_us(algo, proto, cost, bytes);
      if (pairwise_op || t < 0) {
        throw CollectiveUsageError(
            "the nccl model covers ring (all_reduce, reduce_scatter, "
            "all_gather, broadcast, reduce), tree (all_reduce), nvls (all_reduce, reduce_scatter, "
            "all_gather in one NVLink domain; all_reduce across hosts with SHARP), nvls_tree "
            "(all_reduce across hosts), pat "
            "(all_gather, reduce_scatter at "
            "one GPU per node), collnet_direct (all_reduce, and reduce_scatter / all_gather with a "
            "NIC per GPU) and collnet_chain (all_reduce), not " +
            std::string(to_string(algo)) + " " + std::string(to_string(o.op)));
      }
      out = make_row(o.op, n, bytes, t, static_cast<int>(o.root), 0);
    } else {
      models::NcclCollective c;
      c.op = o.op;
      c.algo = algo;
      c.protocol = proto;
      c.ranks = n;
      c.bytes = bytes;
      // NVLS runs on its own CTAs (NCCL_NVLS_NCHANNELS), not on the ring's channels.
      c.channels = models::is_nvls(algo) ? nccl_channels.nvls_channels : channels;
      c.nvls_heads = nccl_channels.nvls_heads;
      c.nvls_link_efficiency = nccl_channels.nvls_link_efficiency;
      // CollNet, and NVLS across hosts (its reduction between hosts runs in SHARP).
      if (models::is_collnet(algo) ||
          (algo == CollectiveAlgo::Nvls && n > scenario.fabric.host.gpus)) {
        c.collnet_trees = collnet_trees;
        c.collnet_outstanding = spec.sharp.outstanding_operations;
      }
      c.chunk_bytes = o.chunk_bytes;
      c.root = o.root;
      c.gpus_per_host = scenario.fabric.host.gpus;
      c.nics_per_host = scenario.fabric.host.nics;
      models::NcclSetup setup;
      models::CollectivePlan plan;
      try {
        setup = models::nccl_setup(c, cfg, o.run);
        plan = models::build_plan(setup.plan);
      } catch (const std::invalid_argument& e) {
        throw CollectiveUsageError(e.what());
      }
      // The symbolic check holds n counters per (rank, chunk); skip it (validation: 0 in the
      // header) when that would exceed ~64 Mi counters.
      int64_t wrong = 0;
      const double counters =
          static_cast<double>(n) * n * static_cast<double>(plan.chunk_bytes.size());
      if (counters <= double{1 << 26}) {
        wrong = models::verify_plan(plan).ok ? 0 : 1;
      } else {
        unverified[index] = 1;
      }
      const auto wall_start = std::chrono::steady_clock::now();
      Simulation sim(scenario.seed);
      const models::CollectiveBackend backend = models::make_collective_backend(
          scenario.fidelity, sim, spec, plan, {rank_to_gpu}, setup.run, partition_threads);
      backend->keep_finished_records(false);  // only the result and counters are read
      backend->count_port_bytes(true);
      const auto result = models::run_collective(*backend, plan, rank_to_gpu, setup.run);
      out = make_row(o.op, n, bytes, result.duration().microseconds(), static_cast<int>(o.root),
                     wrong);
      NcclTestsRow& row = out;
      row.sim_events = sim.queue().executed() + backend->execution().partition_events;
      row.sim_packet_hops = backend->counters().packet_hops;
      row.link_load = busiest_tier(tier_loads(spec, backend->port_bytes()));
      row.sim_wall_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    }
    out.algorithm = std::string(to_string(algo));
    out.protocol = std::string(to_string(proto));
  });
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (unverified[i] != 0) h.validation = 0;
    sweep.rows.push_back(std::move(rows[i]));
  }
  return sweep;
}

std::vector<int64_t> collective_sweep_sizes(const CollectiveSweepOptions& o) {
  if (!o.sizes.empty()) return o.sizes;
  std::vector<int64_t> sizes;
  for (int64_t size = o.min_bytes;; size *= o.step_factor) {
    sizes.push_back(size);
    if (size == 0 || size > o.max_bytes / o.step_factor) break;
  }
  return sizes;
}

ReportedCollectives run_report_collectives(const Scenario& scenario) {
  ReportedCollectives out;
  if (!scenario.report) return out;
  // One single-size sweep per size, built as cmd_collective builds it from its default flags.
  auto one_size = [&](int64_t bytes) {
    CollectiveSweepOptions o;
    o.op = models::CollectiveOp::AllReduce;
    o.ranks = scenario.workload ? scenario.workload->data_parallel : 0;
    o.min_bytes = bytes;
    o.max_bytes = bytes;
    o.run.hbm_bytes_per_s = parse_bandwidth(kDefaultCollectiveHbm).bytes_per_second();
    CalibratedSweep result;
    if (scenario.collective_calibration && scenario.collective_calibration->lines_are_the_model()) {
      result = run_calibrated_sweep(scenario, o, *scenario.collective_calibration);
    } else {
      result.sweep = run_collective_sweep(scenario, o);
    }
    for (std::string& w : result.warnings) out.warnings.push_back("report: " + w);
    out.ranks = static_cast<uint32_t>(result.sweep.header.ngpus);
    out.channels = result.sweep.channels;
    return result.sweep.rows.at(0);
  };
  const NcclTestsRow small = one_size(scenario.report->allreduce_small_bytes);
  out.small_bytes = small.size;
  out.small_latency_s = small.out_of_place.time_us * 1e-6;
  const NcclTestsRow large = one_size(scenario.report->allreduce_large_bytes);
  out.large_bytes = large.size;
  out.large_time_s = large.out_of_place.time_us * 1e-6;
  out.large_busbw_GBps = large.out_of_place.busbw;
  return out;
}

}  // namespace syncsim::app

// Checks that need the whole scenario: the fabric is built (or sized), the traffic expanded and the
// workload fitted on the fabric; each error points at the deepest YAML node along its path.
#include <cstdint>
#include <string>

#include "models/traffic.hpp"
#include "scenario/section_readers.hpp"
#include "topologies/fabric_builder.hpp"

namespace syncsim::app::yaml_reader {

namespace {

// Fabrics up to this many nodes (plus routing-table bytes / 8) are built to validate them.
constexpr uint64_t kBuildToValidateLimit = 2'000'000;

}  // namespace

void validate(const Reader& in, const Scenario& scenario) {
  // The builder checks every fabric range and combination; its path is relative to `fabric.`.
  // Fabrics too big to build here (a million GPUs) are only sized: the run's memory estimate
  // refuses them with numbers instead of this check allocating gigabytes of routing tables.
  net::NetworkSpec spec;
  try {
    const topo::FabricSize size = topo::fabric_size(scenario.fabric);
    if (size.nodes + size.routing_entries / 8 < kBuildToValidateLimit) {
      spec = topo::build_fabric(scenario.fabric);
    } else {
      spec.gpus.resize(size.gpus);  // only the count is read below
    }
  } catch (const topo::TopologyError& e) {
    in.fail_path(e.path().empty() ? "fabric" : join_path("fabric", e.path()), e.what());
  }

  // A priority without an output queue would have nowhere to go in the switches (priorities is
  // known to be >= 1 once the fabric is built).
  const uint32_t classes = scenario.fabric.switch_params.priorities;
  const auto check_priority = [&](uint8_t priority, const std::string& path) {
    if (priority >= classes) {
      in.fail_path(path, "expected a priority in 0.." + std::to_string(classes - 1) +
                             " (fabric.switch.priorities is " + std::to_string(classes) +
                             "), got " + std::to_string(priority));
    }
  };
  const net::PfcParams& pfc = scenario.network.pfc;
  if (pfc.enabled && (pfc.lossless_mask >> classes) != 0) {
    in.fail_path("fabric.switch.pfc.lossless_priorities",
                 "expected lossless priorities in 0.." + std::to_string(classes - 1) +
                     " (fabric.switch.priorities is " + std::to_string(classes) + ")");
  }
  for (std::size_t i = 0; i < scenario.traffic.size(); ++i) {
    const models::TrafficSpec& t = scenario.traffic[i];
    const std::string entry = join_path("traffic", i);
    if (t.pattern != models::TrafficPattern::Explicit) {
      check_priority(t.priority, join_path(entry, "priority"));
    }
    for (std::size_t k = 0; k < t.messages.size(); ++k) {
      check_priority(t.messages[k].priority,
                     join_path(join_path(join_path(entry, "messages"), k), "priority"));
    }
  }

  // build_fabric caps the GPU count at 2^32 - 1, so the rank count fits.
  try {
    models::expand_traffic(scenario.traffic, static_cast<uint32_t>(spec.gpus.size()),
                           scenario.seed);
  } catch (const models::TrafficError& e) {
    const std::string entry = join_path("traffic", e.index());
    in.fail_path(e.path().empty() ? entry : join_path(entry, e.path()), e.what());
  }

  if (scenario.workload) {
    const WorkloadSpec& w = *scenario.workload;
    const auto gpus = static_cast<uint32_t>(spec.gpus.size());
    if (w.data_parallel > gpus) {
      in.fail_path("workload.data_parallel", "expected at most the fabric's " +
                                                 std::to_string(gpus) + " GPUs, got " +
                                                 std::to_string(w.data_parallel));
    }
    const models::ParallelLayout& lay = w.step.layout;
    const uint32_t model_parallel = lay.tensor * lay.context * lay.pipeline;
    if (model_parallel > 1) {
      const uint64_t product =
          uint64_t{model_parallel} * (w.data_parallel == 0 ? 1 : w.data_parallel);
      if (w.data_parallel == 0 && gpus % model_parallel != 0) {
        in.fail_path("workload.tensor_parallel",
                     "expected tensor_parallel x context_parallel x pipeline_parallel (" +
                         std::to_string(lay.tensor) + " x " + std::to_string(lay.context) + " x " +
                         std::to_string(lay.pipeline) + " = " + std::to_string(model_parallel) +
                         ") to divide the fabric's " + std::to_string(gpus) + " GPUs");
      }
      if (product > gpus) {
        in.fail_path(
            "workload.data_parallel",
            "expected tensor_parallel x context_parallel x pipeline_parallel x data_parallel (" +
                std::to_string(lay.tensor) + " x " + std::to_string(lay.context) + " x " +
                std::to_string(lay.pipeline) + " x " + std::to_string(w.data_parallel) + " = " +
                std::to_string(product) + ") to be at most the fabric's " + std::to_string(gpus) +
                " GPUs");
      }
    }
    const uint32_t ranks =
        (w.data_parallel == 0 ? gpus / model_parallel : w.data_parallel) * model_parallel;
    if (w.step.perturbations.straggler && *w.step.perturbations.straggler >= ranks) {
      in.fail_path("workload.perturbations.straggler.rank",
                   "expected a rank below " + std::to_string(ranks) + ", got " +
                       std::to_string(*w.step.perturbations.straggler));
    }
    if (w.step.algorithm == models::CollectiveAlgo::Hierarchical &&
        ranks % scenario.fabric.host.gpus != 0) {
      in.fail_path("workload.algorithm",
                   "hierarchical all-reduce needs whole hosts: " + std::to_string(ranks) +
                       " ranks on hosts of " + std::to_string(scenario.fabric.host.gpus) + " GPUs");
    }
    if (w.step.algorithm == models::CollectiveAlgo::Pairwise) {
      in.fail_path(
          "workload.algorithm",
          "expected an all-reduce algorithm (ring, tree, halving_doubling, hierarchical), got "
          "pairwise");
    }
  }
}

}  // namespace syncsim::app::yaml_reader

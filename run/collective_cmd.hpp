#pragma once
// `syncsim collective`: an nccl-tests-style sweep of one collective over message sizes, each size a
// fresh simulation of the scenario's fabric on the scenario's backend.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "models/collective_cost.hpp"
#include "models/collective_plan.hpp"
#include "models/collective_runner.hpp"
#include "models/nccl_channels.hpp"
#include "run/nccl_tests_format.hpp"
#include "scenario/scenario.hpp"

namespace syncsim::app {

// Bad command-line input for `collective` (exit code 2).
class CollectiveUsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Flags of `syncsim collective`. Unset optionals take the scenario's `collective:` section
// (models::CollectiveConfig, NCCL's defaults: algorithm and protocol auto, 4 MiB buffers, 8 steps).
struct CollectiveSweepOptions {
  models::CollectiveOp op = models::CollectiveOp::AllReduce;
  // An explicit algorithm, or auto_algo: each size runs the algorithm NCCL's cost model
  // (collective_cost.hpp) predicts fastest (ring or tree for all_reduce, ring for the other ring
  // ops). Neither: the scenario's choice. all_to_all and send_recv always run pairwise.
  std::optional<models::CollectiveAlgo> algo;
  bool auto_algo = false;
  // An explicit protocol, or auto_protocol: the cost model's best protocol for the algorithm.
  std::optional<models::NcclProtocol> protocol;
  bool auto_protocol = false;
  // nccl_model: no simulation; every row is the cost model's predicted time (the cheapest
  // fidelity). Ring and tree, all_reduce / reduce_scatter / all_gather / broadcast / reduce only.
  bool nccl_model = false;
  uint32_t ranks = 0;            // 0 = every GPU of the fabric
  int64_t min_bytes = 32 << 20;  // nccl-tests' defaults: -b 32M -e 32M -f 2
  int64_t max_bytes = 32 << 20;
  int64_t step_factor = 2;
  // Explicit sizes, in this order, instead of min_bytes * step_factor^k up to max_bytes (the Python
  // module's collective(sizes=[...]); min_bytes and max_bytes, which the header prints, should then
  // be their smallest and largest).
  std::vector<int64_t> sizes{};
  std::optional<uint32_t> channels;
  std::optional<int64_t> chunk_bytes;  // overrides the protocol's chunk (0: no pipelining)
  uint32_t root = 0;
  // Reduction bandwidth and priority; the latencies and wire factor come from the protocol, and
  // step_latency, when non-zero, replaces the protocol's per-step latencies.
  models::CollectiveRunOptions run;
  // Sizes simulated at once on this many threads (`collective --threads`): each size is a
  // simulation of its own, so the rows are the same for any count.
  uint32_t threads = 1;
};

struct CollectiveSweep {
  models::NcclChannels channels;  // NCCL's channels and NICs for the sweep's ranks
  // Why CollNet (SHARP) cannot run on this fabric and these ranks; empty when it can.
  std::string collnet_unavailable;
  NcclTestsHeader header;
  std::vector<NcclTestsRow> rows;
};

// The sizes a sweep runs: `sizes` when given, else min_bytes, min_bytes * step_factor, ... up to
// max_bytes (one size when min_bytes is 0), as nccl-tests steps them.
std::vector<int64_t> collective_sweep_sizes(const CollectiveSweepOptions& options);

// Sizes as nccl-tests reads them: a bare number is bytes and a K, M, G or T suffix is a power of
// 1024 ("8G" = 8 GiB, as in nccl-tests' -b/-e); anything else goes through parse_bytes ("64MiB",
// "1GB" = 10^9). Throws UnitError.
int64_t parse_size_flag(std::string_view text);

// `syncsim collective --hbm`'s default, shared with the `report:` collectives so both time the
// same.
inline constexpr const char* kDefaultCollectiveHbm = "3.35TBps";

// The `report:` all_reduces of a scenario (scenario.hpp ReportSpec).
struct ReportedCollectives {
  uint32_t ranks = 0;
  int64_t small_bytes = 0;  // as nccl-tests rounds the size (whole floats)
  double small_latency_s = 0;
  int64_t large_bytes = 0;
  double large_time_s = 0;
  double large_busbw_GBps = 0;      // nccl-tests' busbw, 1e9 B/s
  models::NcclChannels channels{};  // the channels both sizes ran on
  std::vector<std::string> warnings{};
};

// Each size of `scenario.report` as one row of the sweep `syncsim collective SCENARIO --op
// all_reduce -b SIZE -e SIZE --ranks N` runs with its other flags at their defaults (calibrated
// when the scenario has collective.calibration, as there): N = workload.data_parallel (0: every
// GPU). The scenario's traffic and workload are not run: the fabric is idle.
ReportedCollectives run_report_collectives(const Scenario& scenario);

// Runs the sweep. Throws CollectiveUsageError for impossible requests (more ranks than GPUs, an
// algorithm that does not implement the op, ...).
CollectiveSweep run_collective_sweep(const Scenario& scenario,
                                     const CollectiveSweepOptions& options);

}  // namespace syncsim::app

#pragma once
// The protocol of each collective of a training step. NCCL picks LL, LL128 or Simple per call from
// its cost model (enqueue.cc topoGetAlgoInfo over tuning.cc's predicted times), so a step's small
// and medium collectives (DDP buckets of a few tens of MB, FSDP's per-unit gathers, tensor-parallel
// activations) run LL / LL128 and only large ones Simple. A pinned `collective.protocol` holds for
// every collective of the step, as NCCL_PROTO does. The step's own fields (StepConfig::collective,
// chunk_bytes, ring_min_pieces, connection_depth) stay Simple's; this class holds LL's and LL128's.
#include <array>
#include <cstdint>
#include <optional>

#include "models/collective_cost.hpp"
#include "models/collective_plan.hpp"
#include "models/collective_runner.hpp"
#include "models/nccl_channels.hpp"

namespace syncsim::models {

struct StepConfig;

class StepProtocols {
 public:
  // Every collective Simple, as the step's own fields say (a step set up by hand).
  StepProtocols() = default;
  // NCCL's choice per collective on the step's `channels` (nccl_cost_inputs), unless
  // config.protocol pins one. `base`: the step's run options before any protocol's timing;
  // `fixed_chunk`: a chunk the step set itself, which then holds for every protocol.
  StepProtocols(const CollectiveConfig& config, const NcclChannels& channels,
                const CollectiveRunOptions& base, std::optional<int64_t> fixed_chunk);

  // The protocol of one collective of `ranks` ranks filling hosts of `gpus_per_host` GPUs in
  // order: the pinned one, else the one NCCL's cost model predicts fastest for `algo`
  // (nccl_best_protocol). Simple for all-to-all and send/recv (NCCL's p2p runs Simple here, as
  // `syncsim collective` runs them), for algorithms NCCL runs with Simple only (NVLS, PAT, CollNet;
  // also when LL or LL128 is pinned) and for a step set up by hand.
  NcclProtocol choose(CollectiveOp op, CollectiveAlgo algo, uint32_t ranks, uint32_t gpus_per_host,
                      int64_t bytes) const;

  // LL's or LL128's timing for `algo` (the Tree row for tree, the Ring row for the others).
  const ProtocolTiming& timing(CollectiveAlgo algo, NcclProtocol proto) const;
  // The run options of a collective of `algo` with LL or LL128.
  const CollectiveRunOptions& run(CollectiveAlgo algo, NcclProtocol proto) const;
  std::optional<int64_t> fixed_chunk() const { return fixed_chunk_; }
  // Whether collectives may run LL or LL128 (false: every one Simple, a step set up by hand).
  bool per_collective() const { return per_collective_; }

 private:
  static std::size_t row(CollectiveAlgo algo) { return algo == CollectiveAlgo::Tree ? 1 : 0; }
  static std::size_t column(NcclProtocol proto) { return proto == NcclProtocol::LL ? 0 : 1; }

  bool per_collective_ = false;
  std::optional<NcclProtocol> pinned_;
  NcclChannels channels_;
  std::optional<int64_t> fixed_chunk_;
  // [Ring row, Tree row][LL, LL128], computed once.
  std::array<std::array<ProtocolTiming, 2>, 2> timings_{};
  std::array<std::array<CollectiveRunOptions, 2>, 2> runs_{};
};

// Sets the protocol's parts of `o` (whose op, algo, ranks, bytes, channels and gpus_per_host are
// set) for one collective of `config`'s step run with `proto`: its chunk (NCCL's for the protocol
// and size, or the step's own), ring Simple's slices per chunk, and the protocol's slices in
// flight per connection; returns the run options it runs with (wire factor, latencies). Simple
// takes the step's own fields, so a step pinned to Simple runs as before protocols were chosen.
CollectiveRunOptions shape_step_collective(const StepConfig& config, NcclProtocol proto,
                                           PlanOptions& o);

// The protocol of one collective of `config`'s step (StepProtocols::choose on the step's hosts).
NcclProtocol step_protocol(const StepConfig& config, CollectiveOp op, CollectiveAlgo algo,
                           uint32_t ranks, int64_t bytes);

}  // namespace syncsim::models

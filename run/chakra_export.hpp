#pragma once
// `syncsim run --chakra-out DIR`: the simulated DDP step as a Chakra execution trace, one file per
// rank, so ASTRA-sim (or syncsim's own replay, workload.chakra) can run the same workload.
#include <string>
#include <vector>

#include "models/chakra_graph.hpp"
#include "models/step_sim.hpp"

namespace syncsim::app {

// Per rank, in stream order: a compute node `forward` (every micro-batch's forward and all but the
// last backward), the last backward cut where each gradient bucket becomes ready on that rank, an
// ALL_REDUCE per bucket (comm_size = the bucket's bytes, every rank: no pg_name) after the
// backward part that readies it and after the previous bucket (one communication stream), and
// `optimizer` after both the backward and the last bucket. Durations are the simulated ones,
// rounded to whole microseconds (Chakra's duration_micros) at each cut, so rounding never
// accumulates. FSDP steps (the event-driven engine, HSDP too) export rank 0's compute slices scaled
// by each rank's compute multiplier, the all-gathers, reduce-scatters and HSDP all-reduces with
// their process groups (`shardG.all_gather` and `shardG.reduce_scatter`: one per stream,
// `replicateJ` for HSDP's all-reduces), and the schedule's dependencies and stream order. Throws
// std::invalid_argument for the closed form of model parallelism, which has no event graph.
models::ChakraTrace step_to_chakra(const models::StepResult& step);

// step_to_chakra written as DIR/syncsim.<rank>.et; returns the files.
std::vector<std::string> write_step_chakra(const models::StepResult& step, const std::string& dir);

}  // namespace syncsim::app

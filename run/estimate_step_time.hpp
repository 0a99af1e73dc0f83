#pragma once
// The simulated time the estimate expects of a DDP step (Estimate::sim_time_s), which the progress
// display measures the run against.
#include <vector>

#include "models/step_sim.hpp"
#include "topologies/fabric_params.hpp"

namespace syncsim::app {

// The closed form (models/step_model.hpp) on unperturbed compute, with each bucket's all-reduce at
// the bandwidth bound 2 (n-1)/n S / B, B the bus bandwidth of a node (its NICs, NCCL's channels
// spread over all of them; NVLink when the ranks fit in one host), times the tree's measured factor
// over it for tree all-reduces (models::kTreeAllReduceTimeOverBandwidthBound), plus NCCL's launch
// latency. Only the progress display and the estimate use this; the simulated step is the answer.
double expected_ddp_step_s(const models::StepConfig& c, double n, const topo::FabricParams& fabric,
                           const std::vector<models::GradientBucket>& buckets, double launch_s);

}  // namespace syncsim::app

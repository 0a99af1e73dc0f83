#pragma once
// How soon a training step run live on a packet fabric can start a transfer after anything it
// waited for, whichever of its collectives it is: the bound a partitioned fabric's windows keep
// (NetworkSpec::Execution::reaction), so that what a completion starts lies past the window in
// which it completed (sim/net/partition_windows.hpp).
#include "models/step_sim.hpp"
#include "sim/core/units.hpp"
#include "sim/net/network_spec.hpp"

namespace syncsim::models {

// Every transfer of the step's collectives goes through a CollectiveRunner with the run options of
// its protocol (shape_step_collective: the step's Simple options, or LL's / LL128's of the ring or
// tree row), so it starts no sooner than the least of their step latencies, and no sooner than a
// freed slot's notice (least_slot_notice). Zero where an in-switch engine (NVLS, CollNet) may pass
// data on at once; the fabric then runs as one queue.
Time step_reaction(const StepConfig& config, const net::NetworkSpec& spec);

}  // namespace syncsim::models

#pragma once
// `workload.chakra`: the scenario's Chakra trace replayed on its fabric (models/chakra_replay.hpp)
// with the NCCL setup a DDP step's collectives get (channels, protocol latencies, chunk), and the
// outcome in the usual result: step_time_s is the last rank's finish.
#include "run/runner.hpp"

namespace syncsim::app {

// How soon the replay's collectives can start a transfer after what they waited for
// (models::step_reaction of the NCCL setup they run with; every transfer of the replay, point to
// point ones too, goes through a CollectiveRunner): what a packet fabric may run ahead in windows.
Time chakra_reaction(const Scenario& scenario, const net::NetworkSpec& spec);

// Runs scenario.chakra on `backend` (built on `spec`); fills r.chakra, r.step and r.step_channels.
void run_chakra_workload(const Scenario& scenario, TransferBackend& backend, RunResult& r);

}  // namespace syncsim::app

#pragma once
// `workload.chakra`: the scenario's Chakra trace replayed on its fabric (models/chakra_replay.hpp)
// with the NCCL setup a DDP step's collectives get (channels, protocol latencies, chunk), and the
// outcome in the usual result: step_time_s is the last rank's finish.
#include "run/runner.hpp"

namespace syncsim::app {

// Runs scenario.chakra on `backend` (built on `spec`); fills r.chakra, r.step and r.step_channels.
void run_chakra_workload(const Scenario& scenario, TransferBackend& backend, RunResult& r);

}  // namespace syncsim::app

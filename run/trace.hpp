#pragma once
// Chrome trace / Perfetto JSON of a simulated training step: one process per rank (the first
// `max_ranks` ranks at scale) with a compute track (forward, backward, optimizer) and a
// communication track (each gradient bucket's all-reduce, with its size; for FSDP an all-gather
// and a reduce-scatter track, and rank 0's compute per unit; with pipeline parallelism a process
// with the 1F1B schedule, a track per stage). Opens in ui.perfetto.dev
// and chrome://tracing.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "models/step_sim.hpp"
#include "run/fault_run.hpp"
#include "run/multi_job.hpp"

namespace syncsim::app {

// `faults`: each fault is an instant event on a `faults` track (and, with a duration, a slice
// there from its start to its end).
nlohmann::json step_trace(const models::StepResult& step, std::size_t max_ranks = 64,
                          const std::vector<FaultOutcome>& faults = {});

// Several jobs on one fabric (run/multi_job.hpp): one process per job with a track of its steps
// (each a slice from its begin to its end, with its time and exposed communication).
nlohmann::json jobs_trace(const std::vector<JobRun>& jobs);

}  // namespace syncsim::app

#pragma once
// Several training jobs on one fabric (`jobs:`): every job's steps run event by event on the same
// backend, beside the scenario's background `traffic:`, so their collectives contend where they
// share links. Each job begins its first step at its start time and each further step when the
// previous one ends. With `compare_alone: true` each job also runs alone on an idle copy of the
// fabric (same placement, seeds and steps), and its slowdown is the mean step time shared over the
// mean alone.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "run/fault_run.hpp"
#include "scenario/scenario.hpp"
#include "sim/backends/transfer_backend.hpp"
#include "sim/net/network_spec.hpp"

namespace syncsim::app {

struct JobRun {
  std::string name;
  uint32_t ranks = 0;
  std::vector<uint32_t> hosts;  // the hosts its GPUs are on, ascending
  std::string engine;           // "event_driven" or "closed_form"
  bool loads_fabric = true;     // its collectives run on the shared fabric
  double start_s = 0;
  double end_s = 0;
  std::vector<double> step_starts_s;  // when each step began
  std::vector<double> step_times_s;
  double step_time_s = 0;     // mean over its steps
  double mfu = 0;             // model FLOPs per step over (mean step time x peak FLOPs)
  double exposed_comm_s = 0;  // mean over its steps
  std::optional<double> alone_step_time_s;  // compare_alone: the mean step time alone
  std::optional<double> slowdown_vs_alone;  // step_time_s / alone_step_time_s
};

// The GPUs each job runs on, rank order: a job's `hosts` (their GPUs in order), or its workload's
// placement policy over the fabric, skipping GPUs that jobs listed before it hold. Throws
// std::invalid_argument when a job does not fit.
std::vector<std::vector<uint32_t>> place_jobs(const Scenario& scenario,
                                              const net::NetworkSpec& spec);

// How soon any job's step can start a transfer after what it waited for (models::step_reaction,
// the least over the jobs, each as run_jobs sets it up): what a packet fabric shared by the jobs
// may run ahead in its windows. Zero when a job's collectives may pass data on at once.
Time jobs_reaction(const Scenario& scenario, const net::NetworkSpec& spec, const FaultRun* faults);

// Runs every job of `scenario.jobs` on `backend` (whose simulation may already hold background
// traffic) to the end of the event queue, then, with compare_alone, each alone. Appends warnings
// (a job that cannot load the fabric, a fidelity without contention).
// `faults` (may be null) hands its stragglers to each job's ranks on their GPUs, alone runs too;
// network faults act on `backend` only (the alone runs have an idle, healthy fabric).
std::vector<JobRun> run_jobs(const Scenario& scenario, const net::NetworkSpec& spec,
                             TransferBackend& backend, std::vector<std::string>& warnings,
                             const FaultRun* faults = nullptr);

// Per fault (by time), what it cost each job (FaultOutcome::jobs): its steps that ended before the
// fault against those running from the fault to the next one (the last: to the run's end).
void add_job_fault_costs(std::vector<FaultOutcome>& faults, const std::vector<JobRun>& jobs);

}  // namespace syncsim::app

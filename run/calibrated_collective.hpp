#pragma once
// The calibrated model of a collective: a profile's fitted alpha-beta line for one (op, rank
// count), time_us = latency_us + bytes / (1000 * algbw_GBps) with the latency and bandwidth of the
// size regime that holds `bytes` (calibration/alpha_beta_fit.hpp). Like `--model nccl` it evaluates
// a formula instead of simulating; unlike it, the formula's constants were measured on the user's
// cluster (nccl-tests logs or syncsim-probe).
//
// Rules (docs/calibration.md says the same):
// - A line is used only for the exact op and rank count it was fitted on. There is no interpolation
//   across rank counts: going from 8 to 16 ranks typically crosses from NVLink to the network, so
//   neither the latency nor the bandwidth scales by a factor we could justify from one line.
// - Sizes below the first regime use the first regime; sizes above the largest measured size use
// the
//   last regime (extrapolated, and said so in a warning).
// - Where the profile has no line for the (op, rank count), the rows are simulated as without a
//   profile and a warning says so; never silently.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "calibration/profile.hpp"
#include "models/collective_plan.hpp"
#include "models/step_sim.hpp"
#include "run/collective_cmd.hpp"
#include "scenario/scenario.hpp"

namespace syncsim::app {

// The profile's line for (op, ranks), or nullptr.
const calibration::CollectiveProfile* find_collective_fit(const CollectiveCalibration& cal,
                                                          models::CollectiveOp op, uint32_t ranks);

// The line's time for `bytes` (nccl-tests' S), in microseconds.
double calibrated_time_us(const calibration::CollectiveProfile& fit, int64_t bytes);

// "FILE has no all_reduce line for 16 ranks (it has all_reduce at 8; all_gather at 8)".
std::string calibration_miss(const CollectiveCalibration& cal, models::CollectiveOp op,
                             uint32_t ranks);

struct CalibratedSweep {
  CollectiveSweep sweep;
  bool calibrated = false;  // false: the profile lacked the line and rows were simulated
  std::vector<std::string> warnings;
};

// `syncsim collective` with a profile: every row from the fitted line when the profile has one for
// (op, ranks), else run_collective_sweep (simulation) with a warning. `options.ranks` 0 means every
// GPU of the scenario's fabric, as for the simulated sweep. The calibrated rows do not depend on
// the fabric, so the rank count may exceed the fabric's GPUs.
CalibratedSweep run_calibrated_sweep(const Scenario& scenario,
                                     const CollectiveSweepOptions& options,
                                     const CollectiveCalibration& cal);

// The workload's bucket all-reduces: when the profile has an all_reduce line for `ranks` and bucket
// timings are reused (an idle fabric), sets step.calibrated_allreduce and returns a description
// ("calibrated: FILE, all_reduce at 8 ranks"); otherwise appends a warning saying why the buckets
// are simulated and returns "simulated".
std::string calibrate_bucket_allreduce(const CollectiveCalibration& cal, uint32_t ranks,
                                       models::StepConfig& step,
                                       std::vector<std::string>& warnings);

// A profile read for `--calibration FILE` (errors as calibration::ProfileError).
CollectiveCalibration read_collective_calibration(const std::string& file);

}  // namespace syncsim::app

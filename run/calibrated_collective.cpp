#include "run/calibrated_collective.hpp"

#include <algorithm>
#include <cstdio>

#include "run/nccl_tests_format.hpp"
#include "sim/backends/make_backend.hpp"
#include "topologies/fabric_builder.hpp"

namespace syncsim::app {

const calibration::CollectiveProfile* find_collective_fit(const CollectiveCalibration& cal,
                                                          models::CollectiveOp op, uint32_t ranks) {
  const std::string_view name = models::to_string(op);
  for (const auto& c : cal.collectives) {
    if (c.op == name && c.ranks == static_cast<int>(ranks) && !c.regimes.empty()) return &c;
  }
  return nullptr;
}

double calibrated_time_us(const calibration::CollectiveProfile& fit, int64_t bytes) {
  // Regimes are contiguous and ordered by size; the first one whose upper end holds `bytes`, the
  // last one beyond the measured range.
  for (const auto& r : fit.regimes) {
    if (bytes <= r.max_bytes) return r.time_us(bytes);
  }
  return fit.regimes.back().time_us(bytes);
}

std::string calibration_miss(const CollectiveCalibration& cal, models::CollectiveOp op,
                             uint32_t ranks) {
  std::string have;
  for (const auto& c : cal.collectives) {
    if (!have.empty()) have += "; ";
    have += c.op + " at " + std::to_string(c.ranks);
  }
  return cal.file + " has no " + std::string(models::to_string(op)) + " line for " +
         std::to_string(ranks) + " ranks (it has " + (have.empty() ? std::string("none") : have) +
         "; lines are never interpolated across rank counts)";
}

CollectiveCalibration read_collective_calibration(const std::string& file) {
  CollectiveCalibration c;
  c.file = file;
  calibration::CalibrationProfile profile = calibration::read_profile_file(file);
  c.collectives = std::move(profile.collectives);
  if (profile.physical) c.physical = profile.physical->parameters;
  c.gpu_name = profile.gpu_name;
  c.gpu_count = profile.gpu_count;
  if (c.collectives.empty() && c.physical.empty()) {
    throw calibration::ProfileError(file +
                                    ": expected a profile with fitted collectives (`collectives:`) "
                                    "or physical parameters (`physical:`), found neither");
  }
  return c;
}

std::string calibrate_bucket_allreduce(const CollectiveCalibration& cal, uint32_t ranks,
                                       models::StepConfig& step,
                                       std::vector<std::string>& warnings) {
  if (ranks < 2) return "none (one rank)";
  const calibration::CollectiveProfile* fit =
      find_collective_fit(cal, models::CollectiveOp::AllReduce, ranks);
  if (fit == nullptr) {
    warnings.push_back(
        "collective.calibration: " + calibration_miss(cal, models::CollectiveOp::AllReduce, ranks) +
        ": the bucket all-reduces are simulated");
    return "simulated";
  }
  if (!step.reuse_bucket_timings) {
    warnings.push_back(
        "collective.calibration: the bucket all-reduces run live beside other traffic "
        "(reuse_bucket_timings off), where a fitted idle-fabric line cannot see the "
        "contention: they are simulated, and " +
        cal.file + " is not used for them");
    return "simulated";
  }
  const calibration::CollectiveProfile line = *fit;
  step.calibrated_allreduce = [line](int64_t bytes) {
    return Time::from_seconds(calibrated_time_us(line, bytes) * 1e-6);
  };
  return "calibrated: " + cal.file + ", all_reduce at " + std::to_string(ranks) + " ranks";
}

CalibratedSweep run_calibrated_sweep(const Scenario& scenario, const CollectiveSweepOptions& o,
                                     const CollectiveCalibration& cal) {
  CalibratedSweep out;
  uint32_t n = o.ranks;
  if (n == 0) n = static_cast<uint32_t>(topo::build_fabric(scenario.fabric).gpus.size());
  const calibration::CollectiveProfile* fit = find_collective_fit(cal, o.op, n);
  if (fit == nullptr) {
    out.warnings.push_back(
        calibration_miss(cal, o.op, n) + ": these rows are simulated (fidelity " +
        std::string(syncsim::fidelity_name(scenario.fidelity)) + "), not calibrated");
    out.sweep = run_collective_sweep(scenario, o);
    return out;
  }
  if (n < 2) throw CollectiveUsageError("a collective needs at least 2 ranks");
  if (o.step_factor < 2) throw CollectiveUsageError("--step-factor must be at least 2");
  if (o.min_bytes < 0 || o.max_bytes < o.min_bytes) {
    throw CollectiveUsageError("--min-bytes must be >= 0 and <= --max-bytes");
  }
  out.calibrated = true;
  NcclTestsHeader& h = out.sweep.header;
  h.program = nccl_tests_program(o.op);
  h.ngpus = static_cast<int>(n);
  h.min_bytes = o.min_bytes;
  h.max_bytes = o.max_bytes;
  h.step_factor = o.step_factor;
  h.validation = 0;  // nothing moves, so nothing is checked
  for (uint32_t r = 0; r < n; ++r) {
    h.devices.push_back(device_line(static_cast<int>(r), "profile", static_cast<int>(r),
                                    "syncsim calibrated (" + cal.file + ")"));
  }
  const int64_t largest = fit->regimes.back().max_bytes;
  int64_t extrapolated_from = -1;
  for (const int64_t size : collective_sweep_sizes(o)) {
    const int64_t bytes = nccl_tests_size(o.op, n, size);
    const double t = calibrated_time_us(*fit, bytes);
    if (bytes > largest && extrapolated_from < 0) extrapolated_from = bytes;
    out.sweep.rows.push_back(make_row(o.op, n, bytes, t, static_cast<int>(o.root), 0));
    out.sweep.rows.back().algorithm = "calibrated";
  }
  if (extrapolated_from >= 0) {
    out.warnings.push_back("sizes from " + std::to_string(extrapolated_from) +
                           " B exceed the largest fitted size (" + std::to_string(largest) +
                           " B) of " + cal.file + "'s " + fit->op + " line at " +
                           std::to_string(n) + " ranks: its last regime is extrapolated");
  }
  return out;
}

}  // namespace syncsim::app

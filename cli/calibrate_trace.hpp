#pragma once
// `syncsim calibrate trace TRACE.json [--scenario S] [--set PATH=V]... [--peak DTYPE=TFLOPS]...
// [--out PROFILE.yaml] [--json]`: a PyTorch profiler trace (calibration/profiler_trace.hpp) ->
// the compute fit (calibration/compute_fit.hpp) and the measured step phases
// (calibration/trace_step_times.hpp), printed as text or JSON; --out writes the fit as a
// calibration profile; --scenario S adds what `syncsim run S` predicts for the step, as is and with
// the trace's fit applied to the workload's GPU.
//
// Peaks (for efficiencies) come from --peak, else the scenario's workload GPU, else the GPU preset
// whose name the trace's deviceProperties name contains (a100, h100, h200, b200, gb200).
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "calibration/compute_fit.hpp"
#include "calibration/profiler_trace.hpp"
#include "calibration/trace_step_times.hpp"

namespace syncsim::app {

// One step's times as `syncsim run` predicts them, in microseconds.
struct PredictedStep {
  std::string label;  // "predicted" or "predicted with the trace's fit"
  double step_us = 0, forward_us = 0, backward_us = 0, optimizer_us = 0, tail_us = 0,
         exposed_comm_us = 0;
};

struct TraceCalibration {
  calibration::ProfilerTrace trace;
  calibration::ComputeFit fit;
  calibration::MeasuredSteps measured;
  std::string peak_source;  // where the peaks came from
  std::string scenario;     // empty without --scenario
  std::vector<PredictedStep> predicted;
};

std::string trace_calibration_text(const TraceCalibration& c);
nlohmann::json trace_calibration_json(const TraceCalibration& c);

// `calibrate trace ...`; args exclude "calibrate trace". Returns the exit code.
int calibrate_trace_main(const std::vector<std::string>& args, std::ostream& out);

}  // namespace syncsim::app

#pragma once
// A calibration profile: what was measured on one GPU node (by syncsim-probe) or fitted from
// nccl-tests logs (by `syncsim calibrate fit --out`), as YAML:
//
//   syncsim_calibration_profile: 1
//   source: "syncsim calibrate fit logs/ar.log"     # how it was produced
//   gpu: {name: NVIDIA H200, count: 8}
//   versions: {driver: "570.86", cuda: "12.8", nccl: "2.25.1"}
//   spread: 0.012                                   # max relative stddev of repeated runs
//   probes:                                         # scalar measurements: mean, stddev, samples
//     - {name: hbm_copy_bandwidth, unit: GB/s, mean: 4012.5, stddev: 3.1, samples: 20,
//        min: 4007.9, median: 4012.8, max: 4016.0}
//   collectives:
//     - op: all_reduce
//       ranks: 8
//       max_rel_error: 0.03
//       heldout_rel_error: 0.04
//       spread: 0.008        # max relative stddev of repeated runs over the sizes (0: unknown)
//       samples: 5           # repeated runs per size (0: unknown, e.g. fitted from nccl-tests
//       logs) regimes:
//         - {min_bytes: 0, max_bytes: 65535, latency_us: 12.1, algbw_GBps: 20.5}
//         - {min_bytes: 65536, max_bytes: 8589934592, latency_us: 35.0, algbw_GBps: 180.2}
//   gemm:
//     - {dtype: bf16, peak_tflops: 989, e_max: 0.78, intensity_half: 310.5, max_rel_error: 0.05}
//   physical:                 # the simulator's own parameters, fitted (calibrate fit --scenario)
//     scenario: "my-cluster.yaml"
//     fidelity: analytic
//     points: 58
//     rms_rel_error: 0.021
//     max_rel_error: 0.048
//     parameters:
//       - {name: base_latency.Simple, unit: us, value: 11.2, stddev: 0.4, nominal: 8.4,
//          identified: true}
//   compute:                        # from a profiler trace (`syncsim calibrate trace --out`)
//     kernel_launch_us: 2.4         # median gap between back-to-back kernels on one stream
//     kernel_gaps: 812              # how many gaps that is the median of
//     attention:                    # achieved / peak of flash-attention calls with shapes
//       - {dtype: bf16, peak_tflops: 989, efficiency: 0.52, calls: 24}
//
// Every key but syncsim_calibration_profile is optional; unknown keys are errors.
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "calibration/alpha_beta_fit.hpp"

namespace syncsim::calibration {

// A malformed profile. what() is "file:line:col: path: what was expected, what was found".
class ProfileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ProbeValue {
  std::string name;
  std::string unit;
  double mean = 0;
  double stddev = 0;
  int samples = 0;
  // Spread of the repeated runs; all 0 when not recorded (profiles written before they existed).
  double min = 0;
  double median = 0;
  double max = 0;
};

// Mean, sample stddev, min, median and max of repeated runs (empty: all zero).
ProbeValue summarize(const std::string& name, const std::string& unit, std::vector<double> runs);

struct CollectiveProfile {
  std::string op;
  int ranks = 0;
  double max_rel_error = 0;
  double heldout_rel_error = 0;
  std::vector<Regime> regimes;
  double spread = 0;  // max relative stddev of repeated runs over the measured sizes; 0: unknown
  int samples = 0;    // repeated runs per size; 0: unknown
};

// One fitted physical parameter of the simulator (`syncsim calibrate fit --scenario`): its value,
// the one-sigma uncertainty of the least-squares fit, the value the simulator uses without a
// calibration, and whether the measurements determined it (false: kept at `nominal`, because no
// measured point depends on it or the fit could not tell it from another parameter).
struct PhysicalParameter {
  std::string name;  // e.g. "base_latency.Simple" (scenario/physical_parameters.hpp lists them)
  std::string unit;  // "us", "GB/s" or "" for a fraction
  double value = 0;
  double stddev = 0;
  double nominal = 0;
  bool identified = false;
};

// The physical fit: on which scenario (fabric) the measurements were simulated, how many points,
// the relative error of the fitted simulator over them, and the parameters.
struct PhysicalFit {
  std::string scenario;  // the scenario file (or name) the fit simulated
  std::string fidelity;  // the fidelity the fit simulated at
  int points = 0;
  double rms_rel_error = 0;
  double max_rel_error = 0;
  std::vector<PhysicalParameter> parameters;
};

struct AttentionProfile {
  std::string dtype;
  double peak_tflops = 0;
  double efficiency = 0;
  int calls = 0;
};

struct CalibrationProfile {
  std::string source;
  std::string gpu_name;
  int gpu_count = 0;
  std::string driver_version;
  std::string cuda_version;
  std::string nccl_version;
  double spread = 0;
  std::vector<ProbeValue> probes;
  std::vector<CollectiveProfile> collectives;
  std::vector<GemmFit> gemm;
  std::optional<PhysicalFit> physical;
  // `compute:` (written only when one of these is set).
  double kernel_launch_us = 0;  // 0: not measured
  int kernel_gaps = 0;
  std::vector<AttentionProfile> attention;
};

CollectiveProfile to_profile(const LineFit& fit);

std::string write_profile_yaml(const CalibrationProfile& profile);
// `file` is only used in error messages.
CalibrationProfile parse_profile_yaml(const std::string& text, const std::string& file);
CalibrationProfile read_profile_file(const std::string& path);
void write_profile_file(const CalibrationProfile& profile, const std::string& path);

}  // namespace syncsim::calibration

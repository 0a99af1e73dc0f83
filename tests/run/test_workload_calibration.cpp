// A calibration profile drives the step model's compute.
#include <doctest/doctest.h>

#include <filesystem>

#include "calibration/profile.hpp"
#include "models/gpu.hpp"
#include "models/step_model.hpp"
#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"

using namespace syncsim;

namespace {

std::string scenario_with(const std::string& calibration_line) {
  return R"(name: calibrated
fidelity: analytic
fabric:
  topology: spine_leaf
  spine_leaf: {leaves: 2, hosts_per_leaf: 2, spines: 2}
workload:
  model: gpt3-1.3b
  gpu: h100
)" + calibration_line;
}

}  // namespace

TEST_CASE("scenario: workload.calibration replaces the GPU's GEMM curve and HBM bandwidth") {
  const auto dir = std::filesystem::temp_directory_path() / "syncsim-calibration-test";
  std::filesystem::create_directories(dir);
  calibration::CalibrationProfile profile;
  profile.source = "test";
  profile.gpu_name = "NVIDIA H100";
  profile.gpu_count = 8;
  calibration::GemmFit fit;
  fit.dtype = "bf16";
  fit.peak_tflops = 900;
  fit.e_max = 0.5;
  fit.intensity_half = 200;
  profile.gemm.push_back(fit);
  profile.probes.push_back({"hbm_copy_bandwidth", "GB/s", 3000.0, 5.0, 10});
  const std::string path = (dir / "h100.yaml").string();
  calibration::write_profile_file(profile, path);

  const app::Scenario plain = app::load_scenario_text(scenario_with(""), "s.yaml");
  const app::Scenario tuned =
      app::load_scenario_text(scenario_with("  calibration: " + path + "\n"), "s.yaml");
  const models::GpuSpec& g = tuned.workload->step.gpu;
  CHECK(g.bf16_tflops == 900);
  CHECK(g.max_gemm_efficiency == 0.5);
  CHECK(g.gemm_intensity_half == 200);
  CHECK(g.hbm_bytes_per_s == doctest::Approx(3.0e12));
  CHECK(g.calibrated_from == path);
  CHECK(plain.workload->step.gpu.gemm_intensity_half == 0);

  // A big GEMM now follows the fitted curve exactly: 0.5 * I / (I + 200) of 900 TFLOP/s.
  const double n = 8192;
  const double intensity = 2 * n * n * n / (3 * n * n * 2);
  const double expected =
      2 * n * n * n / (900e12 * 0.5 * intensity / (intensity + 200)) + g.kernel_launch_s;
  CHECK(models::gemm_seconds(g, models::DType::Bf16, n, n, n) ==
        doctest::Approx(expected).epsilon(1e-9));
  // And the step's compute gets slower (the curve sits well below the preset's 0.75 of 989).
  const auto a = app::run_scenario(plain);
  const auto b = app::run_scenario(tuned);
  REQUIRE(a.step.has_value());
  REQUIRE(b.step.has_value());
  CHECK(b.step->backward.seconds() > 1.3 * a.step->backward.seconds());
  CHECK(b.step->step > a.step->step);

  // A missing profile names the key and the file.
  try {
    app::load_scenario_text(scenario_with("  calibration: /nonexistent/profile.yaml\n"), "s.yaml");
    FAIL("expected a ScenarioError");
  } catch (const app::ScenarioError& e) {
    CHECK(std::string(e.what()).starts_with(
        "s.yaml:9:16: workload.calibration: expected a readable calibration profile"));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("scenario: workload.calibration takes a profiler trace's kernel overhead alone") {
  const auto dir = std::filesystem::temp_directory_path() / "syncsim-calibration-test-trace";
  std::filesystem::create_directories(dir);
  calibration::CalibrationProfile profile;
  profile.source = "syncsim calibrate trace step.json";
  profile.kernel_launch_us = 9.5;
  profile.kernel_gaps = 100;
  const std::string path = (dir / "trace.yaml").string();
  calibration::write_profile_file(profile, path);
  const app::Scenario tuned =
      app::load_scenario_text(scenario_with("  calibration: " + path + "\n"), "s.yaml");
  const models::GpuSpec& g = tuned.workload->step.gpu;
  CHECK(g.kernel_launch_s == doctest::Approx(9.5e-6));
  CHECK(g.gemm_intensity_half == 0);  // no GEMM fit: the preset's curve stays
  CHECK(g.max_gemm_efficiency == models::gpu_preset("h100")->max_gemm_efficiency);
  std::filesystem::remove_all(dir);
}

TEST_CASE(
    "scenario: workload.calibration times attention at a profiler trace's flash-attention rate") {
  const auto dir = std::filesystem::temp_directory_path() / "syncsim-calibration-test-attention";
  std::filesystem::create_directories(dir);
  calibration::CalibrationProfile profile;
  profile.source = "syncsim calibrate trace step.json";
  profile.attention.push_back({"bf16", 989, 0.4, 24});
  profile.attention.push_back({"fp8", 1979, 0.9, 3});  // not attention's dtype: ignored
  const std::string path = (dir / "attention.yaml").string();
  calibration::write_profile_file(profile, path);
  const app::Scenario plain = app::load_scenario_text(scenario_with(""), "s.yaml");
  const app::Scenario tuned =
      app::load_scenario_text(scenario_with("  calibration: " + path + "\n"), "s.yaml");
  const models::GpuSpec& g = tuned.workload->step.gpu;
  CHECK(g.attention_tflops == doctest::Approx(989 * 0.4));
  CHECK(plain.workload->step.gpu.attention_tflops == 0);

  // FlashAttention's count for gpt3-1.3b (micro-batch 1, 32 heads of 64, sequence 2048), causal:
  // 4 b h s s d / 2 forward and 2.5 times that backward, at 395.6 TFLOPS, one kernel each.
  const models::TransformerShape& m = tuned.workload->step.model;
  const models::ComputeParams& p = tuned.workload->step.compute;
  const double head_dim = static_cast<double>(m.hidden) / m.heads;
  const double flops =
      4.0 * static_cast<double>(p.micro_batch) * m.heads * m.sequence * m.sequence * head_dim / 2.0;
  const models::LayerCompute lc = models::layer_compute(m, g, p);
  CHECK(lc.attention_forward ==
        doctest::Approx(flops / (989e12 * 0.4) + g.kernel_launch_s).epsilon(1e-12));
  CHECK(lc.attention_backward ==
        doctest::Approx(2.5 * flops / (989e12 * 0.4) + g.kernel_launch_s).epsilon(1e-12));
  // The rest of the block is the GEMM model's, as without the profile.
  const models::LayerCompute base = models::layer_compute(m, plain.workload->step.gpu, p);
  CHECK(lc.layer_forward - lc.attention_forward ==
        doctest::Approx(base.layer_forward - base.attention_forward).epsilon(1e-12));
  CHECK(lc.layer_backward - lc.attention_backward ==
        doctest::Approx(base.layer_backward - base.attention_backward).epsilon(1e-12));
  std::filesystem::remove_all(dir);
}

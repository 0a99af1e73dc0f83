// `syncsim calibrate trace` on a synthetic profiler trace: text and JSON, the profile --out writes
// (and a scenario's workload.calibration reading it back), the prediction beside the measured
// step with --scenario, and input errors.
#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "calibration/profile.hpp"
#include "calibration/profiler_trace.hpp"
#include "cli/calibrate_cmd.hpp"
#include "tests/calibration/profiler_trace_gen.hpp"

using namespace syncsim;

namespace {

// Two steps of forward GEMMs (main thread), backward GEMMs (autograd thread), an all-reduce that
// outlasts backward by 40 us and a fused Adam inside Optimizer.step; GEMM times from e_max 0.7,
// I_half 200 at 989 TFLOPS.
std::string write_trace(const std::string& path) {
  test::TraceGen g;
  g.base_us = 0;
  const std::array<std::array<int64_t, 3>, 4> shapes = {
      {{512, 4096, 4096}, {2048, 8192, 4096}, {128, 4096, 4096}, {4096, 4096, 1024}}};
  auto gemm_us = [](int64_t mi, int64_t ni, int64_t ki) {
    const auto m = static_cast<double>(mi);
    const auto n = static_cast<double>(ni);
    const auto k = static_cast<double>(ki);
    const double intensity = 2 * m * n * k / ((m * k + k * n + m * n) * 2);
    return 2 * m * n * k / (0.7 * intensity / (intensity + 200) * 989e12) * 1e6;
  };
  for (int step = 0; step < 2; ++step) {
    const double at = 10000.0 * step;
    g.annotation("ProfilerStep#" + std::to_string(step + 1), g.main_tid, at, 9000);
    double gpu = at + 100;
    double cpu = at + 10;
    for (const auto& [m, n, k] : shapes) {
      const double d = gemm_us(m, n, k);
      g.mm(m, n, k, "c10::BFloat16", g.main_tid, cpu, gpu, d, "nvjet_tst_128x256_64x4_1x2_h_bz");
      gpu += d + 3;
      cpu += 12;
    }
    for (const auto& [m, n, k] : shapes) {
      const double d = gemm_us(m, n, k);
      g.mm(m, n, k, "c10::BFloat16", g.autograd_tid, cpu, gpu, d,
           "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x128x64");
      gpu += d + 3;
      cpu += 12;
    }
    // From inside the last backward GEMM (64 us long) to 40 us after it.
    const double last_end = gpu - 3;
    g.kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 20,
             last_end - 50, 90, g.autograd_tid, cpu);
    g.annotation("Optimizer.step#AdamW.step", g.main_tid, cpu + 20, 30);
    g.kernel("void at::native::multi_tensor_apply_kernel<FusedAdamMathFunctor>", 7, gpu + 50, 25,
             g.main_tid, cpu + 25);
  }
  std::ofstream(path) << g.text();
  return path;
}

int run(const std::vector<std::string>& args, std::string& out) {
  std::ostringstream os;
  const int rc = app::calibrate_main(args, os);
  out = os.str();
  return rc;
}

}  // namespace

TEST_CASE("calibrate trace: text, JSON and the profile --out writes") {
  const std::string trace = write_trace("syncsim_test_trace.json");
  const std::string profile = "syncsim_test_trace_profile.yaml";
  std::string text;
  REQUIRE(run({"trace", trace, "--out", profile}, text) == 0);
  CHECK(text.find("NVIDIA H100 80GB HBM3") != std::string::npos);
  CHECK(text.find("peaks: the h100 preset") != std::string::npos);
  CHECK(text.find("gemm bf16  peak_tflops 989.0  efficiency = 0.7000 * I / (I + 200.00)") !=
        std::string::npos);
  CHECK(text.find("ProfilerStep#2") != std::string::npos);
  CHECK(text.find("attention efficiency: unknown") != std::string::npos);

  const auto p = calibration::read_profile_file(profile);
  REQUIRE(p.gemm.size() == 1);
  CHECK(p.gemm[0].e_max == doctest::Approx(0.7).epsilon(1e-4));
  CHECK(p.gemm[0].intensity_half == doctest::Approx(200).epsilon(1e-4));
  CHECK(p.kernel_launch_us == doctest::Approx(3.0));
  CHECK(p.gpu_name == "NVIDIA H100 80GB HBM3");

  std::string js;
  REQUIRE(run({"trace", trace, "--json", "--peak", "bf16=900"}, js) == 0);
  const auto j = nlohmann::json::parse(js);
  CHECK(j["gemm"][0]["peak_tflops"] == 900.0);
  CHECK(j["phase_rule"] == "autograd");
  CHECK(j["classes"]["gemm"]["kernels"] == 16);
  CHECK(j["classes"]["nccl"]["kernels"] == 2);
  CHECK(j["attention"].is_null());
  REQUIRE(j["steps"].size() == 2);
  // The all-reduce ends 40 us after the last backward GEMM: exposed, and all of it tail.
  CHECK(j["mean"]["exposed_comm_us"].get<double>() == doctest::Approx(40));
  CHECK(j["mean"]["tail_us"].get<double>() == doctest::Approx(40));
  CHECK(j["mean"]["optimizer_us"].get<double>() == doctest::Approx(25));
  CHECK(j["mean"]["forward_us"].get<double>() ==
        doctest::Approx(j["mean"]["backward_us"].get<double>()));

  // A scenario's workload.calibration takes the profile (GEMM curve and kernel overhead).
  const std::string scenario = "syncsim_test_trace_scenario.yaml";
  std::ofstream(scenario) << "name: traced\nfidelity: analytic\n"
                             "fabric:\n  topology: spine_leaf\n"
                             "  spine_leaf: {leaves: 2, hosts_per_leaf: 2, spines: 2}\n"
                             "  host: {gpus: 2, nics: 2}\n"
                             "workload: {model: gpt3-1.3b, gpu: h100, calibration: " +
                                 profile + "}\n";
  std::string predicted;
  REQUIRE(run({"trace", trace, "--scenario", scenario}, predicted) == 0);
  CHECK(predicted.find("scenario traced") != std::string::npos);
  CHECK(predicted.find("measured (mean)") != std::string::npos);
  CHECK(predicted.find("predicted with the trace's fit") != std::string::npos);
  std::string pj;
  REQUIRE(run({"trace", trace, "--scenario", scenario, "--json"}, pj) == 0);
  const auto pjs = nlohmann::json::parse(pj);
  REQUIRE(pjs["predicted"].size() == 2);
  CHECK(pjs["predicted"][0]["forward_us"].get<double>() > 0);
  // The scenario already carries this profile: both predictions agree.
  CHECK(pjs["predicted"][1]["step_us"].get<double>() ==
        doctest::Approx(pjs["predicted"][0]["step_us"].get<double>()).epsilon(1e-9));
  std::remove(scenario.c_str());
  std::remove(profile.c_str());
  std::remove(trace.c_str());
}

TEST_CASE("calibrate trace: bad input is an error, not a crash") {
  std::string out;
  CHECK_THROWS_AS(run({"trace"}, out), app::CalibrateUsageError);
  CHECK_THROWS_AS(run({"trace", "a.json", "b.json"}, out), app::CalibrateUsageError);
  CHECK_THROWS_AS(run({"trace", "a.json", "--bogus"}, out), app::CalibrateUsageError);
  CHECK_THROWS_AS(run({"trace", "a.json", "--set", "seed=2"}, out), app::CalibrateUsageError);
  CHECK_THROWS_AS(run({"trace", "a.json", "--peak", "bf16"}, out), app::CalibrateUsageError);
  const std::string bad = "syncsim_test_bad_trace.json";
  std::ofstream(bad) << "{\"traceEvents\": [{\"ph\": \"X\"";
  CHECK_THROWS_WITH_AS(run({"trace", bad}, out),
                       doctest::Contains("syncsim_test_bad_trace.json: expected a JSON trace"),
                       calibration::TraceError);
  std::remove(bad.c_str());
}

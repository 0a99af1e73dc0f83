// Profiler traces (Kineto JSON, written by profiler_trace_gen.hpp): kernel classes, the GEMM curve
// recovered from known efficiencies, attention efficiency, kernel overhead, step phases and exposed
// communication worked out by hand, and errors for traces that cannot be read.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <string>

#include "calibration/compute_fit.hpp"
#include "calibration/profiler_trace.hpp"
#include "calibration/trace_step_times.hpp"
#include "tests/calibration/profiler_trace_gen.hpp"

using namespace syncsim;
using calibration::KernelClass;
using calibration::Phase;
using Link = test::TraceGen::Link;

namespace {

double rel(double got, double want) { return std::abs(got - want) / want; }

std::string error_of(const std::string& text) {
  try {
    (void)calibration::parse_profiler_trace(text, "t.json");
  } catch (const calibration::TraceError& e) {
    return e.what();
  }
  return "";
}

// Peaks as the H100 SXM datasheet gives them (dense).
double h100_peak(const std::string& dtype) { return dtype == "bf16" ? 989.0 : 0.0; }

}  // namespace

TEST_CASE("profiler trace: kernel classes by name") {
  using calibration::classify_kernel;
  CHECK(
      classify_kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x"
                      "1x1_execute_segment_k_off_kernel__5x_cublas") == KernelClass::Gemm);
  CHECK(classify_kernel("ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn") ==
        KernelClass::Gemm);
  CHECK(classify_kernel(
            "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>") ==
        KernelClass::Gemm);
  CHECK(classify_kernel("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT") == KernelClass::Gemm);
  CHECK(classify_kernel("void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>") ==
        KernelClass::Attention);
  CHECK(classify_kernel("void flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<...>") ==
        KernelClass::Attention);
  CHECK(classify_kernel("fmha_cutlassF_bf16_aligned_64x128_rf_sm80") == KernelClass::Attention);
  CHECK(classify_kernel("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3") ==
        KernelClass::Attention);
  CHECK(classify_kernel(
            "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)") ==
        KernelClass::Nccl);
  CHECK(classify_kernel("ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)") ==
        KernelClass::Nccl);
  CHECK(classify_kernel(
            "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor>") ==
        KernelClass::Elementwise);
  CHECK(classify_kernel("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<>") ==
        KernelClass::Elementwise);
  CHECK(classify_kernel("triton_red_fused_rms_norm_0") == KernelClass::Elementwise);
  CHECK(classify_kernel("triton_tem_fused_addmm_3") == KernelClass::Gemm);
  CHECK(classify_kernel("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<"
                        "FusedAdamMathFunctor>") == KernelClass::Optimizer);
  CHECK(classify_kernel("void fused_adam_cuda_kernel<float>") == KernelClass::Optimizer);
  CHECK(classify_kernel("fast_hadamard_transform_kernel") == KernelClass::Other);
  CHECK(classify_kernel("void at::native::index_elementwise_kernel") == KernelClass::Elementwise);
  CHECK(classify_kernel("void at::native::embedding_backward_feature_kernel") ==
        KernelClass::Other);
}

TEST_CASE("profiler trace: GEMMs of known efficiency give back e_max 0.7 and I_half 200") {
  // Efficiency e = 0.7 I / (I + 200) of the 989 TFLOPS BF16 peak, times with +-0.8% jitter; the
  // linking alternates between the correlation arg and the ac2g flow alone.
  test::TraceGen g;
  const std::vector<std::array<int64_t, 3>> shapes = {
      {128, 1024, 1024},   {256, 2048, 1024},  {512, 4096, 4096},  {1024, 8192, 2048},
      {2048, 8192, 8192},  {4096, 4096, 4096}, {8192, 8192, 8192}, {64, 4096, 8192},
      {16384, 1024, 4096}, {32, 8192, 8192}};
  const char* names[] = {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_kernel",
                         "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT",
                         "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn"};
  g.annotation("ProfilerStep#1", g.main_tid, 0, 1e6);
  double t = 10, gpu = 100;
  int i = 0;
  for (int rep = 0; rep < 3; ++rep) {
    for (const auto& [mi, ni, ki] : shapes) {
      const auto m = static_cast<double>(mi);
      const auto n = static_cast<double>(ni);
      const auto k = static_cast<double>(ki);
      const double intensity = 2.0 * m * n * k / ((m * k + k * n + m * n) * 2.0);
      const double eff = 0.7 * intensity / (intensity + 200.0);
      const double jitter = 1.0 + 0.008 * ((i % 3) - 1);
      const double dur = 2.0 * m * n * k / (eff * 989e12) * 1e6 * jitter;
      g.mm(mi, ni, ki, "c10::BFloat16", g.main_tid, t, gpu, dur, names[i % 3],
           i % 2 == 0 ? Link::CorrelationAndFlow : Link::FlowOnly);
      t += 20;
      gpu += dur + 2.0;
      ++i;
    }
  }
  const auto trace = calibration::parse_profiler_trace(g.text(), "gemm.json");
  CHECK(trace.gpu_name == "NVIDIA H100 80GB HBM3");
  CHECK(trace.linked_launches == 30);
  const auto fit = calibration::fit_compute(trace, h100_peak);
  REQUIRE(fit.gemm_samples.size() == 30);
  REQUIRE(fit.gemm.size() == 1);
  CHECK(fit.gemm[0].dtype == "bf16");
  CHECK(fit.gemm[0].peak_tflops == 989.0);
  CHECK(rel(fit.gemm[0].e_max, 0.7) < 0.02);
  CHECK(rel(fit.gemm[0].intensity_half, 200.0) < 0.02);
  CHECK(fit.gemm[0].max_rel_error < 0.02);
  MESSAGE("recovered e_max " << fit.gemm[0].e_max << " (rel error " << rel(fit.gemm[0].e_max, 0.7)
                             << "), I_half " << fit.gemm[0].intensity_half << " (rel error "
                             << rel(fit.gemm[0].intensity_half, 200.0) << ")");
  // Back to back on one stream, each launched long before: the gap is 2 us.
  CHECK(fit.kernel_gaps == 29);
  CHECK(fit.kernel_gap_us == doctest::Approx(2.0).epsilon(1e-6));
  CHECK(fit.attention.empty());
}

TEST_CASE("profiler trace: shapes of addmm under linear, bmm and matmul; no peak, no fit") {
  test::TraceGen g;
  // linear -> addmm: the innermost matmul op gives the shape, [8, 512, 1024] x W[4096, 1024]^T.
  g.op("aten::linear", g.main_tid, 0, 30, {{8, 512, 1024}, {4096, 1024}, {4096}},
       {"c10::Half", "c10::Half", "c10::Half"});
  g.op("aten::addmm", g.main_tid, 5, 20, {{4096}, {4096, 1024}, {1024, 4096}, {}, {}},
       {"c10::Half", "c10::Half", "c10::Half", "Scalar", "Scalar"});
  g.kernel("sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x128x32", 7, 100, 50, g.main_tid, 10);
  g.op("aten::bmm", g.main_tid, 40, 10, {{32, 128, 64}, {32, 64, 256}}, {"c10::Half", "c10::Half"});
  g.kernel("cutlass_80_wmma_tensorop_f16_s161616gemm_f16_32x32_128x2_nn_align8", 7, 160, 20,
           g.main_tid, 45);
  const auto trace = calibration::parse_profiler_trace(g.text(), "shapes.json");
  REQUIRE(trace.kernels.size() == 2);
  REQUIRE(trace.kernels[0].matmul);
  CHECK(trace.kernels[0].launch_op == "aten::addmm");
  CHECK(trace.kernels[0].matmul->m == 4096);
  CHECK(trace.kernels[0].matmul->n == 4096);
  CHECK(trace.kernels[0].matmul->k == 1024);
  CHECK(trace.kernels[0].matmul->dtype == "fp16");
  REQUIRE(trace.kernels[1].matmul);
  CHECK(trace.kernels[1].matmul->batch == 32);
  CHECK(trace.kernels[1].matmul->m == 128);
  CHECK(trace.kernels[1].matmul->n == 256);
  CHECK(trace.kernels[1].matmul->k == 64);
  const auto fit = calibration::fit_compute(trace, h100_peak);  // no fp16 peak
  CHECK(fit.gemm.empty());
  REQUIRE_FALSE(fit.notes.empty());
  CHECK(fit.notes[0].find("--peak fp16=TFLOPS") != std::string::npos);
}

TEST_CASE("profiler trace: attention efficiency from flash-attention calls with shapes") {
  // b 2, h 16, s 4096, d 128, causal: forward 4 b h s^2 d / 2 FLOPs at half of 989 TFLOPS; the
  // backward (two kernels of one call) 2.5x the FLOPs at the same efficiency.
  test::TraceGen g;
  const double fwd_flops = 4.0 * 2 * 16 * 4096.0 * 4096.0 * 128 / 2;
  const double fwd_us = fwd_flops / (0.5 * 989e12) * 1e6;
  g.annotation("ProfilerStep#1", g.main_tid, 0, 10000);
  const nlohmann::json q = {2, 16, 4096, 128};
  g.op("aten::_scaled_dot_product_flash_attention", g.main_tid, 10, 20, {q, q, q, {}, {}, {}, {}},
       {"c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar", "Scalar", ""},
       {"", "", "", "0.", "True", "False", ""});
  g.kernel("void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>", 7, 100, fwd_us,
           g.main_tid, 15);
  g.op("aten::_scaled_dot_product_flash_attention_backward", g.autograd_tid, 500, 30,
       {q, q, q, q, q, {2, 16, 4096}},
       {"c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16",
        "float"},
       {"", "", "", "", "", "", "", "", "", "", "0.", "True", "", "", ""});
  g.kernel("void flash::flash_bwd_dot_do_o_kernel<true, Flash_bwd_kernel_traits>", 7, 1000,
           0.1 * 2.5 * fwd_us, g.autograd_tid, 505);
  g.kernel("void flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits>", 7,
           1000 + 0.1 * 2.5 * fwd_us, 0.9 * 2.5 * fwd_us, g.autograd_tid, 510);
  const auto trace = calibration::parse_profiler_trace(g.text(), "attn.json");
  REQUIRE(trace.kernels.size() == 3);
  REQUIRE(trace.kernels[0].attention);
  CHECK(trace.kernels[0].attention->causal);
  CHECK(trace.kernels[0].attention->heads == 16);
  CHECK(trace.kernels[2].attention->backward);
  CHECK(trace.kernels[2].phase == Phase::Backward);
  const auto fit = calibration::fit_compute(trace, h100_peak);
  REQUIRE(fit.attention.size() == 1);
  CHECK(fit.attention[0].dtype == "bf16");
  CHECK(fit.attention[0].calls == 2);
  CHECK(fit.attention[0].efficiency == doctest::Approx(0.5).epsilon(1e-6));
}

TEST_CASE("profiler trace: phases by autograd thread and Optimizer.step; exposed comm by hand") {
  // One step, all times in us from the trace's base:
  //   forward   gemm [0, 100) stream 7                      (main thread, aten::mm)
  //   backward  gemm [110, 200) stream 7                    (autograd thread, AddmmBackward0)
  //             nccl [150, 260) stream 20                   (overlapped 150-200, exposed 200-260)
  //   optimizer multi_tensor_apply [270, 300) stream 7      (inside Optimizer.step#AdamW.step)
  // forward 100, backward 90, optimizer 30, comm 110, exposed 60, tail 60, span 300, idle 20.
  test::TraceGen g;
  g.base_us = 0;
  g.annotation("ProfilerStep#7", g.main_tid, -50, 400);
  g.mm(64, 4096, 4096, "c10::BFloat16", g.main_tid, -40, 0, 100, "nvjet_tst_64x8_64x16_4x1_v_bz");
  g.op("autograd::engine::evaluate_function: AddmmBackward0", g.autograd_tid, -20, 30);
  g.op("AddmmBackward0", g.autograd_tid, -19, 25);
  g.mm(64, 4096, 4096, "c10::BFloat16", g.autograd_tid, -18, 110, 90,
       "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize64x128x64");
  g.op("c10d::allreduce_", g.autograd_tid, 5, 10);
  g.kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 20, 150,
           110, g.autograd_tid, 8);
  g.annotation("Optimizer.step#AdamW.step", g.main_tid, 100, 50);
  g.op("aten::_fused_adamw_", g.main_tid, 105, 20);
  g.kernel(
      "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<FusedAdamMathFunctor>", 7,
      270, 30, g.main_tid, 110);
  const auto trace = calibration::parse_profiler_trace(g.text(), "step.json");
  CHECK(trace.phase_rule == "autograd");
  REQUIRE(trace.kernels.size() == 4);
  CHECK(trace.kernels[0].phase == Phase::Forward);
  CHECK(trace.kernels[1].phase == Phase::Backward);
  CHECK(trace.kernels[1].launch_op == "aten::mm");
  CHECK(trace.kernels[3].phase == Phase::Optimizer);
  const auto m = calibration::measure_steps(trace);
  REQUIRE(m.steps.size() == 1);
  const auto& s = m.steps[0];
  CHECK(s.name == "ProfilerStep#7");
  CHECK(s.kernels == 4);
  CHECK(s.forward_us == doctest::Approx(100));
  CHECK(s.backward_us == doctest::Approx(90));
  CHECK(s.optimizer_us == doctest::Approx(30));
  CHECK(s.comm_us == doctest::Approx(110));
  CHECK(s.exposed_comm_us == doctest::Approx(60));
  CHECK(s.tail_us == doctest::Approx(60));
  CHECK(s.span_us == doctest::Approx(300));
  CHECK(s.busy_us == doctest::Approx(280));
}

TEST_CASE("profiler trace: NCCL hidden behind compute on another stream is not exposed") {
  // Two steps: in the first the all-reduce [20, 90) runs under the gemm [0, 100); in the second
  // it starts after compute ends, so all of it is exposed. Forward/backward annotations give the
  // phases.
  test::TraceGen g;
  g.base_us = 0;
  for (int step = 0; step < 2; ++step) {
    const double at = step * 1000.0;
    g.annotation("ProfilerStep#" + std::to_string(step), g.main_tid, at - 100, 900);
    g.annotation("## forward ##", g.main_tid, at - 90, 40);
    g.mm(1024, 1024, 1024, "c10::BFloat16", g.main_tid, at - 80, at, 100,
         "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn");
    g.annotation("## backward ##", g.main_tid, at - 40, 40);
    g.kernel("ncclKernel_AllReduce_RING_LL_Sum_bf16(ncclWorkElem)", 20,
             step == 0 ? at + 20 : at + 120, 70, g.main_tid, at - 30);
  }
  const auto trace = calibration::parse_profiler_trace(g.text(), "overlap.json");
  CHECK(trace.phase_rule == "annotations");
  const auto m = calibration::measure_steps(trace);
  REQUIRE(m.steps.size() == 2);
  CHECK(m.steps[0].comm_us == doctest::Approx(70));
  CHECK(m.steps[0].exposed_comm_us == doctest::Approx(0));
  CHECK(m.steps[0].tail_us == doctest::Approx(0));
  CHECK(m.steps[1].exposed_comm_us == doctest::Approx(70));
  CHECK(m.steps[1].tail_us == doctest::Approx(70));
  CHECK(m.mean.exposed_comm_us == doctest::Approx(35));
  CHECK(m.steps[0].forward_us == doctest::Approx(100));
  CHECK(m.steps[0].backward_us == doctest::Approx(0));
}

TEST_CASE("profiler trace: interval arithmetic") {
  using calibration::TimeInterval;
  CHECK(calibration::union_length({{0, 10}, {5, 15}, {20, 30}}) == doctest::Approx(25));
  CHECK(calibration::uncovered_length({{0, 100}}, {{10, 20}, {15, 30}, {90, 200}}) ==
        doctest::Approx(10 + 60));
  CHECK(calibration::uncovered_length({{0, 10}, {20, 30}}, {}) == doctest::Approx(20));
  CHECK(calibration::uncovered_length({{0, 10}}, {{-5, 50}}) == doctest::Approx(0));
}

TEST_CASE("profiler trace: without launches, kernel order and one whole-trace step") {
  test::TraceGen g;
  g.kernel("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT", 7, 0, 50, g.main_tid, 0, Link::None);
  g.kernel("void at::native::multi_tensor_apply_kernel<FusedAdamMathFunctor>", 7, 60, 10,
           g.main_tid, 0, Link::None);
  g.kernel("void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor>", 7, 75, 5,
           g.main_tid, 0, Link::None);
  const auto trace = calibration::parse_profiler_trace(g.text(), "bare.json");
  CHECK(trace.phase_rule == "kernel order");
  CHECK(trace.linked_launches == 0);
  REQUIRE(trace.steps.size() == 1);
  CHECK(trace.steps[0].name == "(whole trace)");
  CHECK(trace.warnings.size() == 2);
  const auto m = calibration::measure_steps(trace);
  CHECK(m.steps[0].forward_us == doctest::Approx(50));
  CHECK(m.steps[0].optimizer_us == doctest::Approx(15));
}

TEST_CASE("profiler trace: unreadable traces are `file: expected ..., found ...`") {
  CHECK(error_of("{\"traceEvents\": [").rfind("t.json: expected a JSON trace", 0) == 0);
  CHECK(error_of("{\"traceEvents\": [").find("found") != std::string::npos);
  CHECK(error_of("{\"schemaVersion\": 1}") ==
        "t.json: expected an object with a traceEvents list, found an object without one");
  CHECK(error_of("42") == "t.json: expected an object with a traceEvents list, found 42");
  const std::string no_kernels =
      R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1,)"
      R"( "ts": 5, "dur": 3}]})";
  CHECK(error_of(no_kernels).rfind("t.json: expected GPU kernels", 0) == 0);
  CHECK(error_of(no_kernels).find("found none") != std::string::npos);
  CHECK(error_of(R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "dur": 3}]})") ==
        "t.json: traceEvents[0]: expected a number ts (microseconds), found nothing");
  CHECK(error_of(R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1,)"
                 R"( "dur": -3}]})") ==
        "t.json: traceEvents[0]: expected a number dur >= 0 (microseconds), found -3");
  CHECK(error_of(R"({"traceEvents": [7]})") ==
        "t.json: traceEvents[0]: expected an event object, found 7");
  try {
    (void)calibration::read_profiler_trace("/nonexistent/trace.json");
    FAIL("no error");
  } catch (const calibration::TraceError& e) {
    CHECK(std::string(e.what()) ==
          "/nonexistent/trace.json: expected a readable trace file, found none");
  }
}

TEST_CASE("profiler trace: the events of a real torch.profiler trace") {
  // The events of facebookresearch/HolisticTraceAnalysis tests/data/call_stack/backward_thread.json
  // (commit c1235b44), trimmed of args the reader does not use: a ProfilerStep and "## backward ##"
  // on the training loop's thread, AddmmBackward0's aten::mm on autograd's thread launching a
  // CUTLASS GEMM (FP32 inputs) that runs 64 ms later on stream 7, tied by correlation 2131433.
  const std::string text = R"({"traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#552", "pid": 3914, "tid": 3914,
     "ts": 1666149715033200, "dur": 413451, "args": {"External id": 49220}},
    {"ph": "X", "cat": "user_annotation", "name": "## backward ##", "pid": 3914, "tid": 3914,
     "ts": 1666149715287655, "dur": 107988, "args": {"External id": 56949}},
    {"ph": "X", "cat": "cpu_op", "name": "autograd::engine::evaluate_function: AddmmBackward0",
     "pid": 3914, "tid": 24922, "ts": 1666149715364322, "dur": 145,
     "args": {"External id": 67242, "Fwd thread id": 1, "Sequence number": 714649}},
    {"ph": "X", "cat": "cpu_op", "name": "AddmmBackward0", "pid": 3914, "tid": 24922,
     "ts": 1666149715364324, "dur": 102,
     "args": {"External id": 67243, "Input Dims": [[2048, 2048]], "Input type": ["float"]}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 3914, "tid": 24922,
     "ts": 1666149715364330, "dur": 58, "args": {"External id": 67247,
     "Input Dims": [[2048, 2048], [2048, 256]], "Input type": ["float", "float"]}},
    {"ph": "X", "cat": "kernel",
     "name": "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>",
     "pid": 0, "tid": 7, "ts": 1666149715428509, "dur": 45,
     "args": {"External id": 2131433, "queued": 0, "device": 0, "context": 1, "stream": 7,
              "correlation": 2131433, "grid": [32, 1, 2], "block": [128, 1, 1]}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 3914, "tid": 24922,
     "ts": 1666149715364374, "dur": 10,
     "args": {"External id": 2131433, "cbid": 211, "correlation": 2131433}}
  ], "distributedInfo": {"rank": 0}})";
  const auto trace = calibration::parse_profiler_trace(text, "hta.json");
  REQUIRE(trace.kernels.size() == 1);
  const auto& k = trace.kernels[0];
  CHECK(k.kind == KernelClass::Gemm);
  CHECK(k.stream == 7);
  CHECK(k.launch_us == doctest::Approx(1666149715364374.0));
  CHECK(k.launch_op == "aten::mm");
  REQUIRE(k.matmul);
  CHECK(k.matmul->m == 2048);
  CHECK(k.matmul->k == 2048);
  CHECK(k.matmul->n == 256);
  CHECK(k.matmul->dtype == "fp32");
  CHECK(k.phase == Phase::Backward);
  CHECK(k.step == 0);
  CHECK(trace.phase_rule == "annotations");
  CHECK(trace.gpu_name.empty());
  const auto m = calibration::measure_steps(trace);
  CHECK(m.steps[0].backward_us == doctest::Approx(45));
  // 2 x 2048 x 256 x 2048 FLOP in 45 us: 47.7 TFLOPS of FP32 (TF32 tensor cores, an A100).
  const auto samples = calibration::trace_gemm_samples(trace);
  REQUIRE(samples.size() == 1);
  CHECK(samples[0].tflops == doctest::Approx(2.0 * 2048 * 256 * 2048 / 45e6));
}

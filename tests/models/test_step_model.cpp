#include <doctest/doctest.h>

#include <numeric>

#include "models/gpu.hpp"
#include "models/step_model.hpp"
#include "models/transformer.hpp"

using namespace syncsim;
using namespace syncsim::models;

TEST_CASE("transformer: preset parameter counts match the published ones") {
  // Hugging Face model cards / configs (exact counts) for Llama; GPT-3's paper gives rounded sizes.
  const std::pair<const char*, double> exact[] = {
      {"llama2-7b", 6'738'415'616.0},   {"llama2-13b", 13'015'864'320.0},
      {"llama2-70b", 68'976'648'192.0}, {"llama3-8b", 8'030'261'248.0},
      {"llama3-70b", 70'553'706'496.0},
  };
  for (const auto& [name, count] : exact) {
    const auto preset_name = name;  // CAPTURE is a lambda: clang 14 cannot capture a binding
    CAPTURE(preset_name);
    const auto s = transformer_preset(name);
    REQUIRE(s.has_value());
    CHECK(static_cast<double>(total_parameters(*s)) == doctest::Approx(count).epsilon(1e-6));
  }
  const std::pair<const char*, double> nominal[] = {
      {"gpt3-1.3b", 1.3e9}, {"gpt3-2.7b", 2.7e9}, {"gpt3-6.7b", 6.7e9},
      {"gpt3-13b", 13e9},   {"gpt3-175b", 175e9}, {"llama3-405b", 405e9},
  };
  for (const auto& [name, count] : nominal) {
    const auto preset_name = name;  // CAPTURE is a lambda: clang 14 cannot capture a binding
    CAPTURE(preset_name);
    const auto s = transformer_preset(name);
    REQUIRE(s.has_value());
    CHECK(static_cast<double>(total_parameters(*s)) == doctest::Approx(count).epsilon(0.02));
  }
  CHECK_FALSE(transformer_preset("gpt5").has_value());
}

TEST_CASE("transformer: training FLOPs per token follow PaLM's 6N + 12 L h s") {
  const auto s = *transformer_preset("llama2-7b");
  const double n = static_cast<double>(total_parameters(s));
  CHECK(training_flops_per_token(s) == doctest::Approx(6 * n + 12.0 * 32 * 4096 * 4096));
}

TEST_CASE("step model: DDP buckets follow PyTorch's caps and backward order") {
  for (const char* name : {"gpt3-1.3b", "llama2-7b", "llama3-70b"}) {
    const auto preset_name = name;  // CAPTURE is a lambda: clang 14 cannot capture a binding
    CAPTURE(preset_name);
    const auto s = *transformer_preset(name);
    const DdpParams ddp;
    const auto buckets = ddp_buckets(s, ddp);
    REQUIRE(buckets.size() > 10);
    int64_t total = 0;
    double last_ready = 0;
    for (std::size_t i = 0; i < buckets.size(); ++i) {
      total += buckets[i].size.count();
      CHECK(buckets[i].ready_at >= last_ready);
      last_ready = buckets[i].ready_at;
    }
    CHECK(total == total_parameters(s) * 2);
    CHECK(buckets.back().ready_at == 1.0);
    // Every bucket respects its cap unless one tensor alone is larger (then it is alone). The
    // largest single tensor is the embedding (vocab x hidden) or an MLP matrix.
    const int64_t largest_tensor =
        std::max<int64_t>(int64_t{s.vocab} * s.hidden, int64_t{2} * s.hidden * s.ffn) * 2 +
        int64_t{s.sequence} * s.hidden * 2;
    for (std::size_t i = 1; i < buckets.size(); ++i) {
      CHECK(buckets[i].size.count() <= std::max(ddp.bucket_cap.count(), largest_tensor));
    }
  }
  // GPT-3 1.3B ties its head: the first gradient ready is the final norm, a tiny first bucket
  // capped at 1 MiB.
  const auto gpt = ddp_buckets(*transformer_preset("gpt3-1.3b"), DdpParams{});
  CHECK(gpt.front().size.count() <= (1 << 20));
}

TEST_CASE("step model: closed-form limits") {
  StepInputs in;
  in.forward = Time::ms(100);
  in.backward = Time::ms(200);
  in.optimizer = Time::ms(10);
  const double flops = 1e18;
  SUBCASE("no communication gives fwd + bwd + optimizer") {
    const auto b = closed_form_step(in, flops, 8, 1e15);
    CHECK(b.step == Time::ms(310));
    CHECK(b.exposed_comm == Time::zero());
  }
  SUBCASE("sync that fits under backward exposes only the tail") {
    in.bucket_sync = {Time::ms(50), Time::ms(50), Time::ms(20)};
    const auto b = closed_form_step(in, flops, 8, 1e15);
    CHECK(b.sync_total == Time::ms(120));
    CHECK(b.tail == Time::ms(20));
    CHECK(b.exposed_comm == Time::ms(20));
    CHECK(b.step == Time::ms(330));
  }
  SUBCASE("sync longer than backward is exposed beyond it") {
    in.bucket_sync = {Time::ms(150), Time::ms(150), Time::ms(30)};
    const auto b = closed_form_step(in, flops, 8, 1e15);
    CHECK(b.step == Time::ms(100 + 300 + 30 + 10));
    CHECK(b.exposed_comm == Time::ms(130));
  }
  SUBCASE("MFU is in (0, 1] and falls as sync grows") {
    double previous = 2.0;
    for (int64_t ms : {0, 50, 100, 200, 400, 800}) {
      in.bucket_sync = {Time::ms(ms), Time::ms(ms / 10)};
      const auto b = closed_form_step(in, 0.9 * 0.31 * 8 * 1e15, 8, 1e15);
      CHECK(b.mfu > 0.0);
      CHECK(b.mfu <= 1.0);
      CHECK(b.mfu <= previous);
      previous = b.mfu;
    }
  }
}

TEST_CASE(
    "gpu: GEMM roofline reaches the efficiency cap on big shapes and is memory-bound on thin "
    "ones") {
  const auto h100 = *gpu_preset("h100");
  const double big = gemm_seconds(h100, DType::Bf16, 8192 * 4, 8192 * 4, 8192);
  const double ideal = 2.0 * 32768 * 32768 * 8192 / (989e12 * h100.max_gemm_efficiency);
  CHECK(big == doctest::Approx(ideal).epsilon(0.02));
  // A matrix-vector product moves far more bytes than it computes.
  const double gemv = gemm_seconds(h100, DType::Bf16, 16384, 1, 16384);
  const double bytes = (16384.0 * 16384 + 16384 + 16384) * 2 / h100.hbm_bytes_per_s;
  CHECK(gemv == doctest::Approx(bytes + h100.kernel_launch_s).epsilon(0.01));
  CHECK(gpu_preset("b200")->bf16_tflops > gpu_preset("h100")->bf16_tflops);
}

TEST_CASE("step model: compute times give a plausible MFU for Llama 2 7B on H100") {
  const auto s = *transformer_preset("llama2-7b");
  const auto h100 = *gpu_preset("h100");
  const auto t = compute_times(s, h100, ComputeParams{});
  const double tokens = s.sequence;
  const double mfu = training_flops_per_token(s) * tokens /
                     ((t.forward + t.backward).seconds() * h100.bf16_tflops * 1e12);
  // Compute-only MFU cannot exceed the GEMM efficiency cap and should not be far below it.
  CHECK(mfu < h100.max_gemm_efficiency);
  CHECK(mfu > 0.5);
  CHECK(t.backward.seconds() == doctest::Approx(2 * t.forward.seconds()).epsilon(0.1));
  ComputeParams full;
  full.recompute = Recompute::Full;
  CHECK(compute_times(s, h100, full).backward > t.backward);
}

TEST_CASE("per-layer breakdown: op classes sum to the block, recomputation in backward") {
  const auto model = *syncsim::models::transformer_preset("llama3-8b");
  const auto gpu = *syncsim::models::gpu_preset("h100");
  for (const auto recompute :
       {syncsim::models::Recompute::None, syncsim::models::Recompute::Selective,
        syncsim::models::Recompute::Full}) {
    CAPTURE(static_cast<int>(recompute));
    syncsim::models::ComputeParams p;
    p.micro_batch = 1;
    p.recompute = recompute;
    const syncsim::models::LayerCompute lc =
        syncsim::models::layer_compute(model, gpu, p, {8, 1, true});
    const auto forward = syncsim::models::block_forward_classes(lc);
    const auto backward = syncsim::models::block_backward_classes(lc);
    CHECK(forward.total() == doctest::Approx(lc.layer_forward).epsilon(1e-12));
    CHECK(backward.total() == doctest::Approx(lc.layer_backward).epsilon(1e-12));
    CHECK(forward.recompute == 0);
    CHECK(forward.elementwise > 0);
    CHECK(backward.mlp_up == doctest::Approx(2 * forward.mlp_up));
    // What is recomputed: nothing, the attention core (Megatron's selective), or the whole block.
    const double expected = recompute == syncsim::models::Recompute::None        ? 0.0
                            : recompute == syncsim::models::Recompute::Selective ? forward.attention
                                                                                 : lc.layer_forward;
    CHECK(backward.recompute == doctest::Approx(expected).epsilon(1e-9));
  }
}

// Tensor, context and pipeline parallelism composed with data parallelism (closed form).
#include <doctest/doctest.h>

#include "models/idle_collective_timer.hpp"
#include "models/parallelism.hpp"
#include "sim/backends/make_backend.hpp"
#include "step_fixtures.hpp"

using namespace syncsim;
using namespace syncsim::models;

namespace {

StepConfig config_for(const char* model, uint32_t ranks, ParallelLayout layout) {
  StepConfig c = step_fixtures::step_config(model, ranks);
  c.layout = layout;
  c.gpus_per_host = 8;
  return c;
}

}  // namespace

TEST_CASE("parallel: TP = CP = PP = 1 reproduces the DDP closed form exactly") {
  const auto spec = step_fixtures::eight_gpu_hosts(4, Bandwidth::gbps(200));
  for (uint32_t m : {1u, 3u}) {
    CAPTURE(m);
    auto c = config_for("gpt3-1.3b", 32, ParallelLayout{});
    c.grad_accumulation = m;
    Simulation sim(c.seed);
    auto backend = make_backend(Fidelity::Analytic, sim, spec);
    const StepResult ddp = simulate_ddp_step(*backend, spec, Fidelity::Analytic, c);
    const StepResult closed = simulate_parallel_step(spec, Fidelity::Analytic, c);
    CHECK(closed.engine == "closed_form");
    CHECK(closed.step == ddp.closed_form_step);
    CHECK(closed.forward == ddp.forward);
    CHECK(closed.backward == ddp.backward);
    CHECK(closed.buckets.size() == ddp.buckets.size());
    CHECK(closed.pipeline_bubble == Time::zero());
  }
}

TEST_CASE("parallel: 1F1B pipeline time and bubble") {
  const Time t = Time::ms(10);
  for (uint32_t p : {1u, 2u, 4u, 8u}) {
    for (uint32_t m : {1u, 4u, 16u}) {
      CAPTURE(p);
      CAPTURE(m);
      const auto pipe = pipeline_1f1b(std::vector<Time>(p, t), m);
      CHECK(pipe.total == t * (m + p - 1));
      // Megatron's definition: the bubble is (p - 1) / m of the ideal time m * t ...
      CHECK(pipe.bubble_fraction == doctest::Approx(static_cast<double>(p - 1) / m));
      // ... which is (p - 1) / (m + p - 1) of the pipeline's time.
      CHECK(pipe.bubble.seconds() / pipe.total.seconds() ==
            doctest::Approx(static_cast<double>(p - 1) / (m + p - 1)));
    }
  }
  // An uneven stage sets the pace: (m - 1) t_max + sum t_i.
  const auto uneven = pipeline_1f1b({Time::ms(10), Time::ms(10), Time::ms(15)}, 4);
  CHECK(uneven.total == Time::ms(3 * 15 + 35));
}

TEST_CASE("parallel: TP all-reduces move b*s*h*2 bytes, four per block, over NVLink") {
  const auto spec = step_fixtures::eight_gpu_hosts(2, Bandwidth::gbps(400));
  auto c = config_for("llama2-7b", 16, ParallelLayout{.tensor = 8});
  c.compute.micro_batch = 2;
  c.grad_accumulation = 2;
  const StepResult r = simulate_parallel_step(spec, Fidelity::Analytic, c);
  const CollectiveTiming* ar = step_fixtures::collective_row(r, "tp_all_reduce");
  REQUIRE(ar != nullptr);
  const int64_t act = int64_t{2} * 4096 * 4096 * 2;
  CHECK(ar->bytes == act);
  CHECK(tp_activation_bytes(c.model, c.compute, c.layout) == act);
  CHECK(ar->count == 4 * 32 * 2);  // 2 forward + 2 backward per block, 32 blocks, 2 micro-batches
  // A ring inside one host: 2 (t-1)/t S over NVLink (450 GB/s per direction), plus small latencies.
  const double nvlink = 3600e9 / 8;
  const double ideal = 2.0 * 7 / 8 * static_cast<double>(act) / nvlink;
  CHECK(ar->end.seconds() == doctest::Approx(ideal).epsilon(0.05));
  CHECK(r.tensor_parallel_comm == ar->end * ar->count);
  // Sequence parallelism: all-gather + reduce-scatter of the same buffer, the same bus traffic.
  c.layout.sequence_parallel = true;
  const StepResult sp = simulate_parallel_step(spec, Fidelity::Analytic, c);
  REQUIRE(step_fixtures::collective_row(sp, "tp_all_gather") != nullptr);
  REQUIRE(step_fixtures::collective_row(sp, "tp_reduce_scatter") != nullptr);
  CHECK(sp.tensor_parallel_comm.seconds() ==
        doctest::Approx(r.tensor_parallel_comm.seconds()).epsilon(0.05));
}

TEST_CASE("parallel: compute per GPU shrinks with TP and CP, pipeline stages split the layers") {
  const auto s = *transformer_preset("llama2-13b");
  const auto h100 = *gpu_preset("h100");
  ComputeParams p;
  p.micro_batch = 4;
  const LayerCompute one = layer_compute(s, h100, p);
  const LayerCompute tp2 = layer_compute(s, h100, p, ComputeSplit{.tensor = 2});
  const LayerCompute cp2 = layer_compute(s, h100, p, ComputeSplit{.context = 2});
  // GEMMs and attention halve; the replicated elementwise work (no sequence parallelism) does not.
  CHECK(tp2.layer_forward < 0.6 * one.layer_forward);
  CHECK(tp2.layer_forward > 0.5 * one.layer_forward);
  CHECK(cp2.layer_forward == doctest::Approx(0.5 * one.layer_forward).epsilon(0.05));
  const LayerCompute tp2sp =
      layer_compute(s, h100, p, ComputeSplit{.tensor = 2, .sequence_parallel = true});
  CHECK(tp2sp.layer_forward == doctest::Approx(0.5 * one.layer_forward).epsilon(0.05));
  CHECK(tp2.head_forward == doctest::Approx(0.5 * one.head_forward).epsilon(0.05));
  // Parameters split over TP and PP: the gradients a stage's DP group reduces.
  BucketScope stage{.first_layer = 0,
                    .layers = 20,
                    .input_embedding = true,
                    .output_head = false,
                    .tensor_parallel = 2};
  int64_t bytes = 0;
  for (const auto& b : ddp_buckets(s, DdpParams{}, stage)) bytes += b.size.count();
  const int64_t expected = (20 * (layer_parameters(s) - 2 * s.hidden) / 2 + 20 * 2 * s.hidden +
                            int64_t{s.vocab} * s.hidden / 2) *
                           2;
  CHECK(bytes == expected);
}

TEST_CASE("parallel: a 3D layout places TP inside hosts and reports its parts") {
  const auto spec = step_fixtures::eight_gpu_hosts(8, Bandwidth::gbps(400));
  auto c = config_for("llama2-13b", 64, ParallelLayout{.tensor = 4, .context = 1, .pipeline = 4});
  c.grad_accumulation = 8;
  const StepResult r = simulate_parallel_step(spec, Fidelity::Analytic, c);
  CHECK(r.data_parallel == 4);
  // Megatron order: TP innermost, then CP, DP, PP outermost (DP 4 here).
  CHECK(megatron_rank(r.layout, 4, 1, 0, 2, 3) == ((2 * 4 + 3) * 1 + 0) * 4 + 1);
  // TP group 0 is GPUs 0-3 (one host); DP group 0 is ranks 0, 4, 8, 12; stage 1 starts at 16.
  CHECK(megatron_rank(r.layout, 4, 3, 0, 0, 0) == 3);
  CHECK(megatron_rank(r.layout, 4, 0, 0, 0, 1) == 4);
  CHECK(megatron_rank(r.layout, 4, 0, 0, 1, 0) == 16);
  CHECK(r.pipeline_bubble > Time::zero());
  CHECK(r.bubble_fraction == doctest::Approx(3.0 / 8).epsilon(0.15));  // stages differ by the head
  CHECK(r.pipeline_p2p > Time::zero());
  CHECK(r.tensor_parallel_comm > Time::zero());
  CHECK(r.mfu > 0.0);
  CHECK(r.mfu < 0.75);
  CHECK(r.exposed_comm >= r.tensor_parallel_comm + r.pipeline_p2p);
  // The step covers the pipeline (compute, bubble, TP, sends) and the optimizer.
  CHECK(r.step >= r.forward + r.backward + r.optimizer);
  // Context parallelism: a K/V ring per block, overlapped with attention.
  auto cc = config_for("llama2-13b", 64, ParallelLayout{.tensor = 4, .context = 2, .pipeline = 2});
  const StepResult rc = simulate_parallel_step(spec, Fidelity::Analytic, cc);
  REQUIRE(step_fixtures::collective_row(rc, "cp_all_gather") != nullptr);
  CHECK(rc.context_parallel_exposed >= Time::zero());
}

TEST_CASE("parallel: collectives are timed as placed, with every group of a kind at once") {
  // Hosts of 2 GPUs sharing one NIC. Two data-parallel groups (one per TP rank) each span all
  // hosts: run together on the flow backend they share every NIC, so each takes about twice as long
  // as one group alone. (The analytic backend has no contention: there they would not interact.)
  topo::FabricParams p;
  p.spine_leaf.leaves = 2;
  p.spine_leaf.hosts_per_leaf = 2;
  p.spine_leaf.spines = 2;
  p.host.gpus = 2;
  p.host.nics = 1;
  const auto spec = topo::build_fabric(p);
  auto c = config_for("gpt3-1.3b", 8, ParallelLayout{.tensor = 2});
  IdleCollectiveTimer timer(spec, Fidelity::Flow, c);
  const std::vector<uint32_t> even = {0, 2, 4, 6};
  const std::vector<uint32_t> odd = {1, 3, 5, 7};
  const int64_t bytes = 64 << 20;
  const Time alone =
      timer.time(CollectiveOp::AllReduce, CollectiveAlgo::Ring, {even}, bytes).duration;
  const Time together =
      timer.time(CollectiveOp::AllReduce, CollectiveAlgo::Ring, {even, odd}, bytes).duration;
  CHECK(together.seconds() == doctest::Approx(2 * alone.seconds()).epsilon(0.1));

  // Tensor parallelism beyond a host goes over the network: TP 16 on 8-GPU hosts costs far more
  // per all-reduce than TP 8 inside one.
  const auto big = step_fixtures::eight_gpu_hosts(4, Bandwidth::gbps(400));
  auto tp8 = config_for("llama2-7b", 32, ParallelLayout{.tensor = 8});
  auto tp16 = config_for("llama2-7b", 32, ParallelLayout{.tensor = 16});
  const auto r8 = simulate_parallel_step(big, Fidelity::Analytic, tp8);
  const auto r16 = simulate_parallel_step(big, Fidelity::Analytic, tp16);
  const auto* ar8 = step_fixtures::collective_row(r8, "tp_all_reduce");
  const auto* ar16 = step_fixtures::collective_row(r16, "tp_all_reduce");
  REQUIRE(ar8 != nullptr);
  REQUIRE(ar16 != nullptr);
  CHECK(ar16->end > ar8->end * 3);
}

TEST_CASE(
    "compute: causal attention does the lower triangle of tiles; FP8 only in the linear "
    "layers") {
  const auto s = *transformer_preset("llama3-8b");
  const auto h100 = *gpu_preset("h100");
  ComputeParams p;
  p.micro_batch = 1;
  p.attention_kernel = AttentionKernel::Unfused;  // the GEMM path, checked by hand below
  const LayerCompute bf16 = layer_compute(s, h100, p);
  // The batched score and value GEMMs of a full (unmasked) attention, by hand ...
  const double head_dim = static_cast<double>(s.hidden) / s.heads;
  const double batch_heads = s.heads;
  const double full =
      batch_heads * (gemm_seconds(h100, DType::Bf16, s.sequence, s.sequence, head_dim) +
                     gemm_seconds(h100, DType::Bf16, s.sequence, head_dim, s.sequence)) -
      2 * (batch_heads - 1) * h100.kernel_launch_s;
  // ... of which a causal mask keeps the lower triangle and the 128-wide diagonal tiles.
  const double share = (1.0 + 128.0 / s.sequence) / 2.0;
  CHECK(share == doctest::Approx(0.5078).epsilon(1e-3));
  CHECK(bf16.attention_forward == doctest::Approx(share * full).epsilon(1e-9));
  CHECK(bf16.attention_backward == doctest::Approx(2 * share * full).epsilon(1e-9));

  // FP8 runs the four linear layers at the FP8 peak; attention and the logits stay in BF16.
  p.dtype = DType::Fp8;
  const LayerCompute fp8 = layer_compute(s, h100, p);
  CHECK(fp8.attention_forward == bf16.attention_forward);
  CHECK(fp8.head_forward == bf16.head_forward);
  for (auto [f, b] : {std::pair{fp8.qkv_forward, bf16.qkv_forward},
                      std::pair{fp8.attention_out_forward, bf16.attention_out_forward},
                      std::pair{fp8.mlp_up_forward, bf16.mlp_up_forward},
                      std::pair{fp8.mlp_down_forward, bf16.mlp_down_forward}}) {
    CHECK(f < 0.6 * b);  // twice the peak, less the launch and the memory-bound edge
    CHECK(f > 0.4 * b);
  }
  // ... and the FP8 casts of the linear layers' inputs are memory-bound work of their own.
  CHECK(fp8.elementwise_forward > bf16.elementwise_forward);
  CHECK(fp8.layer_forward - bf16.layer_forward ==
        doctest::Approx((fp8.qkv_forward + fp8.attention_out_forward + fp8.mlp_up_forward +
                         fp8.mlp_down_forward + fp8.elementwise_forward) -
                        (bf16.qkv_forward + bf16.attention_out_forward + bf16.mlp_up_forward +
                         bf16.mlp_down_forward + bf16.elementwise_forward)));
}

// Mixture-of-experts shapes (DeepSeek-V3, Mixtral) and expert parallelism in the closed-form step:
// parameter and FLOP counts against the published totals, the all-to-all sizes against the
// formula by hand, the layout rule, and that dense models are untouched.
#include <doctest/doctest.h>

#include <stdexcept>

#include "models/communication_memory.hpp"
#include "models/expert_parallel.hpp"
#include "models/idle_collective_timer.hpp"
#include "models/parallelism.hpp"
#include "step_fixtures.hpp"

using namespace syncsim;
using namespace syncsim::models;

namespace {

// llama2-7b, TP 2 x PP 2 x DP 8, 4 micro-batches on four 8-GPU hosts (the test below): its step
// in picoseconds, recorded when mixture-of-experts support landed, after checking that every
// value of nine dense scenario runs (DDP, FSDP, TP/CP/PP, distributed optimizer) was bit-identical
// to main's before it; re-recorded when the compute model moved to kernel-level GEMM shapes,
// attention rates and memory-bound ops (the comparison is between expert_parallel 1 and a dense
// run of the same compute model).
constexpr int64_t kDenseStepBeforeMoe = 474010633274;

// Mixtral on `ranks` H100s of 8-GPU hosts with a 4096-token sequence (small enough to run fast).
StepConfig mixtral(uint32_t ranks) {
  StepConfig c = step_fixtures::step_config("mixtral-8x7b", ranks);
  c.model.sequence = 4096;
  c.gpus_per_host = 8;
  c.grad_accumulation = 2;
  return c;
}

}  // namespace

TEST_CASE("moe: DeepSeek-V3 and Mixtral parameter counts match the published totals") {
  // DeepSeek-V3 technical report (arXiv:2412.19437, abstract and section 4.2): 671B parameters in
  // total, 37B activated per token (the main model; the 14B multi-token-prediction module apart).
  const TransformerShape ds = *transformer_preset("deepseek-v3");
  CHECK(is_moe(ds));
  CHECK(moe_layer_count(ds) == 58);
  CHECK(static_cast<double>(total_parameters(ds)) == doctest::Approx(671e9).epsilon(0.005));
  // 37.5B by the shape (embedding and output head included), 1.5 % above the rounded 37B.
  CHECK(static_cast<double>(activated_parameters(ds)) == doctest::Approx(37e9).epsilon(0.02));
  // Mixtral of Experts (arXiv:2401.04088, section 2): 47B parameters, 13B active; the model card
  // gives 46.7B and 12.9B.
  const TransformerShape mx = *transformer_preset("mixtral-8x7b");
  CHECK(static_cast<double>(total_parameters(mx)) == doctest::Approx(46.7e9).epsilon(0.005));
  CHECK(static_cast<double>(activated_parameters(mx)) == doctest::Approx(12.9e9).epsilon(0.005));
  // By hand: 8 experts of 3 x 4096 x 14336, top-2; attention 2 x 4096^2 + 2 x 4096 x 1024.
  const int64_t expert = 3LL * 4096 * 14336;
  CHECK(expert_parameters(mx) == expert);
  CHECK(total_parameters(mx) - activated_parameters(mx) == 32LL * 6 * expert);
  // A dense model activates all of itself.
  const TransformerShape dense = *transformer_preset("llama3-70b");
  CHECK(!is_moe(dense));
  CHECK(activated_parameters(dense) == total_parameters(dense));
}

TEST_CASE("moe: training FLOPs count the activated experts only") {
  const TransformerShape mx = *transformer_preset("mixtral-8x7b");
  const double s = mx.sequence;
  // 6 x activated parameters + 12 L h s (standard attention, head dim h / heads).
  CHECK(training_flops_per_token(mx) ==
        doctest::Approx(6.0 * static_cast<double>(activated_parameters(mx)) + 12.0 * 32 * 4096 * s)
            .epsilon(1e-12));
  // MLA: scores over the 192-wide query/key heads, values 128 wide, 128 heads:
  // 6 L s heads (d_qk + d_v).
  const TransformerShape ds = *transformer_preset("deepseek-v3");
  CHECK(training_flops_per_token(ds) ==
        doctest::Approx(6.0 * static_cast<double>(activated_parameters(ds)) +
                        6.0 * 61 * 4096 * 128 * (192 + 128))
            .epsilon(1e-12));
  CHECK(training_flops_per_token(ds) < 0.1 * 6.0 * static_cast<double>(total_parameters(ds)));
}

TEST_CASE("moe: MFU counts the activated FLOPs of the step") {
  const auto spec = step_fixtures::eight_gpu_hosts(4);
  StepConfig c = mixtral(32);
  c.layout.expert = 8;
  const StepResult r = simulate_parallel_step(spec, Fidelity::Analytic, c);
  const double tokens = 32.0 * 2 * 4096;  // DP 32, 2 micro-batches of one sequence
  CHECK(r.tokens_per_step == doctest::Approx(tokens));
  CHECK(r.mfu * r.step.seconds() * 32 * peak_flops(c.gpu, c.compute.dtype) ==
        doctest::Approx(training_flops_per_token(c.model) * tokens).epsilon(1e-9));
}

TEST_CASE("moe: expert-parallel groups are carved out of the data-parallel ranks") {
  // TP 1, CP 2, PP 2, DP 8: the DP x CP ranks of a stage are j = d * CP + c; EP 4 groups four
  // consecutive j, the expert-data-parallel group the j with the same j mod 4.
  ParallelLayout l;
  l.context = 2;
  l.pipeline = 2;
  l.expert = 4;
  CHECK(expert_data_parallel(l, 8) == 4);
  const auto ep = expert_parallel_rank_groups(l, 8);
  REQUIRE(ep.size() == 2 * 4);
  CHECK(ep[0] == std::vector<uint32_t>{0, 1, 2, 3});
  CHECK(ep[4] == std::vector<uint32_t>{16, 17, 18, 19});  // stage 1 starts at DP x CP = 16
  const auto edp = expert_data_parallel_rank_groups(l, 8, 1);
  REQUIRE(edp.size() == 4);
  CHECK(edp[1] == std::vector<uint32_t>{17, 21, 25, 29});
  // Errors name what does not divide.
  const TransformerShape mx = *transformer_preset("mixtral-8x7b");
  ParallelLayout bad;
  bad.expert = 3;
  CHECK_THROWS_WITH_AS(check_expert_layout(mx, bad, 6),
                       "expected an expert-parallel degree dividing the 8 routed experts, got 3",
                       std::invalid_argument);
  bad.expert = 8;
  CHECK_THROWS_WITH_AS(check_expert_layout(mx, bad, 4),
                       "expected an expert-parallel degree dividing data_parallel x "
                       "context_parallel (4 x 1 = 4), got 8",
                       std::invalid_argument);
  CHECK_THROWS_AS(check_expert_layout(*transformer_preset("llama3-8b"), bad, 8),
                  std::invalid_argument);
}

TEST_CASE("moe: all-to-all bytes per rank are T k h 2, S / EP to each peer") {
  const auto spec = step_fixtures::eight_gpu_hosts(4);
  StepConfig c = mixtral(32);
  c.layout.expert = 8;
  const int64_t s = 1LL * 4096 * 2 * 4096 * 2;  // T k h 2: 4096 tokens, top-2, bf16
  CHECK(ep_all_to_all_bytes(c.model, c.compute, c.layout, std::nullopt) == s);
  CHECK(ep_all_to_all_bytes(c.model, c.compute, c.layout, 1.25) == s * 5 / 4);
  const StepResult r = simulate_parallel_step(spec, Fidelity::Analytic, c);
  const CollectiveTiming* row = step_fixtures::collective_row(r, "ep_all_to_all");
  REQUIRE(row != nullptr);
  CHECK(row->bytes == s);
  // Dispatch + combine, forward and backward, on 32 MoE layers and 2 micro-batches.
  CHECK(row->count == 4 * 32 * 2);
  // Exposed: every one of them on the critical path.
  CHECK(r.expert_all_to_all == row->end * row->count);
  // Each rank keeps its own 1/8 and sends 7/8 of S (1/8 to each of 7 peers).
  IdleCollectiveTimer timer(spec, Fidelity::Analytic, c);
  const auto& t =
      timer.time(CollectiveOp::AllToAll, CollectiveAlgo::Pairwise, {{0, 1, 2, 3, 4, 5, 6, 7}}, s);
  CHECK(t.bytes_per_gpu == s / 8 * 7);
  // EP 8 is one host: the exchange runs on NVLink, at least 7/8 S over the GPU's NVLink bandwidth.
  const double nvlink = step_fixtures::eight_gpu_host_params(4, Bandwidth::gbps(400))
                            .links.nvlink.bandwidth.bytes_per_second();
  CHECK(row->end.seconds() >= 7.0 / 8 * static_cast<double>(s) / nvlink);
  CHECK(row->end.seconds() < 1.5 * 7.0 / 8 * static_cast<double>(s) / nvlink);
  // EP 16 (a 16-expert variant) spans two hosts: half of S leaves through the GPU's own 400G NIC.
  c.model.experts = 16;
  c.layout.expert = 16;
  const StepResult wide = simulate_parallel_step(spec, Fidelity::Analytic, c);
  const CollectiveTiming* wide_row = step_fixtures::collective_row(wide, "ep_all_to_all");
  REQUIRE(wide_row != nullptr);
  const double nic = Bandwidth::gbps(400).bytes_per_second();
  CHECK(wide_row->end.seconds() >= 0.5 * static_cast<double>(s) / nic);
  // The pairwise schedule is above the bound: each sender moves to its next peer as soon as its
  // own send ends, so the senders whose step is on NVLink run ahead and some NICs then receive
  // from two senders at once (1.93 x the bound here, measured when this test was written).
  CHECK(wide_row->end.seconds() < 2.0 * 0.5 * static_cast<double>(s) / nic);
  CHECK(wide.expert_all_to_all > r.expert_all_to_all);
}

TEST_CASE("moe: experts' gradients reduce over the expert-data-parallel group") {
  const auto spec = step_fixtures::eight_gpu_hosts(4);
  StepConfig c = mixtral(32);
  c.layout.expert = 1;
  const StepResult ep1 = simulate_parallel_step(spec, Fidelity::Analytic, c);
  c.layout.expert = 8;
  const StepResult ep8 = simulate_parallel_step(spec, Fidelity::Analytic, c);
  // Each GPU holds 1/8 of the experts: memory and optimizer shrink, the dense part stays.
  const double experts = 32.0 * 8 * static_cast<double>(expert_parameters(c.model));
  CHECK(ep1.memory_per_gpu_bytes - ep8.memory_per_gpu_bytes ==
        doctest::Approx(16.0 * experts * 7 / 8).epsilon(1e-6));
  CHECK(ep8.optimizer < ep1.optimizer);
  // EP 1: no all-to-all at all, and the compute of every expert on each GPU's tokens is the same
  // work (balanced routing), only in 8 times more GEMMs of 1/8 the rows.
  CHECK(ep1.expert_all_to_all == Time::zero());
  CHECK(step_fixtures::collective_row(ep1, "ep_all_to_all") == nullptr);
  // Gradient bytes: with EP 8 the 32-rank DP group reduces only the dense part and 8 groups of 4
  // reduce 1/8 of the experts each, so each GPU sends far less.
  CHECK(ep8.sync < ep1.sync);
}

TEST_CASE("moe: expert_parallel 1 on a dense model changes nothing") {
  const auto spec = step_fixtures::eight_gpu_hosts(4);
  StepConfig c = step_fixtures::step_config("llama2-7b", 32);
  c.gpus_per_host = 8;
  c.layout.tensor = 2;
  c.layout.pipeline = 2;
  c.grad_accumulation = 4;
  const StepResult plain = simulate_parallel_step(spec, Fidelity::Analytic, c);
  c.layout.expert = 1;
  const StepResult ep1 = simulate_parallel_step(spec, Fidelity::Analytic, c);
  CHECK(ep1.step == plain.step);
  CHECK(ep1.bytes_per_gpu == plain.bytes_per_gpu);
  CHECK(ep1.expert_all_to_all == Time::zero());
  // The step time recorded on main before mixture-of-experts support (same config): bit-identical.
  CHECK(plain.step.picoseconds() == kDenseStepBeforeMoe);
}

TEST_CASE("moe: deterministic") {
  const auto spec = step_fixtures::eight_gpu_hosts(4);
  StepConfig c = mixtral(32);
  c.layout.expert = 8;
  c.layout.distributed_optimizer = true;
  c.capacity_factor = 1.25;
  const StepResult a = simulate_parallel_step(spec, Fidelity::Analytic, c);
  const StepResult b = simulate_parallel_step(spec, Fidelity::Analytic, c);
  CHECK(a.step == b.step);
  CHECK(a.expert_all_to_all == b.expert_all_to_all);
  CHECK(a.bytes_per_gpu == b.bytes_per_gpu);
  CHECK(a.memory_per_gpu_bytes == b.memory_per_gpu_bytes);
  // A capacity factor pads every expert's input: more bytes and more compute than dropless.
  c.capacity_factor.reset();
  const StepResult dropless = simulate_parallel_step(spec, Fidelity::Analytic, c);
  CHECK(dropless.expert_all_to_all < a.expert_all_to_all);
  CHECK(dropless.forward < a.forward);
}

TEST_CASE("moe: EP x TP dispatches T / TP tokens and gathers them over TP (closed form)") {
  // Mixtral EP 8 x TP 2 x DP 16 with sequence parallelism on four 8-GPU hosts: each rank holds
  // T / TP = 2048 of the 4096 tokens, dispatches their top-2 copies over its EP group (ranks of
  // the same TP rank, 2 apart), and all-gathers the received tokens over its TP pair.
  const auto spec = step_fixtures::eight_gpu_hosts(4);
  StepConfig c = mixtral(32);
  c.layout.tensor = 2;
  c.layout.sequence_parallel = true;
  c.layout.expert = 8;
  const int64_t dispatched = 1LL * 2048 * 2 * 4096 * 2;  // T / TP k h 2
  const int64_t gathered = 1LL * 4096 * 2 * 4096 * 2;    // T k h 2: TP pieces of the above
  CHECK(ep_all_to_all_bytes(c.model, c.compute, c.layout, std::nullopt) == dispatched);
  CHECK(ep_tensor_gather_bytes(c.model, c.compute, c.layout, std::nullopt) == gathered);
  CHECK(ep_tensor_gather_bytes(c.model, c.compute, c.layout, 1.25) == gathered * 5 / 4);
  const auto ep_groups = expert_parallel_rank_groups(c.layout, 16);
  REQUIRE(ep_groups.size() == 2 * 2);  // per TP rank, two groups of the 16 DP ranks
  CHECK(ep_groups[0] == std::vector<uint32_t>{0, 2, 4, 6, 8, 10, 12, 14});
  CHECK(ep_groups[2] == std::vector<uint32_t>{1, 3, 5, 7, 9, 11, 13, 15});

  const StepResult r = simulate_parallel_step(spec, Fidelity::Analytic, c);
  const CollectiveTiming* a2a = step_fixtures::collective_row(r, "ep_all_to_all");
  const CollectiveTiming* ag = step_fixtures::collective_row(r, "ep_tp_all_gather");
  const CollectiveTiming* rs = step_fixtures::collective_row(r, "ep_tp_reduce_scatter");
  const CollectiveTiming* tp_ag = step_fixtures::collective_row(r, "tp_all_gather");
  const CollectiveTiming* tp_rs = step_fixtures::collective_row(r, "tp_reduce_scatter");
  REQUIRE(a2a != nullptr);
  REQUIRE(ag != nullptr);
  REQUIRE(rs != nullptr);
  REQUIRE(tp_ag != nullptr);
  REQUIRE(tp_rs != nullptr);
  CHECK(a2a->bytes == dispatched);
  CHECK(ag->bytes == gathered);
  CHECK(rs->bytes == gathered);
  // One all-gather (after dispatch) and one reduce-scatter (before combine) per direction, on 32
  // MoE layers and 2 micro-batches.
  CHECK(a2a->count == 4 * 32 * 2);
  CHECK(ag->count == 2 * 32 * 2);
  CHECK(rs->count == 2 * 32 * 2);
  // Timed on the idle fabric with every TP pair at once, as the dense TP collectives.
  IdleCollectiveTimer timer(spec, Fidelity::Analytic, c);
  std::vector<std::vector<uint32_t>> pairs;
  for (uint32_t g = 0; g < 16; ++g) pairs.push_back({2 * g, 2 * g + 1});
  CHECK(ag->end ==
        timer.time(CollectiveOp::AllGather, CollectiveAlgo::Ring, pairs, gathered).duration);
  CHECK(rs->end ==
        timer.time(CollectiveOp::ReduceScatter, CollectiveAlgo::Ring, pairs, gathered).duration);
  // A ring all-gather over 2 ranks moves half of S out of each GPU, over NVLink here.
  const double nvlink = step_fixtures::eight_gpu_host_params(4, Bandwidth::gbps(400))
                            .links.nvlink.bandwidth.bytes_per_second();
  CHECK(ag->end.seconds() >= 0.5 * static_cast<double>(gathered) / nvlink);
  // Mixtral has no shared experts: an MoE block's TP collectives of the activations are the
  // attention's all-gather and reduce-scatter (one pair forward, one backward), its MLP's pair
  // replaced by the dispatched tokens' gather and scatter.
  CHECK(tp_ag->count == 2 * 32 * 2);
  CHECK(tp_rs->count == 2 * 32 * 2);
  // Exposed: all of them.
  CHECK(r.tensor_parallel_comm ==
        (tp_ag->end + tp_rs->end) * (2 * 32 * 2) + (ag->end + rs->end) * (2 * 32 * 2));
  CHECK(r.expert_all_to_all == a2a->end * a2a->count);
  // Each GPU sends 7/8 of the dispatched bytes per all-to-all and half of the gathered buffer per
  // all-gather or reduce-scatter, and half of the activations per MLP TP collective it no longer
  // runs.
  const int64_t act = 1LL * 4096 * 4096 * 2;
  const int64_t ep_bytes = dispatched / 8 * 7 * 4 + gathered / 2 * 4 - act / 2 * 4;
  const StepResult no_ep = [&] {
    StepConfig d = c;
    d.layout.expert = 1;
    return simulate_parallel_step(spec, Fidelity::Analytic, d);
  }();
  CHECK(step_fixtures::collective_row(no_ep, "ep_tp_all_gather") == nullptr);
  // With a shared expert (a TP-sharded MLP on every token) the MoE block keeps its MLP's pair.
  StepConfig shared = c;
  shared.model.shared_experts = 1;
  const StepResult with_shared = simulate_parallel_step(spec, Fidelity::Analytic, shared);
  REQUIRE(step_fixtures::collective_row(with_shared, "tp_all_gather") != nullptr);
  CHECK(step_fixtures::collective_row(with_shared, "tp_all_gather")->count == 4 * 32 * 2);
  // Besides the expert collectives, EP 8 changes only the gradient collectives' bytes.
  const int64_t dp_change = r.bytes_per_gpu - no_ep.bytes_per_gpu - ep_bytes * 32 * 2;
  CHECK(dp_change < 0);  // the experts' gradients reduce over 2-rank groups instead of 16
}

TEST_CASE("moe: EP x TP compute and memory by hand") {
  StepConfig c = mixtral(32);
  c.layout.tensor = 2;
  c.layout.sequence_parallel = true;
  c.layout.expert = 8;
  const ComputeSplit split{2, 1, true};
  const LayerCompute dense = layer_compute(c.model, c.gpu, c.compute, split);
  const LayerCompute moe = moe_layer_compute(c.model, c.gpu, c.compute, split, 8, std::nullopt);
  // By hand: T = 4096 tokens, T / TP = 2048 on the rank; one local expert (8 / EP 8) gets the EP
  // group's 8 x 2048 x 2 token copies of its TP rank, gathered over TP: 8192 rows, the SwiGLU up
  // (gate and up) 2 x 14336 / 2 wide and the down 14336 / 2 deep; the router a 2048 x 8 x 4096
  // GEMM (bf16); the permutations read and write 2048 x 2 x 4096 x 2 bytes twice.
  const double up = gemm_seconds(c.gpu, c.compute.dtype, 8192, 14336, 4096);
  const double down = gemm_seconds(c.gpu, c.compute.dtype, 8192, 4096, 7168);
  const double router = gemm_seconds(c.gpu, DType::Bf16, 2048, 8, 4096);
  const double permute = 2 * 2.0 * 2048 * 2 * 4096 * 2 / c.gpu.hbm_bytes_per_s;
  CHECK(moe.mlp_up_forward == doctest::Approx(up).epsilon(1e-12));
  CHECK(moe.mlp_down_forward == doctest::Approx(down).epsilon(1e-12));
  const double forward = dense.layer_forward - dense.mlp_up_forward - dense.mlp_down_forward +
                         router + up + down + permute;
  CHECK(moe.layer_forward == doctest::Approx(forward).epsilon(1e-12));
  // Memory: the routed experts are sharded by EP and by TP. Against EP 1 (each GPU all 8 experts'
  // TP halves), EP 8 keeps 1/8 of them: 16 bytes (weights, gradients, Adam) per parameter saved,
  // less NCCL's point-to-point buffers, as the EP groups (16 ranks' span) cross two hosts.
  const auto spec = step_fixtures::eight_gpu_hosts(4);
  const StepResult ep8 = simulate_parallel_step(spec, Fidelity::Analytic, c);
  c.layout.expert = 1;
  const StepResult ep1 = simulate_parallel_step(spec, Fidelity::Analytic, c);
  const double experts_tp_shard = 32.0 * 8 * static_cast<double>(expert_parameters(c.model)) / 2;
  CHECK(ep1.memory_per_gpu_bytes - ep8.memory_per_gpu_bytes ==
        doctest::Approx(16.0 * experts_tp_shard * 7 / 8 - nccl_p2p_buffer_bytes(c.channels))
            .epsilon(1e-9));
}

TEST_CASE("moe: EP x TP needs sequence parallelism") {
  const TransformerShape mx = *transformer_preset("mixtral-8x7b");
  ParallelLayout l;
  l.tensor = 2;
  l.expert = 8;
  CHECK_THROWS_WITH_AS(check_expert_layout(mx, l, 16),
                       "expected sequence_parallel: true with tensor_parallel 2 and "
                       "expert_parallel 8 (Megatron-Core trains MoE layers under tensor "
                       "parallelism only with sequence parallelism), got sequence_parallel: false",
                       std::invalid_argument);
  l.sequence_parallel = true;
  CHECK_NOTHROW(check_expert_layout(mx, l, 16));
  // TP 1 needs nothing more.
  l.tensor = 1;
  l.sequence_parallel = false;
  CHECK_NOTHROW(check_expert_layout(mx, l, 16));
}

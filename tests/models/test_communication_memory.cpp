// NCCL's buffers and DDP's gradient buckets in the step's memory estimate: NCCL's buffer sizes by
// hand from its constants, the connections per channel of each algorithm, and each step engine's
// share against a hand count of its communicators.
#include <doctest/doctest.h>

#include "models/communication_memory.hpp"
#include "models/fsdp.hpp"
#include "models/parallelism.hpp"
#include "step_fixtures.hpp"

using namespace syncsim;
using namespace syncsim::models;

TEST_CASE("nccl buffers: LL 512 KiB, LL128 4.69 MiB, Simple 4 MiB per connection") {
  CHECK(kNcclLlBufferBytes == 524288);       // 8 x 512 x 8 x 16
  CHECK(kNcclLl128BufferBytes == 4915200);   // 120 x 640 x 8 x 8
  CHECK(kNcclSimpleBufferBytes == 4194304);  // NCCL_BUFFSIZE
  CHECK(kNcclConnectionBufferBytes == 9633792);
  // Connections per channel: a ring receives from one peer, a tree from both neighbours.
  CHECK(nccl_connections_per_channel(CollectiveAlgo::Ring, 64) == 1);
  CHECK(nccl_connections_per_channel(CollectiveAlgo::Tree, 64) == 2);
  CHECK(nccl_connections_per_channel(CollectiveAlgo::Tree, 2) == 1);
  CHECK(nccl_connections_per_channel(CollectiveAlgo::HalvingDoubling, 64) == 6);
  CHECK(nccl_connections_per_channel(CollectiveAlgo::HalvingDoubling, 65) == 7);
  CHECK(nccl_connections_per_channel(CollectiveAlgo::Ring, 1) == 0);  // no peer, no buffer
  // 16 channels of a ring: 154 MB per GPU.
  CHECK(nccl_communicator_buffer_bytes(CollectiveAlgo::Ring, 64, 16) == 16.0 * 9633792);
}

TEST_CASE("step memory: DDP's buckets and NCCL's buffers, FSDP's groups, a TP x DP layout") {
  const auto spec = step_fixtures::eight_gpu_hosts(4);
  const double conn = static_cast<double>(kNcclConnectionBufferBytes);

  // DDP (PyTorch): a second copy of the bf16 gradients and the ring's buffers on 16 channels.
  StepConfig ddp = step_fixtures::step_config("llama2-7b", 32);
  ddp.gpus_per_host = 8;
  ddp.channels = 16;
  const auto params = static_cast<double>(total_parameters(ddp.model));
  const StepResult d = step_fixtures::run_step(spec, Fidelity::Analytic, ddp);
  CHECK(d.communication_memory_bytes == params * 2 + 16 * conn);
  CHECK(d.memory_per_gpu_bytes == doctest::Approx(params * 16 + d.communication_memory_bytes +
                                                  activation_bytes(ddp.model, ddp.compute))
                                      .epsilon(1e-12));
  ddp.algorithm = CollectiveAlgo::Tree;
  CHECK(step_fixtures::run_step(spec, Fidelity::Analytic, ddp).communication_memory_bytes ==
        params * 2 + 2 * 16 * conn);

  // FSDP: the shard group's ring; HSDP adds the replica group's (here a tree).
  StepConfig fsdp = ddp;
  fsdp.parallelism = DataParallelism::Fsdp;
  CHECK(fsdp_communication_memory(fsdp, 32) == 16 * conn);
  CHECK(fsdp_communication_memory(fsdp, 8) == 16 * conn + 2 * 16 * conn);
  fsdp.fsdp.shard_degree = 8;
  const StepResult h = step_fixtures::run_step(spec, Fidelity::Analytic, fsdp);
  CHECK(h.communication_memory_bytes == 16 * conn + 2 * 16 * conn);
  // The closed form counts the same communicators for FSDP without model parallelism.
  fsdp.fsdp.shard_degree = 0;
  fsdp.algorithm = CollectiveAlgo::Ring;
  CHECK(simulate_parallel_step(spec, Fidelity::Analytic, fsdp).communication_memory_bytes ==
        16 * conn);

  // TP 8 x DP 4 (Megatron DDP, no bucket copy): the TP ring and the DP ring.
  StepConfig tp = step_fixtures::step_config("llama2-13b", 32);
  tp.gpus_per_host = 8;
  tp.channels = 16;
  tp.layout = ParallelLayout{.tensor = 8, .sequence_parallel = true};
  const StepResult t = simulate_parallel_step(spec, Fidelity::Analytic, tp);
  CHECK(t.communication_memory_bytes == 16 * conn + 16 * conn);
  tp.layout.tensor = 1;
  tp.layout.context = 1;
  // PP 4 x DP 8: the DP ring of 8, and the pipeline's network p2p pools (stages 8 GPUs, a host,
  // apart): send and receive, 16 channels x 16 shared steps x 128 KiB each = 64 MiB.
  tp.layout.pipeline = 4;
  CHECK(nccl_p2p_buffer_bytes(16) == 2.0 * 16 * 16 * 131072);
  CHECK(nccl_p2p_buffer_bytes(12) == nccl_p2p_buffer_bytes(16));  // rounded up to a power of 2
  CHECK(simulate_parallel_step(spec, Fidelity::Analytic, tp).communication_memory_bytes ==
        16 * conn + nccl_p2p_buffer_bytes(16));
}

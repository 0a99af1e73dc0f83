// Megatron's distributed optimizer in the closed-form step: reduce-scattered gradients, a sharded
// Adam, parameters all-gathered behind the next forward, and the sharded optimizer state's memory.
#include <doctest/doctest.h>

#include "models/parallelism.hpp"
#include "step_fixtures.hpp"

using namespace syncsim;
using namespace syncsim::models;

TEST_CASE("distributed optimizer: reduce-scatter behind backward, Adam and state on 1/d") {
  const auto spec = step_fixtures::eight_gpu_hosts(4);
  StepConfig c = step_fixtures::step_config("llama2-7b", 32);
  c.gpus_per_host = 8;
  c.grad_accumulation = 2;
  const StepResult plain = simulate_parallel_step(spec, Fidelity::Analytic, c);
  c.layout.distributed_optimizer = true;
  const StepResult sharded = simulate_parallel_step(spec, Fidelity::Analytic, c);
  CHECK(sharded.layout.distributed_optimizer);
  // The same compute.
  CHECK(sharded.forward + sharded.backward == plain.forward + plain.backward);
  // A ring reduce-scatter is half a ring all-reduce's traffic: the busy time roughly halves.
  CHECK(sharded.sync.seconds() < 0.6 * plain.sync.seconds());
  CHECK(sharded.sync.seconds() > 0.4 * plain.sync.seconds());
  // ... and with the all-gather, the bytes on the wire are the all-reduce's.
  CHECK(static_cast<double>(sharded.bytes_per_gpu) ==
        doctest::Approx(static_cast<double>(plain.bytes_per_gpu)).epsilon(0.01));
  // Adam on 1/32 of the parameters.
  CHECK(sharded.optimizer.seconds() ==
        doctest::Approx(plain.optimizer.seconds() / 32).epsilon(1e-6));
  CHECK(sharded.step < plain.step);
  // Memory: 4 + 12/32 bytes of state per parameter instead of 16; activations unchanged.
  const double params = static_cast<double>(total_parameters(c.model));
  CHECK(plain.memory_per_gpu_bytes - sharded.memory_per_gpu_bytes ==
        doctest::Approx((16.0 - (4.0 + 12.0 / 32)) * params).epsilon(0.01));
}

TEST_CASE("distributed optimizer: all-gathers behind the first forward, the rest exposed") {
  const auto spec = step_fixtures::eight_gpu_hosts(4);
  StepConfig c = step_fixtures::step_config("llama2-7b", 32);
  c.gpus_per_host = 8;
  c.layout.distributed_optimizer = true;
  // What the step shows of the parameter all-gathers: exposed communication beyond the tail.
  auto gather_exposed = [&](const net::NetworkSpec& s, int64_t micro_batch) {
    c.compute.micro_batch = micro_batch;
    const StepResult r = simulate_parallel_step(s, Fidelity::Analytic, c);
    return (r.exposed_comm - r.tail).seconds();
  };
  // 13.5 GB of bf16 parameters gathered over 32 GPUs outlast one micro-batch's forward ...
  const double one = gather_exposed(spec, 1);
  CHECK(one > 0);
  // ... a longer first forward hides more of them ...
  const double eight = gather_exposed(spec, 8);
  CHECK(eight < one);
  // ... and a slower fabric shows more.
  CHECK(gather_exposed(step_fixtures::eight_gpu_hosts(4, Bandwidth::gbps(100)), 1) > one);
}

// The channel copy cap (CollectiveRunOptions::channel_copy_bytes_per_s): one channel's CTA copies
// at most that rate, so few channels cannot fill a GPU's NVLinks while NCCL's own channel counts
// stay link-bound. Checked against the ring's closed form, per (rank, channel), on every fidelity.
#include <doctest/doctest.h>

#include <cstdint>
#include <stdexcept>

#include "collective_fixtures.hpp"
#include "models/collective_cost.hpp"
#include "models/collective_plan.hpp"
#include "models/collective_runner.hpp"
#include "models/nccl_channels.hpp"
#include "models/nccl_setup.hpp"
#include "sim/backends/make_backend.hpp"
#include "topologies/fabric_builder.hpp"

using namespace syncsim;
using namespace syncsim::models;
using collective_fixtures::identity;

namespace {

// One host of `gpus` GPUs on an NVSwitch, NVLink at 370.8 GB/s (18 x NCCL's SM90 20.6 GB/s).
topo::FabricParams nvswitch_host(uint32_t gpus) {
  return collective_fixtures::nvswitch_host(gpus, Bandwidth::bps(int64_t{2'966'400'000'000}),
                                            false);
}

constexpr double kHopperCopy = 38.7e9;

// A ring all_reduce of `bytes` on `channels` channels of 8 GPUs, time in seconds.
double ring_seconds(Fidelity fidelity, int64_t bytes, uint32_t channels, double copy_rate) {
  const net::NetworkSpec spec = topo::build_fabric(nvswitch_host(8));
  const CollectivePlan plan = build_plan(collective_fixtures::plan_options(
      CollectiveOp::AllReduce, CollectiveAlgo::Ring, 8, bytes, channels));
  CollectiveRunOptions ro;
  ro.channel_copy_bytes_per_s = copy_rate;
  ro.hbm_bytes_per_s = 0;  // the copies, not the reductions
  Simulation sim(1);
  auto backend = make_backend(fidelity, sim, spec);
  return run_collective(*backend, plan, identity(8), ro).duration().seconds();
}

}  // namespace

TEST_CASE("nccl channel copy rate: NCCL's per-channel Simple maximum per GPU generation") {
  CHECK(nccl_channel_copy_GBps(70) == doctest::Approx(26.5));
  CHECK(nccl_channel_copy_GBps(80) == doctest::Approx(24.0));
  CHECK(nccl_channel_copy_GBps(90) == doctest::Approx(38.7));
  CHECK(nccl_channel_copy_GBps(100) == doctest::Approx(70.0));
  // NCCL's own channel count on one DGX H100 stays bound by NVLink, not by the copies.
  const GpuSpec h100 = *gpu_preset("h100");
  const NcclChannels c = nccl_channels(
      nccl_system(8, 8, 8, Bandwidth::gbps(400),
                  Bandwidth::bps(static_cast<int64_t>(nccl_nvlink_bytes_per_s(h100) * 8)), h100),
      std::nullopt);
  CHECK(c.channels * nccl_channel_copy_GBps(h100.compute_capability) >
        nccl_nvlink_bytes_per_s(h100) / 1e9);
}

TEST_CASE("channel copy cap: one channel moves its ring at the copy rate on every fidelity") {
  // Closed form: each rank sends 2 (n - 1) / n S, one chunk after another on one CTA, so the
  // all_reduce takes 2 (n - 1) / n S / rate plus the last chunk's trip; busbw = the copy rate.
  const int64_t bytes = int64_t{256} << 20;
  const double closed = 2.0 * 7.0 / 8.0 * static_cast<double>(bytes) / kHopperCopy;
  for (Fidelity f : {Fidelity::Analytic, Fidelity::Flow, Fidelity::Packet}) {
    CAPTURE(static_cast<int>(f));
    const double t = ring_seconds(f, bytes, 1, kHopperCopy);
    CHECK(t == doctest::Approx(closed).epsilon(0.03));
    CHECK(t >= closed);
  }
}

TEST_CASE("channel copy cap: each (rank, channel) copies on its own, until the link binds") {
  const int64_t bytes = int64_t{256} << 20;
  const double one = ring_seconds(Fidelity::Flow, bytes, 1, kHopperCopy);
  const double two = ring_seconds(Fidelity::Flow, bytes, 2, kHopperCopy);
  const double four = ring_seconds(Fidelity::Flow, bytes, 4, kHopperCopy);
  CHECK(one / two == doctest::Approx(2.0).epsilon(0.03));
  CHECK(one / four == doctest::Approx(4.0).epsilon(0.04));
  // 24 channels x 38.7 GB/s is above the 370.8 GB/s NVLink port: the cap does not act, and the
  // result is the one without it, bit for bit.
  CHECK(ring_seconds(Fidelity::Flow, bytes, 24, kHopperCopy) ==
        ring_seconds(Fidelity::Flow, bytes, 24, 0.0));
  CHECK(ring_seconds(Fidelity::Analytic, bytes, 24, kHopperCopy) ==
        ring_seconds(Fidelity::Analytic, bytes, 24, 0.0));
}

TEST_CASE("channel copy cap: nccl_setup carries it, except for NVLS, and refuses a negative one") {
  CollectiveConfig config;
  config.channel_copy_bytes_per_s = kHopperCopy;
  NcclCollective c;
  c.ranks = 8;
  c.gpus_per_host = 8;
  c.bytes = int64_t{1} << 30;
  c.channels = 4;
  CHECK(nccl_setup(c, config).run.channel_copy_bytes_per_s == kHopperCopy);
  c.algo = CollectiveAlgo::Nvls;
  c.nvls_heads = 8;
  CHECK(nccl_setup(c, config).run.channel_copy_bytes_per_s == 0.0);

  const net::NetworkSpec spec = topo::build_fabric(nvswitch_host(2));
  const CollectivePlan plan = build_plan(collective_fixtures::plan_options(
      CollectiveOp::AllReduce, CollectiveAlgo::Ring, 2, 1 << 20, 1));
  CollectiveRunOptions ro;
  ro.channel_copy_bytes_per_s = -1.0;
  Simulation sim(1);
  auto backend = make_backend(Fidelity::Analytic, sim, spec);
  CHECK_THROWS_AS(run_collective(*backend, plan, identity(2), ro), std::invalid_argument);
}

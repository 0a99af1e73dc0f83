// The replay engine against closed forms: compute chains, a collective timed alone by the
// collective runner, a send/receive pair, process groups, determinism, and re-timing.
#include <doctest/doctest.h>

#include <cstdlib>
#include <numeric>
#include <string>

#include "../models/step_fixtures.hpp"
#include "chakra/chakra_files.hpp"
#include "chakra_fixtures.hpp"
#include "models/chakra_replay.hpp"
#include "models/collective_runner.hpp"
#include "sim/core/simulation.hpp"

using namespace syncsim;
using namespace syncsim::chakra_fixtures;

namespace {

constexpr uint32_t kHosts = 8;
const Bandwidth kLink = Bandwidth::gbps(100);

// kHosts hosts of one GPU on two leaves (non-blocking), every link at kLink.
const net::NetworkSpec& fabric() {
  static const net::NetworkSpec spec = step_fixtures::two_leaf_fabric(kHosts, kLink);
  return spec;
}

models::StepConfig config(uint32_t ranks) {
  models::StepConfig c;
  c.rank_to_gpu.resize(ranks);
  std::iota(c.rank_to_gpu.begin(), c.rank_to_gpu.end(), 0u);
  c.algorithm = models::CollectiveAlgo::Ring;
  c.channels = 1;
  c.gpus_per_host = 1;
  return c;
}

models::ChakraReplayResult replay(const models::ChakraTrace& t, Fidelity f = Fidelity::Analytic) {
  Simulation sim(1);
  auto backend = make_backend(f, sim, fabric());
  return models::replay_chakra(*backend, t, config(static_cast<uint32_t>(t.ranks.size())));
}

// The plan the replay builds, run alone on an idle copy of the fabric.
Time alone(models::CollectiveOp op, int64_t bytes, const std::vector<uint32_t>& gpus,
           Fidelity f = Fidelity::Analytic) {
  models::PlanOptions o;
  o.op = op;
  o.ranks = static_cast<uint32_t>(gpus.size());
  o.bytes = bytes;
  o.channels = 1;
  o.gpus_per_host = op == models::CollectiveOp::SendRecv ? 0 : 1;
  o.algo = op == models::CollectiveOp::SendRecv ? models::CollectiveAlgo::Pairwise
                                                : models::CollectiveAlgo::Ring;
  if (op == models::CollectiveOp::SendRecv) o.root = 0, o.peer = 1;
  const models::CollectivePlan plan = models::build_plan(o);
  Simulation sim(1);
  auto backend = make_backend(f, sim, fabric());
  return models::run_collective(*backend, plan, gpus, config(kHosts).collective).duration();
}

}  // namespace

TEST_CASE("chakra replay: compute 1 ms, all_reduce, compute 1 ms is 2 ms plus the all_reduce") {
  constexpr int64_t kBytes = 64 << 20;
  const std::string prefix =
      write_all(temp_dir("closed"), kHosts,
                {comp(0, 1000), coll(1, pb::ALL_REDUCE, kBytes, {0}), comp(2, 1000, {1})});
  const models::ChakraReplayResult r = replay(chakra::read_trace(prefix, kHosts));
  const Time ar = alone(models::CollectiveOp::AllReduce, kBytes, {0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(ar > Time::ms(1));  // 2 x 7/8 x 64 MiB at 100 Gb/s: about 9.4 ms
  // Exact: the analytic backend times the same plan the same way whenever it starts.
  CHECK(r.step == Time::ms(2) + ar);
  CHECK(r.collectives == 1);
  for (uint32_t rank = 0; rank < kHosts; ++rank) {
    CHECK(r.rank_compute[rank] == Time::ms(2));
    CHECK(r.rank_exposed_comm[rank] == ar);
    CHECK(r.rank_finish[rank] == r.step);
  }
}

TEST_CASE("chakra replay: independent compute chains share the rank's GPU, a CPU op runs beside") {
  pb::Node cpu = comp(4, 3000);
  cpu.mutable_attr(0)->set_bool_val(true);  // is_cpu_op
  const std::string prefix =
      write_all(temp_dir("chains"), 1,
                {comp(0, 1000), comp(1, 1000, {0}), comp(2, 1000), comp(3, 1000, {2}), cpu});
  const models::ChakraReplayResult r = replay(chakra::read_trace(prefix, 1));
  // One kernel at a time (ASTRA-sim's HardwareResource): 4 x 1 ms; the 3 ms host op overlaps.
  CHECK(r.step == Time::ms(4));
  CHECK(r.rank_compute[0] == Time::ms(4));
  CHECK(r.rank_exposed_comm[0] == Time::zero());
  CHECK(r.compute_nodes == 5);
}

TEST_CASE("chakra replay: a send/receive pair is one point-to-point transfer") {
  constexpr int64_t kBytes = 64 << 20;
  const std::string dir = temp_dir("p2p");
  write_et(dir + "/t.0.et", {comp(0, 100), p2p(1, true, 1, kBytes, {0})});
  write_et(dir + "/t.1.et", {p2p(0, false, 0, kBytes), comp(1, 100, {0})});
  const models::ChakraReplayResult r = replay(chakra::read_trace(dir + "/t", 2));
  const Time t = alone(models::CollectiveOp::SendRecv, kBytes, {0, 1});
  // bytes / bandwidth, plus headers (64 B per 4 KiB MTU) and the path's latency: within 3%.
  const double wire =
      static_cast<double>(kBytes) * 8.0 / static_cast<double>(kLink.bits_per_second());
  CHECK(t.seconds() > wire);
  CHECK(t.seconds() < wire * 1.03);
  // The receive is posted at 0, the send at 100 us: the transfer starts then.
  CHECK(r.step == Time::us(200) + t);
  CHECK(r.point_to_point == 1);
  CHECK(r.rank_exposed_comm[1] == Time::us(100) + t);  // rank 1 waited for the sender too
}

TEST_CASE("chakra replay: process groups from pg_name run side by side") {
  constexpr int64_t kBytes = 16 << 20;
  const std::string dir = temp_dir("groups");
  for (uint32_t r = 0; r < kHosts; ++r) {
    write_et(dir + "/t." + std::to_string(r) + ".et",
             {comp(0, 1000), coll(1, pb::ALL_REDUCE, kBytes, {0}, r < 4 ? "left" : "right")});
  }
  const models::ChakraTrace trace = chakra::read_trace(dir + "/t", kHosts);
  const models::ChakraReplayResult r = replay(trace);
  REQUIRE(r.groups.size() == 3);  // every rank (unused here), left, right
  CHECK(r.groups[1].first == "left");
  CHECK(r.groups[1].second == std::vector<uint32_t>{0, 1, 2, 3});
  CHECK(r.groups[2].second == std::vector<uint32_t>{4, 5, 6, 7});
  CHECK(r.collectives == 2);
  // Each group lives on its own leaf of a non-blocking fabric: as fast as alone.
  CHECK(r.step == Time::ms(1) + alone(models::CollectiveOp::AllReduce, kBytes, {0, 1, 2, 3}));
  SUBCASE("deterministic at flow fidelity") {
    const models::ChakraReplayResult a = replay(trace, Fidelity::Flow);
    const models::ChakraReplayResult b = replay(trace, Fidelity::Flow);
    CHECK(a.step == b.step);
    CHECK(a.rank_finish == b.rank_finish);
    CHECK(a.bytes_sent == b.bytes_sent);
    CHECK(a.step > Time::ms(1));
  }
}

TEST_CASE("chakra replay: members that disagree on a group's collectives are an error") {
  const std::string dir = temp_dir("mismatch");
  write_et(dir + "/t.0.et", {coll(0, pb::ALL_REDUCE, 1024)});
  write_et(dir + "/t.1.et", {coll(0, pb::ALL_GATHER, 1024)});
  CHECK_THROWS_WITH_AS(models::check_chakra_trace(chakra::read_trace(dir + "/t", 2)),
                       doctest::Contains("collective 0 of every rank is a all_reduce of 1024 B"),
                       std::invalid_argument);
  write_et(dir + "/t.1.et", {coll(0, pb::ALL_REDUCE, 1024)});
  write_et(dir + "/t.2.et", {comp(0, 5)});
  CHECK_THROWS_WITH_AS(models::check_chakra_trace(chakra::read_trace(dir + "/t", 3)),
                       doctest::Contains("t.2.et has 0 collectives of every rank"),
                       std::invalid_argument);
}

TEST_CASE("chakra replay: retime gives nodes with num_ops the compute model's roofline") {
  const std::string dir = temp_dir("retime");
  pb::Node n = comp(0, 77);
  pb::AttributeProto ops;
  ops.set_name("num_ops");
  ops.set_double_val(2e12);
  *n.add_attr() = ops;
  write_all(dir, 1, {n, comp(1, 5, {0})});
  models::ChakraTrace t = chakra::read_trace(dir + "/t", 1);
  const models::GpuSpec gpu = *models::gpu_preset("h100");
  CHECK(models::retime_chakra_compute(t, gpu, models::DType::Bf16) == 1);
  const double expected =
      2e12 / (models::peak_flops(gpu, models::DType::Bf16) * gpu.max_gemm_efficiency) +
      gpu.kernel_launch_s;
  CHECK(t.ranks[0].nodes[0].duration.seconds() == doctest::Approx(expected).epsilon(1e-9));
  CHECK(t.ranks[0].nodes[1].duration == Time::us(5));  // no num_ops: the trace's duration
}

TEST_CASE("chakra replay: a barrier holds every rank until the last arrives; a cycle stalls") {
  const std::string dir = temp_dir("barrier");
  write_et(dir + "/t.0.et", {comp(0, 1000), coll(1, pb::BARRIER, 0, {0})});
  write_et(dir + "/t.1.et", {coll(0, pb::BARRIER, 0), comp(1, 1000, {0})});
  const models::ChakraReplayResult r = replay(chakra::read_trace(dir + "/t", 2));
  CHECK(r.step == Time::ms(2));
  CHECK(r.rank_exposed_comm[1] == Time::ms(1));  // rank 1 waited at the barrier
  CHECK(r.bytes_sent == 0);
  write_et(dir + "/c.0.et", {comp(0, 10, {1}), comp(1, 10, {0})});
  CHECK_THROWS_WITH_AS(replay(chakra::read_trace(dir + "/c", 1)),
                       doctest::Contains("never ran (1 dependencies unfinished: a cycle?)"),
                       std::runtime_error);
}

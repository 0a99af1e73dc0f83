// NVLink at packet fidelity runs credit-based flow control (sim/net/nvlink_credits.hpp): an
// NVSwitch never drops and never sends PAUSE, its buffer is its ports' credits, and the fabric
// switches' buffer has nothing to do with it.
#include <doctest/doctest.h>

#include "sim/backends/packet_backend.hpp"
#include "sim/net/egress_port.hpp"
#include "sim/net/nvlink_credits.hpp"
#include "sim/net/switch.hpp"
#include "topologies/fabric_builder.hpp"

using namespace syncsim;

namespace {

// One host of 8 GPUs on an NVSwitch, NVLink at 400 GB/s per direction, 100 ns cables.
topo::FabricParams eight_gpus(Bytes fabric_buffer) {
  topo::FabricParams p;
  p.kind = topo::TopologyKind::SpineLeaf;
  p.spine_leaf.leaves = 1;
  p.spine_leaf.hosts_per_leaf = 1;
  p.spine_leaf.spines = 1;
  p.host.gpus = 8;
  p.host.nics = 1;
  p.links.nvlink.bandwidth = Bandwidth::gbps(3200);
  p.switch_params.buffer = fabric_buffer;
  return p;
}

struct IncastRun {
  std::vector<Time> finish;
  uint64_t pause_frames = 0;
  int64_t bytes_dropped = 0;
  int64_t nvswitch_peak = 0;
  int64_t nvswitch_capacity = 0;
};

// GPUs 1..7 each send `size` to GPU 0 at once.
IncastRun nvlink_incast(Bytes fabric_buffer, int64_t size) {
  const auto spec = topo::build_fabric(eight_gpus(fabric_buffer));
  Simulation sim(1);
  PacketBackend backend(sim, spec);
  for (uint32_t g = 1; g < 8; ++g) backend.start(TransferRequest{g, 0, Bytes{size}, 0});
  sim.queue().run();
  IncastRun r;
  for (const auto& t : backend.transfers()) {
    REQUIRE(t.done);
    r.finish.push_back(t.finish);
  }
  const net::Network& network = backend.network();
  r.pause_frames = network.counters().pause_frames;
  r.bytes_dropped = network.counters().bytes_dropped;
  for (net::NodeId n = 0; n < spec.nodes.size(); ++n) {
    if (spec.nodes[n].role != net::SwitchRole::NvSwitch) continue;
    r.nvswitch_peak = network.switch_at(n)->buffer_peak().count();
    r.nvswitch_capacity = network.switch_at(n)->mmu().capacity().count();
  }
  return r;
}

}  // namespace

TEST_CASE("nvlink credits: a loop's worth four times over, in whole 64-byte credits") {
  net::LinkParams link;
  link.bandwidth = Bandwidth::gbps(3200);  // 400 GB/s
  link.delay = Time::ns(100);
  link.mtu = Bytes{4096};
  link.header = Bytes{32};
  // Loop: two full packets (4128 B each) and the cable both ways (200 ns x 400 GB/s = 80,000 B).
  CHECK(net::nvlink_credit_bytes(link) == 4 * (2 * 4128 + 80'000));
  link.delay = Time::ns(101);  // 80,800 B of cable: 4 x 89,056 = 356,224 B, 5566 credits
  CHECK(net::nvlink_credit_bytes(link) == 356'224);
  CHECK(net::nvlink_credit_bytes(link) % 64 == 0);
}

TEST_CASE("nvlink credits: a 7:1 incast inside a host is lossless without PAUSE, at line rate") {
  const int64_t size = 4 << 20;
  // 4 MiB of fabric-switch buffer used to leave an NVSwitch running PFC with no shared part (9
  // ports x 8 classes of headroom), every packet over XOFF; 256 MiB far above any queue. NVLink's
  // credits do not read it.
  const IncastRun small = nvlink_incast(Bytes{int64_t{4} << 20}, size);
  const IncastRun large = nvlink_incast(Bytes{int64_t{256} << 20}, size);
  CHECK(small.pause_frames == 0);
  CHECK(small.bytes_dropped == 0);
  CHECK(small.finish == large.finish);
  // The NVSwitch holds no more than its ports' credits, the buffer it is given.
  CHECK(small.nvswitch_peak > 0);
  CHECK(small.nvswitch_peak <= small.nvswitch_capacity);
  // 8 NVLinks into the switch, one per GPU, each advertising its credits.
  net::LinkParams nvlink = eight_gpus(Bytes{1}).links.nvlink;
  CHECK(small.nvswitch_capacity == 8 * net::nvlink_credit_bytes(nvlink));
  // Closed form: GPU 0's port carries the seven flows' packets (4096 B + 32 B header) at 400 GB/s;
  // the last one ends at 7 x one flow's wire time, plus store-and-forward (well under 1 %).
  const Time all = Bandwidth::gbps(3200).tx_time(Bytes{7 * (size / 4096) * (4096 + 32)});
  Time last = Time::zero();
  for (Time t : small.finish) last = std::max(last, t);
  CHECK(last >= all);
  CHECK(last.seconds() <= all.seconds() * 1.01);
}

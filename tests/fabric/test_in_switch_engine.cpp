// The NVLS engine at packet fidelity writes into its NVSwitch's GPU ports per destination
// (sim/net/in_switch_engine.hpp): a GPU port that two of its flows share does not hold back its
// flow to another GPU (no head-of-line blocking on the engine's link), and the flows to one GPU
// share its port equally (round robin per destination). InfiniBand SHARP engines run the same code.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "sim/backends/packet_backend.hpp"
#include "sim/net/egress_port.hpp"
#include "sim/net/switch.hpp"
#include "topologies/fabric_builder.hpp"

using namespace syncsim;

namespace {

// One host of 3 GPUs on an NVSwitch with NVLink SHARP, NVLink at 400 GB/s per direction.
topo::FabricParams three_gpus_with_nvls(Bytes buffer) {
  topo::FabricParams p;
  p.kind = topo::TopologyKind::SpineLeaf;
  p.spine_leaf.leaves = 1;
  p.spine_leaf.hosts_per_leaf = 1;
  p.spine_leaf.spines = 1;
  p.host.gpus = 3;
  p.host.nics = 1;
  p.host.nvls = true;
  p.links.nvlink.bandwidth = Bandwidth::gbps(3200);
  p.switch_params.buffer = buffer;
  return p;
}

}  // namespace

TEST_CASE("in-switch engine: two flows to one GPU do not slow its flow to another GPU") {
  const int64_t size = 16 << 20;
  // The fabric switches' buffer: an NVSwitch ran PFC out of it once (with 4 MiB every packet was
  // over XOFF); now its GPU links run credits (sim/net/nvlink_credits.hpp) and it does not matter.
  for (int64_t buffer : {int64_t{4} << 20, int64_t{256} << 20}) {
    CAPTURE(buffer);
    const auto spec = topo::build_fabric(three_gpus_with_nvls(Bytes{buffer}));
    REQUIRE(spec.nvls_engines.size() == 1);
    const uint32_t engine = spec.nvls_endpoint(0);
    Simulation sim(1);
    PacketBackend backend(sim, spec);
    backend.start(TransferRequest{engine, 0, Bytes{size}, 0});
    backend.start(TransferRequest{engine, 0, Bytes{size}, 0});
    backend.start(TransferRequest{engine, 1, Bytes{size}, 0});
    sim.queue().run();
    for (const auto& t : backend.transfers()) REQUIRE(t.done);

    // Closed form: GPU 1's port carries its one flow at the NVLink rate (32 B headers per 4096 B
    // packet), GPU 0's port the two flows one after the other's packet, both ending at twice that.
    const Bandwidth nvlink = Bandwidth::gbps(3200);
    const Time alone = nvlink.tx_time(Bytes{size / 4096 * (4096 + 32)});
    const Time gpu1 = backend.transfers()[2].finish;
    CHECK(gpu1 >= alone);
    // Store-and-forward through the switch and the NVLink cable: well under 1 %.
    CHECK(gpu1.seconds() <= alone.seconds() * 1.01);
    for (int k : {0, 1}) {
      CHECK(backend.transfers()[static_cast<std::size_t>(k)].finish.seconds() ==
            doctest::Approx(2 * alone.seconds()).epsilon(0.01));
    }
    // The engine's link is never paused, and holds at most a few packets per GPU in the switch.
    const net::Network& network = backend.network();
    const net::PortId engine_port = network.routing().ports_of(spec.nvls_engines[0].nvlink_port)[0];
    CHECK(network.port(engine_port).pause_frames_received() == 0);
    CHECK(network.counters().bytes_dropped == 0);
    const net::NodeId nvswitch = network.routing().ports()[engine_port].peer;
    // Two packets per GPU port (one on the wire, one waiting) and the one the engine has on its
    // own link: 3 per port, 2 ports.
    CHECK(network.switch_at(nvswitch)->buffer_peak().count() <= 2 * 3 * (4096 + 32));
  }
}

TEST_CASE("in-switch engine: the engine and a GPU sharing a GPU port get half of it each") {
  // A crossbar serves its inputs in turn: the engine's packets wait in a queue of their own at the
  // port, served alternately with the FIFO of the GPUs' traffic. On a buffer whose shared part is
  // far above the queues (GPU 2 is never paused), both flows end together at twice the time of one
  // alone; a FIFO that the engine had to find room in would serve GPU 2's backlog first.
  const int64_t size = 16 << 20;
  const auto spec = topo::build_fabric(three_gpus_with_nvls(Bytes{int64_t{256} << 20}));
  Simulation sim(1);
  PacketBackend backend(sim, spec);
  backend.start(TransferRequest{spec.nvls_endpoint(0), 0, Bytes{size}, 0});
  backend.start(TransferRequest{2, 0, Bytes{size}, 0});
  sim.queue().run();
  const Time alone = Bandwidth::gbps(3200).tx_time(Bytes{size / 4096 * (4096 + 32)});
  for (const auto& t : backend.transfers()) {
    REQUIRE(t.done);
    CHECK(t.finish.seconds() == doctest::Approx(2 * alone.seconds()).epsilon(0.01));
  }
}

TEST_CASE("in-switch engine: flows to one GPU share its port equally, whatever their order") {
  // 24 engine flows of 1 MiB to 4 GPUs, started together in a scrambled order. Round robin from
  // one shared position served, to each port that had room, the first of its flows after wherever
  // the last send (to any port) had left the position: some flows took most of their port and
  // ended at 4 x the time of one alone where 10 shared it. Least recently served first is round
  // robin per port: a port's flows end together, at (its flows) x alone.
  const int64_t size = 1 << 20;
  topo::FabricParams params = three_gpus_with_nvls(Bytes{int64_t{256} << 20});
  params.host.gpus = 4;
  const auto spec = topo::build_fabric(params);
  const uint32_t engine = spec.nvls_endpoint(0);
  const std::vector<uint32_t> gpu_of = {0, 1, 1, 3, 0, 2, 1, 0, 3, 3, 1, 0,
                                        2, 0, 1, 3, 0, 1, 2, 0, 3, 1, 0, 2};
  Simulation sim(1);
  PacketBackend backend(sim, spec);
  for (uint32_t gpu : gpu_of) backend.start(TransferRequest{engine, gpu, Bytes{size}, 0});
  sim.queue().run();
  const double alone = Bandwidth::gbps(3200).tx_time(Bytes{size / 4096 * (4096 + 32)}).seconds();
  for (uint32_t gpu = 0; gpu < 4; ++gpu) {
    CAPTURE(gpu);
    double first = 1e9;
    double last = 0;
    int flows = 0;
    for (std::size_t i = 0; i < gpu_of.size(); ++i) {
      if (gpu_of[i] != gpu) continue;
      REQUIRE(backend.transfers()[i].done);
      const double t = backend.transfers()[i].finish.seconds();
      first = std::min(first, t);
      last = std::max(last, t);
      ++flows;
    }
    CHECK(last >= flows * alone);
    CHECK(last <= 1.1 * flows * alone);
    CHECK(last - first <= 0.02 * last);
  }
}

// Go-back-N RoCE on a lossy priority (lossy RoCE: drops trigger go-back-N).
#include <doctest/doctest.h>

#include <functional>

#include "sim/backends/packet_backend.hpp"
#include "tests/run/lossy_fixtures.hpp"
#include "topologies/fabric_builder.hpp"

using namespace syncsim;
using namespace syncsim::lossy_test;

TEST_CASE("gbn: an incast that overflows a small buffer completes, each byte delivered once") {
  // Paired: the same incast on a buffer that holds it has no drops and no retransmissions.
  const std::string yaml = incast_yaml(8, "500KB", "256KiB", 0, "");
  const app::RunResult lossy = run_yaml(yaml);
  const app::RunResult clean = run_yaml(yaml, {app::parse_override("fabric.switch.buffer=64MiB")});

  CHECK(clean.counters.bytes_dropped == 0);
  CHECK(clean.retransmitted_packets == 0);
  CHECK(clean.naks == 0);
  CHECK(clean.timeouts == 0);
  CHECK(clean.messages_completed == 8);
  CHECK(clean.counters.bytes_delivered == 8 * 500'000);
  CHECK(clean.counters.bytes_injected == clean.counters.bytes_delivered);

  CHECK(drops_of(lossy, "buffer_full") > 0);
  CHECK(lossy.retransmitted_packets > 0);
  CHECK(lossy.retransmitted_bytes > 0);
  CHECK(lossy.naks > 0);
  CHECK(lossy.messages_completed == 8);
  // Application bytes: exactly the bytes sent, once, although more went on the wire.
  CHECK(lossy.counters.bytes_delivered == 8 * 500'000);
  CHECK(lossy.counters.bytes_injected > lossy.counters.bytes_delivered);
  CHECK(lossy.counters.bytes_injected ==
        lossy.counters.bytes_delivered + lossy.counters.bytes_dropped + lossy.bytes_discarded);
  // Drops cost time: the lossy incast ends later than the one the buffer absorbs.
  CHECK(lossy.fct.max_s > clean.fct.max_s);
}

TEST_CASE("gbn: same seed, identical results") {
  const std::string yaml = incast_yaml(8, "500KB", "256KiB", 0, "  impairments: {loss: 0.01}\n");
  const app::RunResult a = run_yaml(yaml);
  const app::RunResult b = run_yaml(yaml);
  CHECK(a.fct_by_message_s == b.fct_by_message_s);
  CHECK(a.events == b.events);
  CHECK(a.retransmitted_packets == b.retransmitted_packets);
  CHECK(a.timeouts == b.timeouts);
  CHECK(a.counters.bytes_injected == b.counters.bytes_injected);
  const app::RunResult c = run_yaml(yaml, {app::parse_override("seed=2")});
  CHECK(c.fct_by_message_s != a.fct_by_message_s);
}

TEST_CASE("gbn: a lost tail is recovered by the retransmission timeout") {
  // One-packet messages on links that lose half of them: no later packet can reveal the loss, so
  // only the timer recovers it. Paired with the loss-free run (no timeout, FCT of a few us).
  const std::string fabric = "  transport: {kind: roce, go_back_n: {timeout: 100us}}\n";
  const std::string yaml = incast_yaml(4, "1000B", "64MiB", 0, fabric);
  const app::RunResult clean = run_yaml(yaml);
  CHECK(clean.timeouts == 0);
  CHECK(clean.fct.max_s < 20e-6);
  const app::RunResult lossy = run_yaml(yaml, {app::parse_override("fabric.impairments.loss=0.5")});
  CHECK(drops_of(lossy, "link_loss") > 0);
  CHECK(lossy.timeouts > 0);
  CHECK(lossy.messages_completed == 4);
  CHECK(lossy.counters.bytes_delivered == 4 * 1000);
  CHECK(lossy.fct.max_s >= 100e-6);
}

TEST_CASE("gbn: off, a lossy class keeps losing what it drops (the previous idealisation)") {
  const std::string yaml =
      incast_yaml(8, "500KB", "256KiB", 0, "  transport: {go_back_n: {enabled: false}}\n");
  const app::RunResult r = run_yaml(yaml);
  CHECK(r.counters.bytes_dropped > 0);
  CHECK(r.retransmitted_packets == 0);
  CHECK(r.acks == 0);
  CHECK(r.messages_completed < 8);
  CHECK(r.counters.bytes_injected == r.counters.bytes_delivered + r.counters.bytes_dropped);
}

TEST_CASE("gbn: a lossless class (PFC) has no acknowledgements, as before") {
  const app::RunResult r = run_yaml(
      incast_yaml(8, "500KB", "1MiB", 3, "    pfc: {enabled: true, lossless_priorities: [3]}\n"));
  CHECK(r.counters.bytes_dropped == 0);
  CHECK(r.acks == 0);
  CHECK(r.messages_completed == 8);
}

TEST_CASE("gbn: completion callbacks that start messages, under random loss") {
  // Each delivered message starts the next one from inside the delivery (as collectives do), while
  // 1% of packets are lost: every message of the chain completes, each byte delivered once.
  const std::string yaml = incast_yaml(1, "1KB", "64MiB", 0, "");
  app::Scenario s = app::load_scenario_text(yaml, "inline.yaml");
  net::NetworkSpec spec = topo::build_fabric(s.fabric);
  spec.impairments.loss_probability = 0.01;
  Simulation sim(3);
  PacketBackend backend(sim, spec);
  constexpr int kChain = 40;
  int done = 0;
  std::function<void(TransferId, const TransferRecord&)> next = [&](TransferId,
                                                                    const TransferRecord&) {
    if (++done < kChain) {
      backend.start(
          TransferRequest{static_cast<uint32_t>(done % 2 == 0 ? 17 : 0),
                          static_cast<uint32_t>(done % 2 == 0 ? 0 : 17), Bytes{300'000}, 0},
          next);
    }
  };
  backend.start(TransferRequest{17, 0, Bytes{300'000}, 0}, next);
  sim.queue().run();
  const auto& c = backend.network().counters();
  CHECK(done == kChain);
  CHECK(c.packets_dropped[static_cast<std::size_t>(net::DropReason::LinkLoss)] > 0);
  CHECK(c.retransmitted_packets > 0);
  CHECK(c.bytes_delivered == int64_t{kChain} * 300'000);
  CHECK(c.bytes_injected == c.bytes_delivered + c.bytes_dropped + c.bytes_discarded);
  CHECK(backend.network().packets_in_flight() == 0);
}

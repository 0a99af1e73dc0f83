// scenario_network (run/runner.hpp): `syncsim run`, `syncsim collective` and the step model's
// private timing runs see one fabric with everything the scenario sets on it. Until 2026-11-30
// `syncsim collective` built the bare fabric and silently ignored the scenario's transport,
// PFC/ECN/DCQCN and the flow-level CC correction.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "run/collective_cmd.hpp"
#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"
#include "sim/backends/make_backend.hpp"

using namespace syncsim;
using syncsim::app::load_scenario_text;

namespace {

// 8 hosts under one leaf, one GPU and one 100G NIC each.
std::string scenario(const std::string& fidelity, const std::string& extra_fabric) {
  return "name: t\nfidelity: " + fidelity + R"(
fabric:
  topology: spine_leaf
  spine_leaf: {leaves: 1, hosts_per_leaf: 8, spines: 1}
  host: {gpus: 1, nics: 1}
  links:
    host: {bandwidth: 100Gbps, delay: 500ns, mtu: 4096B, header: 64B}
)" + extra_fabric +
         "traffic:\n  - {pattern: incast, senders: 1, receiver: 0, size: 1KB}\n";
}

double collective_time_us(const app::Scenario& s, models::CollectiveOp op, int64_t bytes) {
  app::CollectiveSweepOptions o;
  o.op = op;
  o.min_bytes = bytes;
  o.max_bytes = bytes;
  const auto sweep = app::run_collective_sweep(s, o);
  REQUIRE(sweep.rows.size() == 1);
  return sweep.rows.front().out_of_place.time_us;
}

}  // namespace

TEST_CASE("scenario_network carries the scenario's transport and flow CC correction") {
  const auto s = load_scenario_text(
      scenario(
          "flow",
          "  transport: {kind: tcp}\n  flow:\n    cc_correction: {contended_efficiency: 0.7}\n"),
      "t.yaml");
  const net::NetworkSpec spec = app::scenario_network(s);
  CHECK(spec.transport.kind == net::TransportKind::Tcp);
  CHECK(spec.flow_cc.enabled);
  CHECK(spec.flow_cc.contended_efficiency == 0.7);
  CHECK(spec.gpus.size() == 8);
}

TEST_CASE("syncsim collective honours the scenario's transport") {
  const auto roce = load_scenario_text(scenario("flow", ""), "t.yaml");
  const auto tcp = load_scenario_text(scenario("flow", "  transport: {kind: tcp}\n"), "t.yaml");
  const double t_roce = collective_time_us(roce, models::CollectiveOp::AllReduce, 8);
  const double t_tcp = collective_time_us(tcp, models::CollectiveOp::AllReduce, 8);
  // TCP pays the host stack on every one of the ring's 2(n-1) steps: strictly slower.
  CHECK(t_tcp > t_roce * 1.5);
}

TEST_CASE(
    "make_backend applies the spec's flow CC correction (the step model's timing runs use it)") {
  // The step model builds its own backends with make_backend(fidelity, sim, spec); the correction
  // travels in the spec. A 7 -> 1 incast: the leaf's port to host 0 is contended.
  auto finish_of_last = [](const std::string& yaml) {
    const auto s = load_scenario_text(yaml, "t.yaml");
    const net::NetworkSpec spec = app::scenario_network(s);
    Simulation sim(1);
    auto backend = make_backend(s.fidelity, sim, spec);
    for (uint32_t src = 1; src < 8; ++src)
      backend->start(TransferRequest{src, 0, Bytes{1'000'000}, 0});
    sim.queue().run();
    Time last = Time::zero();
    for (const auto& r : backend->transfers()) last = std::max(last, r.finish);
    return last.seconds();
  };
  const double plain = finish_of_last(scenario("flow", ""));
  const double corrected =
      finish_of_last(scenario("flow", "  flow:\n    cc_correction: {contended_efficiency: 0.5}\n"));
  // efficiency(7 flows) = 1 - 0.5 * 6/7 = 4/7: the 7 MB drain (560 us at 100G) stretches by 7/4,
  // plus a few microseconds of path latency that do not stretch.
  CHECK(corrected / plain == doctest::Approx(1.75).epsilon(0.02));
}

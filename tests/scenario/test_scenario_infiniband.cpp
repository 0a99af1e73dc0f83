// `fabric.link_layer`, `fabric.routing` and `fabric.infiniband`: defaults, values as given, and
// each bad input reported at its file:line:col.
#include <doctest/doctest.h>

#include <string>

#include "scenario/scenario_loader.hpp"
#include "tests/scenario/scenario_text_fixtures.hpp"

using syncsim::app::load_scenario_text;
using syncsim::app::Scenario;
using syncsim::testing::scenario_error_of;
using syncsim::testing::text_with;
namespace net = syncsim::net;

namespace {

// Line 7 holds the keys under test, starting at column 3.
const std::string kBase = R"(name: t
fabric:
  topology: spine_leaf
  spine_leaf: {leaves: 2, hosts_per_leaf: 2, spines: 2}
  links:
    host: {bandwidth: 400Gbps, delay: 500ns}
  KEYS
traffic:
  - pattern: ring_shift
    size: 1MiB
)";

std::string with(const std::string& keys) { return text_with(kBase, "KEYS", keys); }

}  // namespace

TEST_CASE("scenario infiniband: roce and ECMP by default, ftree once the link layer is IB") {
  const Scenario roce = load_scenario_text(with("host: {gpus: 1}"), "t.yaml");
  CHECK(roce.network.link_layer == net::LinkLayer::Roce);
  CHECK(roce.network.routing_algorithm() == net::RoutingAlgorithm::Ecmp);
  CHECK(roce.network.infiniband.vl_buffer_auto);
  CHECK_FALSE(roce.network.infiniband.congestion_control.enabled);

  const Scenario ib = load_scenario_text(with("link_layer: infiniband"), "t.yaml");
  CHECK(ib.network.link_layer == net::LinkLayer::Infiniband);
  CHECK(ib.network.routing_algorithm() == net::RoutingAlgorithm::Ftree);
  const Scenario ib_ecmp =
      load_scenario_text(with("link_layer: infiniband\n  routing: ecmp"), "t.yaml");
  CHECK(ib_ecmp.network.routing_algorithm() == net::RoutingAlgorithm::Ecmp);
}

TEST_CASE("scenario infiniband: presets set the links and the switch, explicit keys win") {
  const Scenario s = load_scenario_text(R"(name: t
fabric:
  topology: spine_leaf
  spine_leaf: {leaves: 2, hosts_per_leaf: 2, spines: 2}
  host: {hca: connectx7}
  links:
    fabric: {preset: xdr, mtu: 2048B}
  switch: {preset: qm8700}
traffic:
  - pattern: ring_shift
    size: 1MiB
)",
                                        "t.yaml");
  CHECK(s.fabric.links.host.bandwidth == syncsim::Bandwidth::gbps(400));  // ConnectX-7: NDR
  CHECK(s.fabric.links.host.mtu.count() == 4096);
  CHECK(s.fabric.links.host.header.count() == 26);
  CHECK(s.fabric.links.fabric.bandwidth == syncsim::Bandwidth::gbps(800));
  CHECK(s.fabric.links.fabric.mtu.count() == 2048);  // given beside the preset
  CHECK(s.fabric.links.fabric.header.count() == 26);
  CHECK(s.network.switch_latency == syncsim::Time::ns(130));
  CHECK(s.network.switch_radix == 40);
}

TEST_CASE("scenario infiniband: SL2VL, VL buffer and congestion control as given") {
  const Scenario s = load_scenario_text(
      with("link_layer: infiniband\n  infiniband: {sl_to_vl: [0, 0, 1], vl_buffer: 128KiB, "
           "congestion_control: {threshold: 64KiB, ccti_timer: 5us, ccti_increase: 2, "
           "ccti_limit: 64, cct_step: 20ns}}"),
      "t.yaml");
  const net::InfinibandParams& ib = s.network.infiniband;
  CHECK(ib.sl_to_vl[1] == 0);
  CHECK(ib.sl_to_vl[2] == 1);
  CHECK(ib.sl_to_vl[3] == 3);  // beyond the list: its own VL
  CHECK_FALSE(ib.vl_buffer_auto);
  CHECK(ib.vl_buffer.count() == 128 * 1024);
  CHECK(ib.congestion_control.enabled);  // a block turns it on
  CHECK(ib.congestion_control.threshold.count() == 64 * 1024);
  CHECK(ib.congestion_control.ccti_timer == syncsim::Time::us(5));
  CHECK(ib.congestion_control.ccti_increase == 2);
  CHECK(ib.congestion_control.ccti_limit == 64);
  CHECK(ib.congestion_control.cct_step == syncsim::Time::ns(20));
}

TEST_CASE("scenario infiniband: bad input names the key and its position") {
  CHECK(scenario_error_of(with("switch: {preset: qm9800}")) ==
        "t.yaml:7:20: fabric.switch.preset: expected a switch preset (qm8700, qm9700), got "
        "\"qm9800\"");
  CHECK(scenario_error_of(with("host: {hca: connectx5}")) ==
        "t.yaml:7:15: fabric.host.hca: expected an HCA preset (connectx6, connectx7, connectx8), "
        "got \"connectx5\"");
  CHECK(scenario_error_of(with("link_layer: ethernet")) ==
        "t.yaml:7:15: fabric.link_layer: expected one of: roce, infiniband; got \"ethernet\"");
  CHECK(scenario_error_of(with("routing: dmodk")) ==
        "t.yaml:7:12: fabric.routing: expected one of: ecmp, ftree; got \"dmodk\"");
  CHECK(scenario_error_of(with("infiniband: {sl2vl: [0]}")) ==
        "t.yaml:7:16: fabric.infiniband.sl2vl: unknown key \"sl2vl\"; expected one of: sl_to_vl, "
        "vl_buffer, congestion_control, sharp");
  CHECK(scenario_error_of(with("infiniband: {sl_to_vl: [0, 9]}")) ==
        "t.yaml:7:30: fabric.infiniband.sl_to_vl.1: expected an integer in 0..7, got 9");
  CHECK(scenario_error_of(with("infiniband: {vl_buffer: 32B}")) ==
        "t.yaml:7:27: fabric.infiniband.vl_buffer: expected at least one 64-byte credit block "
        "per VL, got 32B");
  CHECK(scenario_error_of(with("infiniband: {congestion_control: {ccti_min: 9, ccti_limit: 4}}")) ==
        "t.yaml:7:47: fabric.infiniband.congestion_control.ccti_min: expected ccti_min <= "
        "ccti_limit (4), got 9");
}

TEST_CASE("scenario infiniband: sharp gives every fabric switch an engine, the preset its trees") {
  const Scenario off = load_scenario_text(with("link_layer: infiniband"), "t.yaml");
  CHECK_FALSE(off.fabric.sharp.enabled);
  CHECK(off.fabric.sharp.trees_per_switch == 0);
  CHECK(off.fabric.sharp.outstanding_operations == 8);
  const Scenario on = load_scenario_text(
      with("link_layer: infiniband\n  infiniband: {sharp: {outstanding_operations: 4}}"), "t.yaml");
  CHECK(on.fabric.sharp.enabled);  // the block turns it on
  CHECK(on.fabric.sharp.outstanding_operations == 4);
  // QM8700 (Quantum): one streaming-aggregation tree per switch; an explicit value wins.
  const Scenario hdr = load_scenario_text(
      with("link_layer: infiniband\n  switch: {preset: qm8700}\n  infiniband: {sharp: {}}"),
      "t.yaml");
  CHECK(hdr.fabric.sharp.trees_per_switch == 1);
  const Scenario hdr2 =
      load_scenario_text(with("link_layer: infiniband\n  switch: {preset: qm8700}\n"
                              "  infiniband: {sharp: {trees_per_switch: 2}}"),
                         "t.yaml");
  CHECK(hdr2.fabric.sharp.trees_per_switch == 2);
  // Errors: SHARP on Ethernet, a bad key, a bad count.
  CHECK(
      scenario_error_of(with("infiniband: {sharp: {enabled: true}}"))
          .find(
              "fabric.infiniband.sharp.enabled: expected SHARP on fabric.link_layer: infiniband") !=
      std::string::npos);
  CHECK(scenario_error_of(with("link_layer: infiniband\n  infiniband: {sharp: {trees: 1}}")) ==
        "t.yaml:8:24: fabric.infiniband.sharp.trees: unknown key \"trees\"; expected one of: "
        "enabled, trees_per_switch, outstanding_operations");
  CHECK(scenario_error_of(
            with("link_layer: infiniband\n  infiniband: {sharp: {outstanding_operations: 0}}")) ==
        "t.yaml:8:48: fabric.infiniband.sharp.outstanding_operations: expected 1..1024 "
        "reductions in flight, got 0");
}

TEST_CASE("scenario infiniband: warnings for settings the link layer or the fidelity ignores") {
  const auto warned = [](const Scenario& s, const std::string& text) {
    for (const std::string& w : s.load_warnings) {
      if (w.find(text) != std::string::npos) return true;
    }
    return false;
  };
  // RoCE's mechanisms on an InfiniBand fabric, at packet fidelity.
  const Scenario ib = load_scenario_text(
      with("link_layer: infiniband\n  switch: {pfc: {enabled: true}, ecn: {enabled: true}}\n"
           "  nic: {dcqcn: {enabled: true}}"),
      "t.yaml");
  CHECK(warned(ib, "fabric.switch.pfc: PFC is Ethernet's"));
  CHECK(warned(ib, "fabric.switch.ecn: ECN marking is RoCE's"));
  CHECK(warned(ib, "fabric.nic.dcqcn: DCQCN is RoCE's"));
  // IB settings on RoCE.
  CHECK(warned(load_scenario_text(with("infiniband: {vl_buffer: 64KiB}"), "t.yaml"),
               "fabric.infiniband applies to fabric.link_layer: infiniband only"));
  // Credits and IB CC at flow fidelity: a lossless max-min model already.
  syncsim::app::LoadOptions flow;
  flow.overrides = {{"fidelity", "flow"}};
  const Scenario f = load_scenario_text(
      with("link_layer: infiniband\n  infiniband: {vl_buffer: 64KiB, congestion_control: {}}"),
      "t.yaml", flow);
  CHECK(warned(f,
               "fabric.infiniband.vl_buffer: InfiniBand credit-based flow control is modelled "
               "at packet fidelity only; it does nothing at flow fidelity"));
  CHECK(warned(f,
               "fabric.infiniband.congestion_control: InfiniBand congestion control is "
               "modelled at packet fidelity only"));
  // A plain InfiniBand scenario warns about nothing.
  CHECK(load_scenario_text(with("link_layer: infiniband"), "t.yaml").load_warnings.empty());
}

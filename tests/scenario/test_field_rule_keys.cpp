// The range rules of the parameter structs (their check()) reported at the YAML key the user wrote:
// where a key differs from its struct field (threshold.static for PfcParams::static_xoff, go_back_n
// for TransportParams::gbn, ...), the reader's mapping must point at the key, with file:line:col.
#include <doctest/doctest.h>

#include <string>

#include "tests/scenario/scenario_text_fixtures.hpp"

using syncsim::testing::scenario_error_of;

namespace {

// `block` goes on line 7, below `fabric:`.
std::string error_with(const std::string& block) {
  return scenario_error_of(R"(name: t
fidelity: packet
fabric:
  topology: spine_leaf
  spine_leaf: {leaves: 2, hosts_per_leaf: 2, spines: 1}
  host: {gpus: 1, nics: 1}
  )" + block + R"(
traffic:
  - pattern: messages
    messages: [{src: 0, dst: 2, size: 1MB, start: 0us}]
)");
}

}  // namespace

TEST_CASE("field rules: PFC thresholds and the watchdog at their YAML keys") {
  CHECK(error_with("switch: {pfc: {threshold: {static: 0B}}}") ==
        "t.yaml:7:38: fabric.switch.pfc.threshold.static: expected a positive XOFF threshold, got "
        "0 B");
  // The default xon_offset above a static XOFF is the threshold's fault; a written one is its own.
  CHECK(error_with("switch: {pfc: {threshold: {static: 2KiB}}}") ==
        "t.yaml:7:29: fabric.switch.pfc.threshold: expected a static XOFF threshold of at least "
        "the default xon_offset (3072 B), or set xon_offset, got 2048 B");
  CHECK(error_with("switch: {pfc: {threshold: {static: 2KiB}, xon_offset: 4KiB}}") ==
        "t.yaml:7:57: fabric.switch.pfc.xon_offset: expected xon_offset <= the static XOFF "
        "threshold (2048 B) so that 0 <= XON < XOFF, got 4096 B");
  CHECK(
      error_with("switch: {pfc: {watchdog: {detection_time: 0us}}}") ==
      "t.yaml:7:45: fabric.switch.pfc.watchdog.detection_time: expected a positive time, got 0us");
  CHECK(
      error_with("switch: {pfc: {pause_quanta: 70000}}") ==
      "t.yaml:7:32: fabric.switch.pfc.pause_quanta: expected 0..65535 (a 16-bit field), got 70000");
}

TEST_CASE("field rules: ETS weights and strict classes at the key that clashes") {
  CHECK(error_with("switch: {ets: {weights: {0: 50, 3: 40}}}") ==
        "t.yaml:7:27: fabric.switch.ets.weights: expected weights (percent of the port) that sum "
        "to 100, got 90");
  CHECK(error_with("switch: {ets: {strict: [3]}}") ==
        "t.yaml:7:26: fabric.switch.ets.strict: expected each class either strict or weighted, "
        "got class 3 in both (the default weights are {0: 50, 3: 50})");
  CHECK(error_with("switch: {ets: {strict: [0], weights: {0: 50, 3: 50}}}") ==
        "t.yaml:7:40: fabric.switch.ets.weights: expected each class either strict or weighted, "
        "got class 0 in both");
}

TEST_CASE("field rules: NIC, transport and impairment keys that differ from the fields") {
  CHECK(error_with("nic: {dcqcn: {min_decrease_factor: 1}}") ==
        "t.yaml:7:38: fabric.nic.dcqcn.min_decrease_factor: expected a number in [0, 1), got 1");
  CHECK(error_with("nic: {rx_pfc: {drain_rate: 0Gbps}}") ==
        "t.yaml:7:30: fabric.nic.rx_pfc.drain_rate: expected a positive rate, got 0Gbps");
  CHECK(error_with("nic: {rx_pfc: {xon: 200KiB}}") ==
        "t.yaml:7:17: fabric.nic.rx_pfc: expected xon < xoff <= buffer");
  CHECK(error_with("transport: {go_back_n: {timeout: 0us}}") ==
        "t.yaml:7:36: fabric.transport.go_back_n.timeout: expected a positive time, got 0us");
  CHECK(error_with("transport: {tcp: {rto_min: 5ms, rto_max: 1ms}}") ==
        "t.yaml:7:44: fabric.transport.tcp.rto_max: expected rto_max >= rto_min");
  CHECK(error_with("transport: {host_staging: {pcie: 0Gbps}}") ==
        "t.yaml:7:36: fabric.transport.host_staging.pcie: expected a positive rate, got 0");
  CHECK(error_with("impairments: {jitter: {distribution: normal, stddev_fraction: 101}}") ==
        "t.yaml:7:65: fabric.impairments.jitter.stddev_fraction: expected a fraction of the link "
        "delay in [0, 100], got 101");
  CHECK(error_with("impairments: {loss: 1.0}") ==
        "t.yaml:7:23: fabric.impairments.loss: expected a probability in [0, 1), got 1.0");
}

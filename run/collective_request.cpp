#include "run/collective_request.hpp"

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>

#include "run/nccl_tests_format.hpp"
#include "scenario/physical_parameters.hpp"

namespace syncsim::app {

CollectiveOutcome run_collective_request(const Scenario& scenario, CollectiveSweepOptions options,
                                         const CollectiveModelRequest& request) {
  const std::string model = request.model.value_or("sim");
  if (model != "sim" && model != "nccl" && model != "calibrated") {
    throw CollectiveUsageError("--model must be sim, nccl or calibrated");
  }
  options.nccl_model = model == "nccl";
  CollectiveOutcome out;
  out.model = model;
  // A profile (flag, else the scenario's) makes `calibrated` the default model; an explicit
  // --model sim or nccl still wins.
  out.calibration = scenario.collective_calibration;
  if (request.calibration_file) {
    out.calibration = read_collective_calibration(*request.calibration_file);
  }
  // A profile with physical parameters is applied to the scenario, and then the simulator, so
  // set, is the default model; its fitted lines only with --model calibrated.
  Scenario calibrated_scenario = scenario;
  if (request.calibration_file && !out.calibration->physical.empty()) {
    try {
      apply_physical_parameters(calibrated_scenario, out.calibration->physical);
    } catch (const std::invalid_argument& e) {
      throw CollectiveUsageError("--calibration " + out.calibration->file + ": " + e.what());
    }
  }
  const bool calibrated = model == "calibrated" || (!request.model && out.calibration.has_value() &&
                                                    out.calibration->lines_are_the_model());
  if (calibrated && !out.calibration) {
    throw CollectiveUsageError(
        "--model calibrated needs --calibration FILE or a scenario with collective.calibration");
  }
  if (calibrated) {
    out.model = "calibrated";
    if (out.calibration->collectives.empty()) {
      throw CollectiveUsageError("--model calibrated: " + out.calibration->file +
                                 " has no fitted collective lines (`collectives:`), only physical "
                                 "parameters; leave --model at sim to simulate with them");
    }
    out.result = run_calibrated_sweep(calibrated_scenario, options, *out.calibration);
  } else {
    out.result.sweep = run_collective_sweep(calibrated_scenario, options);
  }
  out.warnings = scenario.load_warnings;
  out.warnings.insert(out.warnings.end(), out.result.warnings.begin(), out.result.warnings.end());
  return out;
}

nlohmann::json collective_json(const Scenario& scenario, const CollectiveOutcome& outcome) {
  const CollectiveSweep& sweep = outcome.result.sweep;
  const models::NcclChannels& ch = sweep.channels;
  nlohmann::json j = nccl_tests_json(sweep.header, sweep.rows);
  // The rows' model: "calibrated" only where the profile had the line (else they were simulated).
  j["model"] = outcome.result.calibrated ? "calibrated" : outcome.model == "nccl" ? "nccl" : "sim";
  if (outcome.model == "calibrated") j["calibration"] = outcome.calibration->file;
  if (!outcome.result.calibrated) {
    j["nccl"] = {{"channels", ch.channels},
                 {"channels_requested", ch.requested},
                 {"default_channels", ch.default_channels},
                 {"nics_per_node", ch.nics_used},
                 {"search_channels", ch.search_channels},
                 {"search_bw_GBps", ch.search_bw_GBps},
                 {"channel_copy_GBps", scenario.collective.channel_copy_bytes_per_s / 1e9}};
    // The NVLS graph (null where the node has none): rows with algorithm "nvls" run on it.
    j["nccl"]["nvls"] = nullptr;
    if (ch.nvls_heads > 0) {
      j["nccl"]["nvls"] = {{"heads", ch.nvls_heads},
                           {"channels", ch.nvls_channels},
                           {"bw_GBps", ch.nvls_bw_GBps},
                           {"efficiency", ch.nvls_efficiency},
                           {"link_efficiency", ch.nvls_link_efficiency}};
    }
    // CollNet over the fabric's SHARP switches (null where it cannot run, with the reason in
    // collnet_unavailable): rows with algorithm "collnet_direct" / "collnet_chain" run on it.
    j["nccl"]["collnet"] = nullptr;
    if (ch.collnet_heads > 0) {
      j["nccl"]["collnet"] = {
          {"heads", ch.collnet_heads},
          {"nic_GBps", ch.collnet_nic_GBps},
          {"outstanding_operations", scenario.fabric.sharp.outstanding_operations}};
    }
    j["nccl"]["collnet_unavailable"] = sweep.collnet_unavailable;
  }
  j["warnings"] = outcome.warnings;
  return j;
}

}  // namespace syncsim::app

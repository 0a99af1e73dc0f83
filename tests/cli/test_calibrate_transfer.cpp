// `syncsim calibrate report` with a scenario: the physical fit's "transferred" column, fitted on
// the smallest rank count and predicting the larger one, or k-fold over sizes with one rank count.
// The "measurements" are the simulator's own with a slower NIC and NVLink, so the column can be
// checked exactly against them.
#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "cli/calibrate_report.hpp"
#include "run/physical_fit.hpp"
#include "scenario/physical_parameters.hpp"
#include "scenario/scenario_loader.hpp"

using namespace syncsim;
using namespace syncsim::app;

namespace {

const char* kFabric = R"(name: four-hosts
fidelity: analytic
fabric:
  topology: rail_optimized
  rail_optimized: {groups: 1, hosts_per_group: 4, spines: 2}
  host: {gpus: 4, nics: 4, gpu: h100}
collective: {algorithm: ring, protocol: Simple}
)";

Scenario fabric() {
  LoadOptions o;
  o.fabric_only_ok = true;
  return load_scenario_text(kFabric, "four-hosts.yaml", o);
}

// nccl-tests rows (both placements) of what a NIC at 80% and NVLink at 90% would measure.
std::vector<calibration::Measurement> measured(const std::vector<int>& rank_counts) {
  Scenario truth = fabric();
  set_physical_parameter(truth, "nic_efficiency", 0.8);
  set_physical_parameter(truth, "nvlink_efficiency", 0.9);
  std::vector<MeasuredPoint> points;
  for (int ranks : rank_counts) {
    for (int64_t bytes : {int64_t{1} << 22, int64_t{1} << 24, int64_t{1} << 26}) {
      points.push_back({"all_reduce", ranks, bytes, 0});
    }
  }
  std::vector<calibration::Measurement> rows;
  for (const PredictedPoint& p : predict_points(truth, points)) {
    for (auto placement : {calibration::Placement::OutOfPlace, calibration::Placement::InPlace}) {
      calibration::Measurement m;
      m.op = "all_reduce";
      m.ranks = p.measured.ranks;
      m.bytes = p.measured.bytes;
      m.placement = placement;
      m.time_us = p.predicted_us;
      rows.push_back(m);
    }
  }
  return rows;
}

TransferCheckRequest request() {
  TransferCheckRequest t;
  t.options.parameters = {"nic_efficiency", "nvlink_efficiency"};
  return t;
}

}  // namespace

TEST_CASE("calibrate report: fitted on 8 ranks, the transferred column predicts 16") {
  const Scenario s = fabric();
  const TransferCheckRequest t = request();
  const CalibrationReport r = make_calibration_report(measured({8, 16}), "", &s, &t);
  REQUIRE(r.transfer);
  CHECK(r.transfer->fit_on_ranks == 8);
  REQUIRE(r.lines.size() == 2);
  for (const ReportLine& line : r.lines) {
    for (const ReportRow& row : line.rows) {
      REQUIRE(row.transferred_us);
      CHECK(row.transferred_in_fit == (line.ranks == 8));
      CHECK(std::abs(*row.transferred_rel_error()) < 0.01);
    }
    // The uncalibrated simulator is clearly off, so the check above can fail.
    REQUIRE(line.simulated_max_error);
    CHECK(*line.simulated_max_error > 0.05);
  }
  CHECK_FALSE(r.lines[0].transferred_max_error);  // every 8-rank point was in the fit
  REQUIRE(r.lines[1].transferred_max_error);
  CHECK(*r.lines[1].transferred_max_error < 0.01);
  const nlohmann::json j = report_json(r);
  CHECK(j["transfer"]["fit_on_ranks"] == 8);
  CHECK(j["lines"][1]["rows"][0]["transferred_in_fit"] == false);
  CHECK(report_text(r).find("fitted on the 8-rank points") != std::string::npos);
}

TEST_CASE("calibrate report: one rank count is checked by k-fold over sizes") {
  const Scenario s = fabric();
  const TransferCheckRequest t = request();
  const CalibrationReport r = make_calibration_report(measured({16}), "", &s, &t);
  REQUIRE(r.transfer);
  CHECK(r.transfer->fit_on_ranks == 0);
  CHECK(r.transfer->folds == 3);
  CHECK(r.transfer->fits.size() == 3);
  for (const ReportRow& row : r.lines.at(0).rows) {
    REQUIRE(row.transferred_us);
    CHECK_FALSE(row.transferred_in_fit);
    CHECK(std::abs(*row.transferred_rel_error()) < 0.01);
  }
  CHECK(report_text(r).find("3-fold over sizes") != std::string::npos);
}

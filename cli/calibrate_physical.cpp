#include "cli/calibrate_physical.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/calibrate_cmd.hpp"
#include "run/collective_cmd.hpp"
#include "scenario/physical_parameters.hpp"

namespace syncsim::app {

namespace {

std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> names;
  std::stringstream ss(list);
  std::string name;
  while (std::getline(ss, name, ',')) {
    if (name.empty()) continue;
    try {
      (void)physical_parameter(name);
    } catch (const std::invalid_argument& e) {
      throw CalibrateUsageError(std::string("--parameters: ") + e.what());
    }
    names.push_back(name);
  }
  if (names.empty()) throw CalibrateUsageError("--parameters: expected NAME[,NAME...], found none");
  return names;
}

std::string value_text(double v, const std::string& unit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, unit.empty() ? "%.4f" : "%.3f", v);
  return buf;
}

}  // namespace

void add_fit_tuning_options(po::options_description& options) {
  options.add_options()(
      "parameters", po::value<std::string>(),
      "(with --scenario) fit only these, NAME[,NAME...] (docs/calibration.md lists them)")(
      "fit-fidelity", po::value<std::string>()->default_value("analytic"),
      "(with --scenario) fidelity of the fit's simulations: analytic, flow or packet")(
      "fit-max-size", po::value<std::string>()->default_value("256M"),
      "(with --scenario) sizes above this are predicted, not fitted (0: fit all)");
}

void add_physical_fit_options(po::options_description& options) {
  options.add_options()("scenario", po::value<std::string>(),
                        "fit the simulator's physical parameters on this scenario's fabric");
  add_fit_tuning_options(options);
  add_override_options(options, /*with_seed=*/false);
}

PhysicalFitOptions physical_fit_options(const CommandLine& cl) {
  PhysicalFitOptions options;
  options.fidelity = parse_fit_fidelity(cl.get<std::string>("fit-fidelity"));
  if (cl.has("parameters")) options.parameters = split_names(cl.get<std::string>("parameters"));
  try {
    options.max_fit_bytes = parse_size_flag(cl.get<std::string>("fit-max-size"));
  } catch (const std::exception& e) {
    throw CalibrateUsageError(std::string("--fit-max-size: ") + e.what());
  }
  return options;
}

Fidelity parse_fit_fidelity(const std::string& text) {
  if (text == "analytic") return Fidelity::Analytic;
  if (text == "flow") return Fidelity::Flow;
  if (text == "packet") return Fidelity::Packet;
  throw CalibrateUsageError("--fit-fidelity: expected analytic, flow or packet, found \"" + text +
                            "\"");
}

std::optional<PhysicalFitResult> physical_fit_from_command_line(
    const CommandLine& cl, const std::vector<calibration::Measurement>& measured) {
  LoadOptions load;
  try {
    load = load_options(cl);
  } catch (const std::exception& e) {
    throw CalibrateUsageError(e.what());
  }
  if (!cl.has("scenario")) {
    if (!load.overrides.empty() || cl.has("parameters")) {
      throw CalibrateUsageError("--set, --unset and --parameters need --scenario");
    }
    return std::nullopt;
  }
  const PhysicalFitOptions options = physical_fit_options(cl);
  load.fabric_only_ok = true;
  const Scenario scenario = load_scenario_file(cl.get<std::string>("scenario"), load);
  const std::vector<MeasuredPoint> points = measured_points(measured);
  try {
    return fit_physical_parameters(scenario, points, options);
  } catch (const CollectiveUsageError& e) {
    throw CalibrateUsageError(std::string("--scenario: ") + e.what());
  }
}

std::string physical_fit_text(const PhysicalFitResult& r, bool residuals) {
  const calibration::PhysicalFit& f = r.fit;
  std::ostringstream os;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "physical parameters: fitted on %d points of %s at %s fidelity, rms error "
                "%.2f%%, max %.2f%% (%d simulations of those points, %d iterations)\n",
                f.points, f.scenario.c_str(), f.fidelity.c_str(), 100 * f.rms_rel_error,
                100 * f.max_rel_error, r.simulations, r.iterations);
  os << buf;
  if (r.fitted_points < static_cast<int>(r.points.size())) {
    double max_predicted = 0;
    for (const PredictedPoint& p : r.points)
      max_predicted = std::max(max_predicted, std::abs(p.rel_error));
    std::snprintf(buf, sizeof buf,
                  "  %d larger sizes predicted, not fitted (--fit-max-size); max error over all "
                  "%zu points %.2f%%\n",
                  static_cast<int>(r.points.size()) - r.fitted_points, r.points.size(),
                  100 * max_predicted);
    os << buf;
  }
  std::snprintf(buf, sizeof buf, "  %-26s %12s %10s %12s  %s\n", "parameter", "value", "1 sigma",
                "nominal", "");
  os << buf;
  for (const calibration::PhysicalParameter& q : f.parameters) {
    const std::string unit = q.unit.empty() ? "" : " " + q.unit;
    const char* status = "not identified (poorly determined)";
    if (q.identified) {
      status = "identified";
    } else if (q.stddev == 0 && q.value == q.nominal) {
      status = "not in the data: nominal";
    }
    std::snprintf(buf, sizeof buf, "  %-26s %12s %10s %12s  %s\n", q.name.c_str(),
                  (value_text(q.value, q.unit) + unit).c_str(),
                  q.stddev > 0 ? value_text(q.stddev, q.unit).c_str() : "-",
                  value_text(q.nominal, q.unit).c_str(), status);
    os << buf;
  }
  if (residuals) {
    std::snprintf(buf, sizeof buf, "  %-14s %6s %14s %12s %12s %9s  %s\n", "op", "ranks", "bytes",
                  "measured_us", "fitted_us", "rel_err", "algorithm/protocol");
    os << buf;
    for (const PredictedPoint& p : r.points) {
      std::snprintf(buf, sizeof buf, "  %-14s %6d %14lld %12.2f %12.2f %8.2f%%  %s/%s\n",
                    p.measured.op.c_str(), p.measured.ranks,
                    static_cast<long long>(p.measured.bytes), p.measured.measured_us,
                    p.predicted_us, 100 * p.rel_error, p.algorithm.c_str(), p.protocol.c_str());
      os << buf;
    }
  }
  return os.str();
}

nlohmann::json physical_parameters_json(const calibration::PhysicalFit& f) {
  nlohmann::json params = nlohmann::json::array();
  for (const calibration::PhysicalParameter& q : f.parameters) {
    params.push_back({{"name", q.name},
                      {"unit", q.unit},
                      {"value", q.value},
                      {"stddev", q.stddev},
                      {"nominal", q.nominal},
                      {"identified", q.identified}});
  }
  return {{"scenario", f.scenario},
          {"fidelity", f.fidelity},
          {"points", f.points},
          {"rms_rel_error", f.rms_rel_error},
          {"max_rel_error", f.max_rel_error},
          {"parameters", params}};
}

nlohmann::json physical_fit_json(const PhysicalFitResult& r) {
  nlohmann::json j = physical_parameters_json(r.fit);
  nlohmann::json points = nlohmann::json::array();
  for (const PredictedPoint& p : r.points) {
    points.push_back({{"op", p.measured.op},
                      {"ranks", p.measured.ranks},
                      {"bytes", p.measured.bytes},
                      {"measured_us", p.measured.measured_us},
                      {"fitted_us", p.predicted_us},
                      {"rel_error", p.rel_error},
                      {"algorithm", p.algorithm},
                      {"protocol", p.protocol}});
  }
  j["residuals"] = points;
  j["simulations"] = r.simulations;
  j["fitted_points"] = r.fitted_points;
  j["iterations"] = r.iterations;
  return j;
}

}  // namespace syncsim::app

// `syncsim validate`: predictions for the validation cases, errors, verdicts, group summaries.
#include "run/validate.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "run/collective_cmd.hpp"
#include "run/result_schema.hpp"
#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"
#include "scenario/units.hpp"

namespace syncsim::app {

namespace {

[[noreturn]] void fail_at(const CasePosition& where, const std::string& path,
                          const std::string& message) {
  throw ScenarioError(where.file, where.line, where.column, path, message);
}

// The dimension of a result schema unit, when a measurement can be compared with it.
std::optional<UnitDimension> schema_dimension(std::string_view unit) {
  if (unit == "s") return UnitDimension::Time;
  if (unit == "GB/s") return UnitDimension::Bandwidth;
  if (unit == "tokens/s") return UnitDimension::Throughput;
  if (unit == "-") return UnitDimension::Ratio;
  return std::nullopt;
}

Scenario load_case_scenario(const ValidationCase& c, const MeasuredValue& v) {
  LoadOptions load;
  load.overrides = c.overrides;
  load.overrides.insert(load.overrides.end(), v.overrides.begin(), v.overrides.end());
  load.fabric_only_ok = c.metric->collective.has_value();  // the collective is the traffic
  if (c.scenario_file) return load_scenario_file(*c.scenario_file, load);
  return load_scenario_text(*c.scenario_inline, c.inline_source, load);
}

double predict_collective(const ValidationCase& c, const MeasuredValue& v, const Scenario& s) {
  const CollectiveMetric& m = *c.metric->collective;
  CollectiveSweepOptions o;
  o.op = m.op;
  o.ranks = m.ranks;
  o.min_bytes = *v.size;
  o.max_bytes = *v.size;
  // As `syncsim collective` with its defaults, so a case reads what the command prints.
  o.run.hbm_bytes_per_s = parse_bandwidth(kDefaultCollectiveHbm).bytes_per_second();
  CollectiveSweep sweep;
  try {
    sweep = run_collective_sweep(s, o);
  } catch (const CollectiveUsageError& e) {
    fail_at(c.metric->where, "metric", e.what());
  }
  const NcclTestsResult& r = sweep.rows.at(0).out_of_place;
  if (v.unit.dimension == UnitDimension::Time) return r.time_us * 1e-6 / v.unit.scale;
  return (m.algbw ? r.algbw : r.busbw) / v.unit.scale;
}

double predict_run(const ValidationCase& c, const MeasuredValue& v, const Scenario& s) {
  const RunMetric& m = *c.metric->run;
  const ResultKey* key = find_result_column(m.key);
  if (key == nullptr) {
    fail_at(m.where, m.where.path,
            "expected a column of `syncsim run --json` (syncsim run --list-keys), got \"" + m.key +
                "\"");
  }
  const auto dimension = schema_dimension(key->unit);
  if (!dimension || *dimension != v.unit.dimension) {
    fail_at(v.where, v.where.path + ".unit",
            "expected a unit of " + std::string(key->unit) + " (" + m.key + "), got \"" +
                v.unit.name + "\"");
  }
  const RunResult r = run_scenario(s);
  if (!result_key_present(*key, r)) {
    fail_at(m.where, m.where.path,
            "the scenario's run has no \"" + m.key + "\" (" + std::string(key->description) + ")");
  }
  double x = key->read(r).get<double>();
  if (m.per_gpu) {
    double gpus = r.gpus;
    if (r.step) {
      gpus = 1;
      for (const char* degree : {"layout.tensor_parallel", "layout.context_parallel",
                                 "layout.pipeline_parallel", "layout.data_parallel"}) {
        gpus *= find_result_key(degree)->read(r).get<double>();
      }
    }
    x /= gpus;
  }
  return x / v.unit.scale;
}

std::string number(std::optional<double> v, const char* format = "%.4g") {
  if (!v) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, format, *v);
  return buf;
}

std::string percent(std::optional<double> v, bool sign) {
  if (!v) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, sign ? "%+.1f%%" : "%.1f%%", *v * 100);
  return buf;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) {
    if (ch == '"') q += '"';
    q += ch;
  }
  return q + "\"";
}

nlohmann::ordered_json optional_number(std::optional<double> v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

}  // namespace

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::Pass:
      return "pass";
    case Verdict::Fail:
      return "fail";
    case Verdict::Inexpressible:
      return "inexpressible";
  }
  return "?";
}

std::vector<ValidationCase> select_cases(const std::vector<ValidationCase>& cases,
                                         const std::vector<std::string>& names) {
  if (names.empty()) return cases;
  for (const std::string& name : names) {
    const bool known = std::any_of(cases.begin(), cases.end(), [&](const ValidationCase& c) {
      return c.id == name || to_string(c.group) == name;
    });
    if (!known) {
      std::string ids;
      for (const ValidationCase& c : cases) ids += (ids.empty() ? "" : ", ") + c.id;
      std::string groups;
      for (const std::string& g : validation_group_names())
        groups += (groups.empty() ? "" : ", ") + g;
      throw ValidationUsageError("\"" + name + "\" is neither a case (" + ids + ") nor a group (" +
                                 groups + ")");
    }
  }
  std::vector<ValidationCase> out;
  for (const ValidationCase& c : cases) {
    if (std::any_of(names.begin(), names.end(),
                    [&](const std::string& n) { return c.id == n || to_string(c.group) == n; })) {
      out.push_back(c);
    }
  }
  return out;
}

ValidationRow judge(const ValidationCase& c, const MeasuredValue& v,
                    std::optional<double> predicted, const std::string& why) {
  ValidationRow row;
  row.id = c.id;
  row.group = std::string(to_string(c.group));
  row.quantity = v.quantity;
  row.unit = v.unit.name;
  row.measured = v.value;
  row.tolerance = c.tolerance;
  if (!predicted || !v.value) {
    row.verdict = Verdict::Inexpressible;
    row.reason = why.empty() ? "no published value to compare with" : why;
    return row;
  }
  row.predicted = predicted;
  row.error = (*predicted - *v.value) / *v.value;
  // A prediction that is not a number (a zero-length run) can never be within tolerance.
  const bool within = std::isfinite(*row.error) && std::abs(*row.error) <= c.tolerance;
  row.verdict = within ? Verdict::Pass : Verdict::Fail;
  row.reason = c.tolerance_reason;
  return row;
}

std::vector<GroupSummary> summarize(const std::vector<ValidationRow>& rows) {
  std::vector<GroupSummary> out;
  for (const std::string& g : validation_group_names()) {
    GroupSummary s;
    s.group = g;
    double sum = 0;
    for (const ValidationRow& r : rows) {
      if (r.group != g) continue;
      if (r.verdict == Verdict::Inexpressible) {
        ++s.inexpressible;
        continue;
      }
      const double e = std::abs(*r.error);
      ++s.count;
      sum += e;
      s.max_abs_error = std::max(s.max_abs_error.value_or(0.0), e);
    }
    if (s.count > 0) s.mean_abs_error = sum / static_cast<double>(s.count);
    out.push_back(s);
  }
  return out;
}

std::optional<double> predict(const ValidationCase& c, const MeasuredValue& v, std::string& why) {
  if (!c.inexpressible.empty() || !v.inexpressible.empty()) {
    why = !v.inexpressible.empty() ? v.inexpressible : c.inexpressible;
    return std::nullopt;
  }
  const Scenario s = load_case_scenario(c, v);
  if (c.metric->collective) return predict_collective(c, v, s);
  return predict_run(c, v, s);
}

ValidationReport run_validation(const std::vector<ValidationCase>& cases, unsigned jobs) {
  struct Task {
    std::size_t case_index, value_index;
  };
  std::vector<Task> tasks;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    for (std::size_t j = 0; j < cases[i].measured.size(); ++j) tasks.push_back({i, j});
  }
  std::vector<ValidationRow> rows(tasks.size());
  std::vector<std::exception_ptr> errors(tasks.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (;;) {
      const std::size_t t = next.fetch_add(1);
      if (t >= tasks.size()) return;
      const ValidationCase& c = cases[tasks[t].case_index];
      const MeasuredValue& v = c.measured[tasks[t].value_index];
      try {
        std::string why;
        const std::optional<double> predicted = predict(c, v, why);
        rows[t] = judge(c, v, predicted, why);
      } catch (...) {
        errors[t] = std::current_exception();
      }
    }
  };
  const std::size_t threads = std::min<std::size_t>(std::max(1u, jobs), tasks.size());
  if (threads <= 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (std::size_t i = 0; i < threads; ++i) pool.emplace_back(worker);
    for (auto& th : pool) th.join();
  }
  // The first failing value in suite order, so the message does not depend on the threads.
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  ValidationReport report;
  report.rows = std::move(rows);
  report.groups = summarize(report.rows);
  return report;
}

int validation_exit_code(const ValidationReport& report) {
  const bool failed =
      std::any_of(report.rows.begin(), report.rows.end(),
                  [](const ValidationRow& r) { return r.verdict == Verdict::Fail; });
  return failed ? kValidationExitFail : 0;
}

std::vector<Regression> find_regressions(const ValidationReport& report,
                                         const std::vector<BaselineValue>& baseline,
                                         double allowance) {
  std::map<std::pair<std::string, std::string>, std::optional<double>> before;
  for (const BaselineValue& b : baseline) before[{b.id, b.quantity}] = b.error;
  std::vector<Regression> out;
  for (const ValidationRow& r : report.rows) {
    const auto it = before.find({r.id, r.quantity});
    if (it == before.end() || !it->second) continue;  // new, or inexpressible then
    const double was = std::abs(*it->second);
    if (!r.error || std::abs(*r.error) > was + allowance) {
      out.push_back({r.id, r.quantity, it->second, r.error});
    }
  }
  return out;
}

std::string regression_text(const std::vector<Regression>& regressions, double allowance) {
  std::string out;
  char buf[64];
  const auto pct = [&](std::optional<double> e) {
    if (!e) return std::string("inexpressible");
    std::snprintf(buf, sizeof buf, "%+.1f%%", *e * 100.0);
    return std::string(buf);
  };
  for (const Regression& g : regressions) {
    std::snprintf(buf, sizeof buf, "%.1f", allowance * 100.0);
    const std::string allow = buf;
    out += "# regression: " + g.id + " " + g.quantity + ": error " + pct(g.baseline_error) +
           " -> " + pct(g.error) + " (allowed: " + allow + " points worse)\n";
  }
  return out;
}

nlohmann::ordered_json validation_json(const ValidationReport& report) {
  nlohmann::ordered_json out;
  out["cases"] = nlohmann::ordered_json::array();
  for (const ValidationRow& r : report.rows) {
    out["cases"].push_back({{"id", r.id},
                            {"group", r.group},
                            {"quantity", r.quantity},
                            {"unit", r.unit},
                            {"measured", optional_number(r.measured)},
                            {"predicted", optional_number(r.predicted)},
                            {"error", optional_number(r.error)},
                            {"tolerance", r.tolerance},
                            {"verdict", std::string(to_string(r.verdict))},
                            {"reason", r.reason}});
  }
  out["groups"] = nlohmann::ordered_json::object();
  for (const GroupSummary& g : report.groups) {
    out["groups"][g.group] = {{"count", g.count},
                              {"mean_abs_error", optional_number(g.mean_abs_error)},
                              {"max_abs_error", optional_number(g.max_abs_error)},
                              {"inexpressible", g.inexpressible}};
  }
  return out;
}

std::string validation_csv(const ValidationReport& report) {
  std::string out = "id,group,quantity,unit,measured,predicted,error,tolerance,verdict,reason\n";
  auto num = [](std::optional<double> v) { return v ? number(v, "%.17g") : std::string(); };
  for (const ValidationRow& r : report.rows) {
    out += csv_field(r.id) + "," + r.group + "," + csv_field(r.quantity) + "," + csv_field(r.unit) +
           "," + num(r.measured) + "," + num(r.predicted) + "," + num(r.error) + "," +
           number(r.tolerance, "%.17g") + "," + std::string(to_string(r.verdict)) + "," +
           csv_field(r.reason) + "\n";
  }
  return out;
}

std::string validation_text(const ValidationReport& report) {
  // Column widths from the content, so ids and quantities of any length line up.
  std::size_t id_w = 4, quantity_w = 8;
  for (const ValidationRow& r : report.rows) {
    id_w = std::max(id_w, r.id.size());
    quantity_w = std::max(quantity_w, r.quantity.size());
  }
  std::string out;
  auto pad = [](std::string s, std::size_t w, bool right = false) {
    if (s.size() >= w) return s;
    return right ? std::string(w - s.size(), ' ') + s : s + std::string(w - s.size(), ' ');
  };
  out += pad("case", id_w) + "  " + pad("quantity", quantity_w) + "  " + pad("unit", 8) + "  " +
         pad("measured", 10, true) + "  " + pad("predicted", 10, true) + "  " +
         pad("error", 8, true) + "  " + pad("tol", 6, true) + "  verdict\n";
  std::string last_id, last_reason;
  for (const ValidationRow& r : report.rows) {
    out += pad(r.id, id_w) + "  " + pad(r.quantity, quantity_w) + "  " + pad(r.unit, 8) + "  " +
           pad(number(r.measured), 10, true) + "  " + pad(number(r.predicted), 10, true) + "  " +
           pad(percent(r.error, true), 8, true) + "  " + pad(percent(r.tolerance, false), 6, true) +
           "  " + std::string(to_string(r.verdict));
    // The reason once per case: its other values say so instead of repeating it.
    if (r.verdict == Verdict::Inexpressible) {
      out += r.id == last_id && r.reason == last_reason ? " (as above)" : ": " + r.reason;
      last_id = r.id;
      last_reason = r.reason;
    }
    out += "\n";
  }
  out += "\n";
  for (const GroupSummary& g : report.groups) {
    out += pad(g.group, 15) + "  " + std::to_string(g.count) + " compared, mean |error| " +
           percent(g.mean_abs_error, false) + ", max |error| " + percent(g.max_abs_error, false) +
           ", " + std::to_string(g.inexpressible) + " inexpressible\n";
  }
  return out;
}

}  // namespace syncsim::app

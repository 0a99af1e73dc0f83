// syncsim._core: the compiled half of the Python module `syncsim` (docs/python.md). Like cli/, it
// only parses arguments, calls run/ and scenario/, and hands back what the CLI prints: every result
// is the CLI's --json document as text, which python/syncsim/__init__.py turns into dicts and lists
// (json.loads), so Python and the CLI share one schema. The GIL is released while anything is
// loaded or simulated; progress callbacks take it back for each call.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "calibration/profile.hpp"
#include "run/collective_cmd.hpp"
#include "run/collective_request.hpp"
#include "run/estimate.hpp"
#include "run/machine_speed.hpp"
#include "run/progress.hpp"
#include "run/runner.hpp"
#include "run/sweep.hpp"
#include "run/validate.hpp"
#include "scenario/default_scenario.hpp"
#include "scenario/scenario_loader.hpp"
#include "scenario/units.hpp"
#include "scenario/validation_case.hpp"

#ifndef SYNCSIM_VALIDATION_DIR
#define SYNCSIM_VALIDATION_DIR "validation"
#endif

namespace py = pybind11;

namespace syncsim::app {
namespace {

// Bad arguments to run/collective/sweep/validate (the CLI's exit-2 usage errors), one Python class.
class PythonUsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// A loaded scenario and how to load it again: sweep() reloads it once per point, with the point's
// values as further overrides, as `syncsim sweep FILE --set ...` does.
struct LoadedScenario {
  std::string source;               // the file, "<built-in default>", or the name given to text
  std::optional<std::string> text;  // YAML text (a dict, the built-in default); nullopt: the file
  std::vector<Override> overrides;  // set= (and unset) in order
  std::optional<uint64_t> seed;
  // Loaded as `syncsim collective` loads (a fabric alone is enough); identical to a full load when
  // the scenario has traffic or a workload.
  Scenario scenario;
  // Why `syncsim run` would refuse it (no traffic or workload): raised by run() and sweep().
  std::optional<ScenarioError> not_runnable;
};

Scenario load_once(const LoadedScenario& s, bool fabric_only_ok) {
  LoadOptions options;
  options.overrides = s.overrides;
  options.seed = s.seed;
  options.fabric_only_ok = fabric_only_ok;
  return s.text ? load_scenario_text(*s.text, s.source, options)
                : load_scenario_file(s.source, options);
}

// set= pairs (dotted path, the value as YAML text; None removes the key), as --set / --unset.
LoadedScenario load(const std::optional<std::string>& path, const std::optional<std::string>& text,
                    const std::string& name,
                    const std::vector<std::pair<std::string, std::optional<std::string>>>& sets,
                    std::optional<uint64_t> seed) {
  LoadedScenario s;
  if (text) {
    s.source = name;
    s.text = text;
  } else if (path) {
    s.source = *path;
  } else {
    s.source = kDefaultScenarioSource;
    s.text = default_scenario_yaml();
  }
  for (const auto& [key, value] : sets) {
    s.overrides.push_back(value ? parse_override(key + "=" + *value) : unset_override(key));
  }
  s.seed = seed;
  const py::gil_scoped_release release;
  try {
    s.scenario = load_once(s, /*fabric_only_ok=*/false);
  } catch (const ScenarioError& strict) {
    // A fabric alone still serves collective(); anything else wrong is the error `run` prints.
    try {
      s.scenario = load_once(s, /*fabric_only_ok=*/true);
    } catch (const ScenarioError&) {
      throw strict;
    }
    s.not_runnable = strict;
  }
  return s;
}

void require_runnable(const LoadedScenario& s) {
  if (s.not_runnable) throw ScenarioError(*s.not_runnable);
}

// A Python callable called from a simulating thread: takes the GIL for each call; the first
// exception it raises is kept (the simulation is not unwound through) and later calls are skipped.
class Callback {
 public:
  explicit Callback(py::object fn) : fn_(std::move(fn)) {}
  bool set() const { return !fn_.is_none(); }
  // `call` builds the arguments and calls the callable; it runs with the GIL held.
  void operator()(const std::function<void(const py::object& fn)>& call) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (error_) return;
    const py::gil_scoped_acquire acquire;
    try {
      call(fn_);
    } catch (...) {
      error_ = std::current_exception();
    }
  }
  // With the GIL held, after the simulation: raise what the callable raised.
  void rethrow() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  py::object fn_;
  std::mutex mutex_;
  std::exception_ptr error_;
};

std::string run_json(const LoadedScenario& s, bool force, const py::object& progress) {
  require_runnable(s);
  Callback callback(progress);
  RunResult result;
  {
    const py::gil_scoped_release release;
    // As `syncsim run --json`: estimate first, refuse what would not fit, then run and attach the
    // estimate and the process's peak RSS.
    Estimate estimate = estimate_run(s.scenario, /*port_counters=*/false);
    scale_to_machine(estimate, machine_speed_for(estimate.wall_s));
    if (!force) {
      if (const auto why = refusal(estimate, available_memory_bytes())) {
        throw PythonUsageError(s.scenario.source + ": " + *why);
      }
    }
    RunOptions options;
    options.estimated_wall_s = estimate.wall_s;
    options.expected_sim_s = estimate.sim_time_s;
    if (callback.set()) {
      const auto start = std::chrono::steady_clock::now();
      options.on_step_progress = [&](const models::StepProgress& p) {
        ProgressView v;
        v.elapsed_s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        v.estimated_wall_s = estimate.wall_s;
        v.sim_published = true;
        v.sim_done_s = p.simulated.seconds();
        v.sim_expected_s = estimate.sim_time_s;
        v.buckets_done = static_cast<uint32_t>(p.buckets_done);
        v.buckets = static_cast<uint32_t>(p.buckets);
        v.timing_bucket_bytes = p.timing_bucket_bytes;
        v.timing_extrapolated = p.timing_extrapolated;
        callback([&v](const py::object& fn) {
          py::dict d;
          d["sim_done_s"] = v.sim_done_s;
          d["sim_expected_s"] = v.sim_expected_s;
          d["buckets_done"] = v.buckets_done;
          d["buckets"] = v.buckets;
          d["timing_bucket_bytes"] = v.timing_bucket_bytes;
          d["elapsed_s"] = v.elapsed_s;
          d["estimated_wall_s"] = v.estimated_wall_s;
          d["text"] = progress_text(v);
          fn(d);
        });
      };
    }
    result = run_scenario(s.scenario, options);
    result.estimate = estimate;
    result.peak_rss_bytes = peak_rss_bytes();
  }
  callback.rethrow();
  return to_json(result).dump();
}

// collective(): the flags of `syncsim collective`, read as it reads them.
struct CollectiveArgs {
  std::string op = "all_reduce";
  std::optional<std::string> algo, protocol, model, calibration, chunk_bytes;
  std::string min_bytes = "32M", max_bytes = "32M", step_latency = "0";
  std::string hbm = kDefaultCollectiveHbm;
  std::vector<std::string> sizes;  // explicit sizes (instead of min, max and factor)
  int64_t step_factor = 2;
  uint32_t ranks = 0, root = 0;
  std::optional<uint32_t> channels;
};

std::string collective_json_text(const LoadedScenario& s, const CollectiveArgs& a) {
  CollectiveSweepOptions o;
  CollectiveModelRequest request;
  try {
    o.op = models::parse_collective_op(a.op);
    if (a.algo && *a.algo == "auto") {
      o.auto_algo = true;
    } else if (a.algo) {
      o.algo = models::parse_collective_algo(*a.algo);
    }
    if (a.protocol && *a.protocol == "auto") {
      o.auto_protocol = true;
    } else if (a.protocol) {
      o.protocol = models::parse_nccl_protocol(*a.protocol);
    }
    o.ranks = a.ranks;
    o.min_bytes = parse_size_flag(a.min_bytes);
    o.max_bytes = parse_size_flag(a.max_bytes);
    o.step_factor = a.step_factor;
    for (const std::string& size : a.sizes) o.sizes.push_back(parse_size_flag(size));
    if (!o.sizes.empty()) {
      o.min_bytes = *std::min_element(o.sizes.begin(), o.sizes.end());
      o.max_bytes = *std::max_element(o.sizes.begin(), o.sizes.end());
    }
    o.channels = a.channels;
    if (a.chunk_bytes) o.chunk_bytes = parse_size_flag(*a.chunk_bytes);
    o.root = a.root;
    o.run.step_latency = parse_time(a.step_latency);
    o.run.hbm_bytes_per_s = a.hbm == "0" ? 0.0 : parse_bandwidth(a.hbm).bytes_per_second();
  } catch (const std::invalid_argument& e) {  // unknown op/algo/protocol, UnitError
    throw PythonUsageError(e.what());
  }
  request.model = a.model;
  request.calibration_file = a.calibration;
  const py::gil_scoped_release release;
  const CollectiveOutcome outcome = run_collective_request(s.scenario, o, request);
  return collective_json(s.scenario, outcome).dump();
}

// sweep(): axes as (path, values as YAML text); the scenario's own `sweep:` block when none.
std::string sweep_json_text(
    const LoadedScenario& s,
    const std::vector<std::pair<std::string, std::vector<std::string>>>& vary, unsigned jobs,
    const std::optional<std::vector<std::string>>& columns, bool wall, bool force,
    const py::object& progress) {
  require_runnable(s);
  if (jobs == 0) throw PythonUsageError("jobs: expected a positive integer, found 0");
  SweepSpec spec;
  spec.scenario_path = s.source;
  spec.scenario_text = s.text;
  spec.sets = s.overrides;
  spec.seed = s.seed;
  spec.wall = wall;
  for (const auto& [path, values] : vary) {
    if (values.empty()) throw PythonUsageError("vary: " + path + ": expected a list of values");
    spec.axes.push_back(SweepAxis{path, values});
  }
  if (spec.axes.empty()) {
    for (const auto& axis : s.scenario.sweep) {
      spec.axes.push_back(SweepAxis{axis.path, axis.values, axis.labels});
    }
  }
  if (spec.axes.empty()) {
    throw PythonUsageError(
        "expected at least one axis: vary={\"dotted.path\": [v1, v2, ...]} or a scenario with a "
        "`sweep:` block");
  }
  Callback callback(progress);
  std::vector<std::string> rows;
  {
    const py::gil_scoped_release release;
    if (columns) {
      std::string list;
      for (const auto& c : *columns) list += (list.empty() ? "" : ",") + c;
      spec.columns = parse_sweep_columns(list);
    }
    const SweepPlan plan = plan_sweep(std::move(spec));
    const std::size_t n = plan.scenarios.size();
    // As `syncsim sweep`: every point's memory estimate, times the points running at once, must
    // fit in the available memory.
    std::vector<Estimate> estimates;
    estimates.reserve(n);
    for (const Scenario& p : plan.scenarios) estimates.push_back(estimate_run(p, true));
    const auto concurrent =
        static_cast<unsigned>(std::min<std::size_t>(jobs, std::max<std::size_t>(1, n)));
    if (!force) {
      const auto refused =
          sweep_memory_refusals(plan, estimates, concurrent, available_memory_bytes());
      if (!refused.empty()) {
        std::string why;
        for (const auto& r : refused) why += r + "\n";
        throw PythonUsageError(why + "refusing to start: " + std::to_string(refused.size()) +
                               " of " + std::to_string(n) +
                               " points would not fit; fewer jobs, or force=True runs it anyway");
      }
    }
    rows = run_sweep_local(plan, jobs, [&](std::size_t done) {
      if (callback.set()) callback([&](const py::object& fn) { fn(done, n); });
    });
  }
  callback.rethrow();
  return sweep_json(rows);
}

std::string validate_json_text(const std::vector<std::string>& names, unsigned jobs,
                               const std::optional<std::string>& suite) {
  if (jobs == 0) throw PythonUsageError("jobs: expected a positive integer, found 0");
  const py::gil_scoped_release release;
  const std::vector<ValidationCase> all =
      load_validation_suite(suite.value_or(SYNCSIM_VALIDATION_DIR));
  std::vector<ValidationCase> cases;
  try {
    cases = select_cases(all, names);
  } catch (const ValidationUsageError& e) {
    throw PythonUsageError(e.what());
  }
  return validation_json(run_validation(cases, jobs)).dump();
}

}  // namespace
}  // namespace syncsim::app

PYBIND11_MODULE(_core, m) {
  using namespace syncsim::app;
  m.doc() = "syncsim's compiled core; use the `syncsim` package (docs/python.md).";

  static const py::exception<ScenarioError> scenario_error(m, "ScenarioError", PyExc_ValueError);
  static const py::exception<PythonUsageError> usage_error(m, "UsageError", PyExc_ValueError);
  // pybind11 takes a plain function pointer of type void(std::exception_ptr): by value.
  // NOLINTNEXTLINE(performance-unnecessary-value-param)
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ScenarioError& e) {
      PyErr_SetString(scenario_error.ptr(), e.what());
    } catch (const PythonUsageError& e) {
      PyErr_SetString(usage_error.ptr(), e.what());
    } catch (const CollectiveUsageError& e) {
      PyErr_SetString(usage_error.ptr(), e.what());
    } catch (const SweepUsageError& e) {
      PyErr_SetString(usage_error.ptr(), e.what());
    } catch (const syncsim::calibration::ProfileError& e) {
      PyErr_SetString(scenario_error.ptr(), e.what());
    }
  });

  py::class_<LoadedScenario>(m, "LoadedScenario")
      .def_readonly("source", &LoadedScenario::source)
      .def_property_readonly("name", [](const LoadedScenario& s) { return s.scenario.name; })
      .def_property_readonly("seed", [](const LoadedScenario& s) { return s.scenario.seed; })
      .def_property_readonly(
          "fidelity",
          [](const LoadedScenario& s) { return std::string(fidelity_name(s.scenario.fidelity)); })
      .def_property_readonly(
          "has_workload", [](const LoadedScenario& s) { return s.scenario.workload.has_value(); })
      .def_property_readonly("runnable",
                             [](const LoadedScenario& s) { return !s.not_runnable.has_value(); })
      .def_property_readonly("warnings",
                             [](const LoadedScenario& s) { return s.scenario.load_warnings; });

  m.def("load", &load, py::arg("path"), py::arg("text"), py::arg("name"), py::arg("sets"),
        py::arg("seed"));
  m.def("run", &run_json, py::arg("scenario"), py::arg("force"), py::arg("progress"));
  m.def(
      "collective",
      [](const LoadedScenario& s, std::string op, std::optional<std::string> algo,
         std::optional<std::string> protocol, std::optional<std::string> model,
         std::optional<std::string> calibration, uint32_t ranks, std::string min_bytes,
         std::string max_bytes, int64_t step_factor, std::vector<std::string> sizes,
         std::optional<uint32_t> channels, std::optional<std::string> chunk_bytes, uint32_t root,
         std::string step_latency, std::string hbm) {
        CollectiveArgs a;
        a.op = std::move(op);
        a.algo = std::move(algo);
        a.protocol = std::move(protocol);
        a.model = std::move(model);
        a.calibration = std::move(calibration);
        a.ranks = ranks;
        a.min_bytes = std::move(min_bytes);
        a.max_bytes = std::move(max_bytes);
        a.step_factor = step_factor;
        a.sizes = std::move(sizes);
        a.channels = channels;
        a.chunk_bytes = std::move(chunk_bytes);
        a.root = root;
        a.step_latency = std::move(step_latency);
        a.hbm = std::move(hbm);
        return collective_json_text(s, a);
      },
      py::arg("scenario"), py::arg("op"), py::arg("algo"), py::arg("protocol"), py::arg("model"),
      py::arg("calibration"), py::arg("ranks"), py::arg("min_bytes"), py::arg("max_bytes"),
      py::arg("step_factor"), py::arg("sizes"), py::arg("channels"), py::arg("chunk_bytes"),
      py::arg("root"), py::arg("step_latency"), py::arg("hbm"));
  m.def("sweep", &sweep_json_text, py::arg("scenario"), py::arg("vary"), py::arg("jobs"),
        py::arg("columns"), py::arg("wall"), py::arg("force"), py::arg("progress"));
  m.def("validate", &validate_json_text, py::arg("cases"), py::arg("jobs"), py::arg("suite"));
  m.attr("default_hbm") = kDefaultCollectiveHbm;
  m.attr("default_validation_dir") = SYNCSIM_VALIDATION_DIR;
}

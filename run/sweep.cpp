// `syncsim sweep`: cartesian product of --vary lists, run on local threads or MPI ranks.
#include "run/sweep.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "run/result_schema.hpp"
#include "run/sweep_mpi.hpp"

namespace syncsim::app {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

const std::string& SweepAxis::shown(const std::string& value) const {
  for (std::size_t i = 0; i < labels.size() && i < values.size(); ++i) {
    if (values[i] == value) return labels[i];
  }
  return value;
}

namespace {

// A YAML scalar that is a plain decimal number becomes a JSON number; anything else stays a string.
nlohmann::ordered_json axis_value(const std::string& v) {
  if (v.empty()) return v;
  const char* first = v.data();
  const char* last = v.data() + v.size();
  int64_t i = 0;
  if (auto [p, ec] = std::from_chars(first, last, i); ec == std::errc() && p == last) return i;
  double d = 0;
  if (v.find_first_not_of("+-.0123456789eE") == std::string::npos) {
    if (auto [p, ec] = std::from_chars(first, last, d); ec == std::errc() && p == last) return d;
  }
  return v;
}

std::string csv_field(const nlohmann::ordered_json& v) {
  if (v.is_null()) return "";
  if (!v.is_string()) return v.dump();
  const auto& s = v.get_ref<const std::string&>();
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

std::string fmt_duration(double s) {
  char buf[32];
  const auto total = static_cast<long long>(s + 0.5);
  if (total >= 3600) {
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", total / 3600, (total / 60) % 60);
  } else if (total >= 60) {
    std::snprintf(buf, sizeof buf, "%lldm%02llds", total / 60, total % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%.1fs", s);
  }
  return buf;
}

}  // namespace

SweepAxis parse_vary(const std::string& arg) {
  const auto eq = arg.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw SweepUsageError("--vary: expected dotted.path=v1,v2,..., found \"" + arg + "\"");
  }
  SweepAxis axis;
  axis.path = arg.substr(0, eq);
  const std::string list = arg.substr(eq + 1);
  std::string cur;
  int depth = 0;
  char quote = 0;
  for (char c : list) {
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (c == ',' && depth == 0) {
      axis.values.push_back(cur);
      cur.clear();
      continue;
    }
    cur += c;
  }
  axis.values.push_back(cur);
  for (const auto& v : axis.values) {
    if (v.find_first_not_of(" \t") == std::string::npos) {
      throw SweepUsageError(
          "--vary " + axis.path +
          ": expected a comma-separated list of values, found an empty value in \"" + list + "\"");
    }
  }
  return axis;
}

std::vector<std::vector<std::string>> sweep_point_values(const std::vector<SweepAxis>& axes) {
  std::vector<std::vector<std::string>> points{{}};
  for (const auto& axis : axes) {
    std::vector<std::vector<std::string>> next;
    next.reserve(points.size() * axis.values.size());
    for (const auto& p : points) {
      for (const auto& v : axis.values) {
        next.push_back(p);
        next.back().push_back(v);
      }
    }
    points = std::move(next);
  }
  return points;
}

SweepPlan plan_sweep(SweepSpec spec) {
  SweepPlan plan;
  plan.values = sweep_point_values(spec.axes);
  plan.scenarios.reserve(plan.values.size());
  for (const auto& values : plan.values) {
    LoadOptions load;
    load.seed = spec.seed;
    load.overrides = spec.sets;
    for (std::size_t a = 0; a < spec.axes.size(); ++a)
      load.overrides.push_back({spec.axes[a].path, values[a]});
    plan.scenarios.push_back(spec.scenario_text
                                 ? load_scenario_text(*spec.scenario_text, spec.scenario_path, load)
                                 : load_scenario_file(spec.scenario_path, load));
  }
  plan.spec = std::move(spec);
  // A replayed Chakra trace fills the step keys too (run/chakra_run.hpp).
  plan.spec.step = !plan.scenarios.empty() && (plan.scenarios.front().workload.has_value() ||
                                               plan.scenarios.front().chakra.has_value());
  plan.spec.report = !plan.scenarios.empty() && plan.scenarios.front().report.has_value();
  return plan;
}

std::vector<std::string> default_sweep_columns(bool step, bool report) {
  // The columns scripts have read since sweeps began; their order is a contract.
  std::vector<std::string> cols = {"sim_time_s",    "messages",        "messages_completed",
                                   "fct_mean_s",    "fct_p99_s",       "fct_max_s",
                                   "bytes_dropped", "max_queue_bytes", "pause_frames",
                                   "ecn_marks",     "events"};
  if (step)
    cols.insert(cols.end(), {"step_time_s", "mfu", "exposed_comm_s", "tail_s", "tokens_per_s"});
  if (report) {
    cols.insert(cols.end(), {"allreduce_small_bytes", "allreduce_small_latency_s",
                             "allreduce_large_bytes", "allreduce_large_busbw_GBps"});
  }
  // Added later, so after every older column: the busiest switch queue and DCQCN's CNPs.
  cols.insert(cols.end(), {"cnps", "queue_mean_bytes", "queue_p99_bytes"});
  // ... and then whether a step's layout fits the GPU, and what bounds it.
  if (step) cols.insert(cols.end(), {"memory_per_gpu_bytes", "fits_memory", "bound_by"});
  return cols;
}

std::vector<std::string> parse_sweep_columns(const std::string& list) {
  std::vector<std::string> cols;
  std::size_t start = 0;
  while (start <= list.size()) {
    const auto end = std::min(list.find(',', start), list.size());
    std::string c = list.substr(start, end - start);
    const auto b = c.find_first_not_of(" \t");
    const auto e = c.find_last_not_of(" \t");
    c = b == std::string::npos ? std::string() : c.substr(b, e - b + 1);
    if (c.empty())
      throw SweepUsageError("--columns: expected a comma-separated list of columns, found \"" +
                            list + "\"");
    if (find_result_column(c) == nullptr) {
      std::string known;
      for (const auto& n : result_column_names()) known += (known.empty() ? "" : ", ") + n;
      throw SweepUsageError("--columns: no column \"" + c + "\"; the columns are: " + known);
    }
    if (std::find(cols.begin(), cols.end(), c) != cols.end()) {
      throw SweepUsageError("--columns: \"" + c + "\" is given twice");
    }
    cols.push_back(std::move(c));
    start = end + 1;
  }
  return cols;
}

std::vector<std::string> sweep_columns(const SweepSpec& spec) {
  std::vector<std::string> cols;
  for (const auto& a : spec.axes) cols.push_back(a.path);
  if (spec.columns.empty()) {
    const auto metrics = default_sweep_columns(spec.step, spec.report);
    cols.insert(cols.end(), metrics.begin(), metrics.end());
    if (spec.wall) cols.emplace_back("wall_s");
  } else {
    for (const auto& c : spec.columns) {
      if (c != "wall_s" || spec.wall) cols.push_back(c);
    }
  }
  return cols;
}

nlohmann::ordered_json sweep_row(const SweepSpec& spec, const std::vector<std::string>& values,
                                 const RunResult& r) {
  nlohmann::ordered_json row = nlohmann::ordered_json::object();
  for (std::size_t a = 0; a < spec.axes.size(); ++a)
    row[spec.axes[a].path] = axis_value(spec.axes[a].shown(values[a]));
  const auto cols = sweep_columns(spec);
  for (std::size_t c = spec.axes.size(); c < cols.size(); ++c) {
    const ResultKey* key = find_result_column(cols[c]);
    if (key != nullptr && result_key_present(*key, r))
      row[cols[c]] = nlohmann::ordered_json(key->read(r));
  }
  return row;
}

std::string run_sweep_point(const SweepPlan& plan, std::size_t i) {
  return sweep_row(plan.spec, plan.values.at(i),
                   run_scenario(plan.scenarios.at(i), RunOptions{.port_counters = true}))
      .dump();
}

std::vector<std::string> run_sweep_local(const SweepPlan& plan, unsigned jobs,
                                         const std::function<void(std::size_t)>& on_done) {
  const std::size_t n = plan.scenarios.size();
  std::vector<std::string> rows(n);
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  std::size_t done = 0;
  std::exception_ptr error;
  auto worker = [&] {
    for (;;) {
      if (failed.load()) return;
      const std::size_t i = next.fetch_add(1);
      if (i >= n) return;
      try {
        std::string row = run_sweep_point(plan, i);
        const std::lock_guard lock(mu);
        rows[i] = std::move(row);
        ++done;
        if (on_done) on_done(done);
      } catch (...) {
        const std::lock_guard lock(mu);
        if (!error) error = std::current_exception();
        failed.store(true);
        return;
      }
    }
  };
  const auto threads = static_cast<std::size_t>(std::max(1u, jobs));
  if (threads == 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    pool.reserve(std::min(threads, n));
    for (std::size_t t = 0; t < threads && t < n; ++t) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
  }
  if (error) std::rethrow_exception(error);
  return rows;
}

std::string sweep_csv(const std::vector<std::string>& columns,
                      const std::vector<std::string>& rows) {
  std::string out;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    if (c) out += ',';
    out += csv_field(columns[c]);
  }
  out += '\n';
  for (const auto& text : rows) {
    const auto row = nlohmann::ordered_json::parse(text);
    for (std::size_t c = 0; c < columns.size(); ++c) {
      if (c) out += ',';
      if (row.contains(columns[c])) out += csv_field(row.at(columns[c]));
    }
    out += '\n';
  }
  return out;
}

std::string sweep_json(const std::vector<std::string>& rows) {
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (const auto& text : rows) arr.push_back(nlohmann::ordered_json::parse(text));
  return arr.dump(2) + "\n";
}

SweepProgress::SweepProgress(std::size_t total, bool enabled, std::ostream& err)
    : total_(total), enabled_(enabled), err_(err), start_s_(now_s()) {}

void SweepProgress::set_estimates(std::vector<double> wall_s, unsigned concurrent) {
  estimated_wall_s_ = std::move(wall_s);
  concurrent_ = std::max(1u, concurrent);
}

std::string SweepProgress::text(std::size_t done, double elapsed) const {
  std::ostringstream line;
  line << "sweep: " << done << "/" << total_ << " points, " << fmt_duration(elapsed) << " elapsed";
  const bool weighted = estimated_wall_s_.size() == total_;
  double done_est = 0;
  double left_est = 0;
  if (weighted) {
    for (std::size_t i = 0; i < total_; ++i)
      (i < done ? done_est : left_est) += estimated_wall_s_[i];
  }
  if (done > 0 && done < total_) {
    const double eta = weighted && done_est > 0 ? elapsed * left_est / done_est
                                                : elapsed / static_cast<double>(done) *
                                                      static_cast<double>(total_ - done);
    line << ", ETA " << fmt_duration(eta);
  } else if (done == 0 && weighted && left_est > 0) {
    line << ", ETA ~" << fmt_duration(std::max(0.0, left_est / concurrent_ - elapsed))
         << " (estimated)";
  }
  return line.str();
}

void SweepProgress::update(std::size_t done) {
  if (!enabled_) return;
  err_ << "\r" << text(done, now_s() - start_s_) << "   " << std::flush;
  printed_ = true;
}

std::vector<std::string> sweep_memory_refusals(const SweepPlan& plan,
                                               const std::vector<Estimate>& estimates,
                                               unsigned concurrent,
                                               std::optional<double> available) {
  std::vector<std::string> out;
  if (!available) return out;
  concurrent = std::max(1u, concurrent);
  for (std::size_t i = 0; i < estimates.size() && i < plan.values.size(); ++i) {
    const double need = estimates[i].memory_bytes * concurrent;
    if (need <= *available) continue;
    std::ostringstream m;
    m.setf(std::ios::fixed);
    m.precision(2);
    m << "point " << i << " (";
    for (std::size_t a = 0; a < plan.spec.axes.size() && a < plan.values[i].size(); ++a) {
      m << (a ? ", " : "") << plan.spec.axes[a].path << "="
        << plan.spec.axes[a].shown(plan.values[i][a]);
    }
    m << "): estimated memory " << estimates[i].memory_bytes / kGiB << " GiB";
    if (concurrent > 1) {
      m << " x " << concurrent << " points at once = " << need / kGiB << " GiB";
    }
    m << " exceeds the " << *available / kGiB << " GiB available";
    out.push_back(m.str());
  }
  return out;
}

void SweepProgress::finish() {
  if (enabled_ && printed_) err_ << "\n" << std::flush;
  printed_ = false;
}

}  // namespace syncsim::app

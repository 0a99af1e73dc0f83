#include "calibration/profile.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>

namespace syncsim::calibration {

namespace {

constexpr int kFormatVersion = 1;
constexpr int kDoublePrecision = 12;

[[noreturn]] void fail(const std::string& file, const YAML::Node& node, const std::string& path,
                       const std::string& message) {
  const YAML::Mark mark = node.Mark();
  std::string where = file;
  if (!mark.is_null())
    where += ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
  throw ProfileError(where + ": " + path + ": " + message);
}

std::string found(const YAML::Node& n) {
  if (n.IsScalar()) {
    std::string q(1, '"');
    q.append(n.Scalar());
    q.push_back('"');
    return q;
  }
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a map";
  return "nothing";
}

// Typed access with file:line:col errors; rejects keys outside `allowed`.
struct Reader {
  const std::string& file;

  void check_keys(const YAML::Node& map, const std::string& path,
                  const std::set<std::string>& allowed) const {
    if (!map.IsMap()) fail(file, map, path, "expected a map, found " + found(map));
    for (const auto& kv : map) {
      const std::string key = kv.first.as<std::string>();
      if (allowed.count(key) == 0) {
        fail(file, kv.first, path.empty() ? key : path + "." + key, "unknown key");
      }
    }
  }
  template <class T>
  T get(const YAML::Node& node, const std::string& path, const char* expected) const {
    if (!node.IsScalar())
      fail(file, node, path, std::string("expected ") + expected + ", found " + found(node));
    try {
      return node.as<T>();
    } catch (const YAML::Exception&) {
      fail(file, node, path, std::string("expected ") + expected + ", found " + found(node));
    }
  }
  template <class T>
  void opt(const YAML::Node& map, const char* key, const std::string& path, const char* expected,
           T& out) const {
    const YAML::Node n = map[key];
    if (n) out = get<T>(n, path.empty() ? key : path + "." + key, expected);
  }
  YAML::Node list(const YAML::Node& map, const char* key, const std::string& path) const {
    const YAML::Node n = map[key];
    if (n && !n.IsSequence()) fail(file, n, path + key, "expected a list, found " + found(n));
    return n;
  }
};

}  // namespace

CollectiveProfile to_profile(const LineFit& fit) {
  CollectiveProfile c;
  c.op = fit.op;
  c.ranks = fit.ranks;
  c.max_rel_error = fit.max_rel_error;
  c.heldout_rel_error = fit.heldout_rel_error;
  c.regimes = fit.regimes;
  return c;
}

ProbeValue summarize(const std::string& name, const std::string& unit, std::vector<double> runs) {
  ProbeValue v;
  v.name = name;
  v.unit = unit;
  v.samples = static_cast<int>(runs.size());
  if (runs.empty()) return v;
  std::sort(runs.begin(), runs.end());
  const std::size_t n = runs.size();
  for (double x : runs) v.mean += x;
  v.mean /= static_cast<double>(n);
  for (double x : runs) v.stddev += (x - v.mean) * (x - v.mean);
  v.stddev = n > 1 ? std::sqrt(v.stddev / static_cast<double>(n - 1)) : 0.0;
  v.min = runs.front();
  v.max = runs.back();
  v.median = n % 2 == 1 ? runs[n / 2] : 0.5 * (runs[n / 2 - 1] + runs[n / 2]);
  return v;
}

std::string write_profile_yaml(const CalibrationProfile& p) {
  YAML::Emitter e;
  e.SetDoublePrecision(kDoublePrecision);
  e << YAML::BeginMap;
  e << YAML::Key << "syncsim_calibration_profile" << YAML::Value << kFormatVersion;
  if (!p.source.empty())
    e << YAML::Key << "source" << YAML::Value << YAML::DoubleQuoted << p.source;
  e << YAML::Key << "gpu" << YAML::Value << YAML::Flow << YAML::BeginMap;
  e << YAML::Key << "name" << YAML::Value << YAML::DoubleQuoted << p.gpu_name;
  e << YAML::Key << "count" << YAML::Value << p.gpu_count << YAML::EndMap;
  e << YAML::Key << "versions" << YAML::Value << YAML::Flow << YAML::BeginMap;
  e << YAML::Key << "driver" << YAML::Value << YAML::DoubleQuoted << p.driver_version;
  e << YAML::Key << "cuda" << YAML::Value << YAML::DoubleQuoted << p.cuda_version;
  e << YAML::Key << "nccl" << YAML::Value << YAML::DoubleQuoted << p.nccl_version << YAML::EndMap;
  e << YAML::Key << "spread" << YAML::Value << p.spread;
  e << YAML::Key << "probes" << YAML::Value << YAML::BeginSeq;
  for (const auto& v : p.probes) {
    e << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << v.name;
    e << YAML::Key << "unit" << YAML::Value << v.unit << YAML::Key << "mean" << YAML::Value
      << v.mean;
    e << YAML::Key << "stddev" << YAML::Value << v.stddev << YAML::Key << "samples" << YAML::Value
      << v.samples;
    if (v.min != 0 || v.median != 0 || v.max != 0) {
      e << YAML::Key << "min" << YAML::Value << v.min << YAML::Key << "median" << YAML::Value
        << v.median << YAML::Key << "max" << YAML::Value << v.max;
    }
    e << YAML::EndMap;
  }
  e << YAML::EndSeq;
  e << YAML::Key << "collectives" << YAML::Value << YAML::BeginSeq;
  for (const auto& c : p.collectives) {
    e << YAML::BeginMap << YAML::Key << "op" << YAML::Value << c.op;
    e << YAML::Key << "ranks" << YAML::Value << c.ranks;
    e << YAML::Key << "max_rel_error" << YAML::Value << c.max_rel_error;
    e << YAML::Key << "heldout_rel_error" << YAML::Value << c.heldout_rel_error;
    if (c.spread != 0 || c.samples != 0) {
      e << YAML::Key << "spread" << YAML::Value << c.spread;
      e << YAML::Key << "samples" << YAML::Value << c.samples;
    }
    e << YAML::Key << "regimes" << YAML::Value << YAML::BeginSeq;
    for (const auto& r : c.regimes) {
      e << YAML::Flow << YAML::BeginMap << YAML::Key << "min_bytes" << YAML::Value << r.min_bytes;
      e << YAML::Key << "max_bytes" << YAML::Value << r.max_bytes;
      e << YAML::Key << "latency_us" << YAML::Value << r.latency_us;
      e << YAML::Key << "algbw_GBps" << YAML::Value << r.algbw_GBps << YAML::EndMap;
    }
    e << YAML::EndSeq << YAML::EndMap;
  }
  e << YAML::EndSeq;
  e << YAML::Key << "gemm" << YAML::Value << YAML::BeginSeq;
  for (const auto& g : p.gemm) {
    e << YAML::Flow << YAML::BeginMap << YAML::Key << "dtype" << YAML::Value << g.dtype;
    e << YAML::Key << "peak_tflops" << YAML::Value << g.peak_tflops;
    e << YAML::Key << "e_max" << YAML::Value << g.e_max;
    e << YAML::Key << "intensity_half" << YAML::Value << g.intensity_half;
    e << YAML::Key << "max_rel_error" << YAML::Value << g.max_rel_error << YAML::EndMap;
  }
  e << YAML::EndSeq;
  if (p.physical) {
    const PhysicalFit& f = *p.physical;
    e << YAML::Key << "physical" << YAML::Value << YAML::BeginMap;
    e << YAML::Key << "scenario" << YAML::Value << YAML::DoubleQuoted << f.scenario;
    e << YAML::Key << "fidelity" << YAML::Value << f.fidelity;
    e << YAML::Key << "points" << YAML::Value << f.points;
    e << YAML::Key << "rms_rel_error" << YAML::Value << f.rms_rel_error;
    e << YAML::Key << "max_rel_error" << YAML::Value << f.max_rel_error;
    e << YAML::Key << "parameters" << YAML::Value << YAML::BeginSeq;
    for (const PhysicalParameter& q : f.parameters) {
      e << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << q.name;
      e << YAML::Key << "unit" << YAML::Value << YAML::DoubleQuoted << q.unit;
      e << YAML::Key << "value" << YAML::Value << q.value;
      e << YAML::Key << "stddev" << YAML::Value << q.stddev;
      e << YAML::Key << "nominal" << YAML::Value << q.nominal;
      e << YAML::Key << "identified" << YAML::Value << q.identified << YAML::EndMap;
    }
    e << YAML::EndSeq << YAML::EndMap;
  }
  if (p.kernel_launch_us > 0 || p.kernel_gaps > 0 || !p.attention.empty()) {
    e << YAML::Key << "compute" << YAML::Value << YAML::BeginMap;
    e << YAML::Key << "kernel_launch_us" << YAML::Value << p.kernel_launch_us;
    e << YAML::Key << "kernel_gaps" << YAML::Value << p.kernel_gaps;
    e << YAML::Key << "attention" << YAML::Value << YAML::BeginSeq;
    for (const auto& a : p.attention) {
      e << YAML::Flow << YAML::BeginMap << YAML::Key << "dtype" << YAML::Value << a.dtype;
      e << YAML::Key << "peak_tflops" << YAML::Value << a.peak_tflops;
      e << YAML::Key << "efficiency" << YAML::Value << a.efficiency;
      e << YAML::Key << "calls" << YAML::Value << a.calls << YAML::EndMap;
    }
    e << YAML::EndSeq << YAML::EndMap;
  }
  e << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

CalibrationProfile parse_profile_yaml(const std::string& text, const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& ex) {
    throw ProfileError(file + ":" + std::to_string(ex.mark.line + 1) + ":" +
                       std::to_string(ex.mark.column + 1) + ": " + ex.msg);
  }
  const Reader rd{file};
  CalibrationProfile p;
  if (!root.IsMap()) fail(file, root, "(top)", "expected a map, found " + found(root));
  rd.check_keys(root, "",
                {"syncsim_calibration_profile", "source", "gpu", "versions", "spread", "probes",
                 "collectives", "gemm", "physical", "compute"});
  const YAML::Node version = root["syncsim_calibration_profile"];
  if (!version)
    fail(file, root, "syncsim_calibration_profile", "expected the format version 1, found nothing");
  if (rd.get<int>(version, "syncsim_calibration_profile", "the format version 1") !=
      kFormatVersion) {
    fail(file, version, "syncsim_calibration_profile",
         "expected the format version 1, found " + found(version));
  }
  rd.opt(root, "source", "", "a string", p.source);
  rd.opt(root, "spread", "", "a number", p.spread);
  if (const YAML::Node gpu = root["gpu"]) {
    rd.check_keys(gpu, "gpu", {"name", "count"});
    rd.opt(gpu, "name", "gpu", "a string", p.gpu_name);
    rd.opt(gpu, "count", "gpu", "an integer", p.gpu_count);
  }
  if (const YAML::Node v = root["versions"]) {
    rd.check_keys(v, "versions", {"driver", "cuda", "nccl"});
    rd.opt(v, "driver", "versions", "a string", p.driver_version);
    rd.opt(v, "cuda", "versions", "a string", p.cuda_version);
    rd.opt(v, "nccl", "versions", "a string", p.nccl_version);
  }
  if (const YAML::Node probes = rd.list(root, "probes", "")) {
    for (std::size_t i = 0; i < probes.size(); ++i) {
      const std::string path = "probes." + std::to_string(i);
      const YAML::Node n = probes[i];
      rd.check_keys(n, path, {"name", "unit", "mean", "stddev", "samples", "min", "median", "max"});
      ProbeValue v;
      rd.opt(n, "name", path, "a string", v.name);
      rd.opt(n, "unit", path, "a string", v.unit);
      rd.opt(n, "mean", path, "a number", v.mean);
      rd.opt(n, "stddev", path, "a number", v.stddev);
      rd.opt(n, "samples", path, "an integer", v.samples);
      rd.opt(n, "min", path, "a number", v.min);
      rd.opt(n, "median", path, "a number", v.median);
      rd.opt(n, "max", path, "a number", v.max);
      if (v.stddev < 0 || v.samples < 0)
        fail(file, n, path, "expected stddev >= 0 and samples >= 0");
      if ((v.min != 0 || v.median != 0 || v.max != 0) &&
          !(v.min <= v.median && v.median <= v.max)) {
        fail(file, n, path, "expected min <= median <= max");
      }
      p.probes.push_back(v);
    }
  }
  if (const YAML::Node cs = rd.list(root, "collectives", "")) {
    for (std::size_t i = 0; i < cs.size(); ++i) {
      const std::string path = "collectives." + std::to_string(i);
      const YAML::Node n = cs[i];
      rd.check_keys(
          n, path,
          {"op", "ranks", "max_rel_error", "heldout_rel_error", "spread", "samples", "regimes"});
      CollectiveProfile c;
      rd.opt(n, "op", path, "an op name", c.op);
      rd.opt(n, "ranks", path, "an integer", c.ranks);
      rd.opt(n, "max_rel_error", path, "a number", c.max_rel_error);
      rd.opt(n, "heldout_rel_error", path, "a number", c.heldout_rel_error);
      rd.opt(n, "spread", path, "a number", c.spread);
      rd.opt(n, "samples", path, "an integer", c.samples);
      if (c.spread < 0 || c.samples < 0)
        fail(file, n, path, "expected spread >= 0 and samples >= 0");
      const YAML::Node regimes = rd.list(n, "regimes", path + ".");
      if (!regimes || regimes.size() == 0)
        fail(file, n, path + ".regimes", "expected at least one regime, found none");
      for (std::size_t j = 0; j < regimes.size(); ++j) {
        const std::string rpath = path + ".regimes." + std::to_string(j);
        const YAML::Node rn = regimes[j];
        rd.check_keys(rn, rpath, {"min_bytes", "max_bytes", "latency_us", "algbw_GBps"});
        Regime r;
        rd.opt(rn, "min_bytes", rpath, "an integer", r.min_bytes);
        rd.opt(rn, "max_bytes", rpath, "an integer", r.max_bytes);
        rd.opt(rn, "latency_us", rpath, "a number", r.latency_us);
        rd.opt(rn, "algbw_GBps", rpath, "a number", r.algbw_GBps);
        if (r.latency_us < 0 || r.algbw_GBps < 0 || r.max_bytes < r.min_bytes) {
          fail(file, rn, rpath,
               "expected latency_us >= 0, algbw_GBps >= 0 and min_bytes <= max_bytes");
        }
        c.regimes.push_back(r);
      }
      if (c.op.empty() || c.ranks <= 0) fail(file, n, path, "expected an op and ranks > 0");
      p.collectives.push_back(c);
    }
  }
  if (const YAML::Node gs = rd.list(root, "gemm", "")) {
    for (std::size_t i = 0; i < gs.size(); ++i) {
      const std::string path = "gemm." + std::to_string(i);
      const YAML::Node n = gs[i];
      rd.check_keys(n, path, {"dtype", "peak_tflops", "e_max", "intensity_half", "max_rel_error"});
      GemmFit g;
      rd.opt(n, "dtype", path, "a dtype", g.dtype);
      rd.opt(n, "peak_tflops", path, "a number", g.peak_tflops);
      rd.opt(n, "e_max", path, "a number", g.e_max);
      rd.opt(n, "intensity_half", path, "a number", g.intensity_half);
      rd.opt(n, "max_rel_error", path, "a number", g.max_rel_error);
      try {
        (void)dtype_bytes(g.dtype);
      } catch (const FitError& ex) {
        fail(file, n, path + ".dtype", ex.what());
      }
      p.gemm.push_back(g);
    }
  }
  if (const YAML::Node ph = root["physical"]) {
    if (!ph.IsMap()) fail(file, ph, "physical", "expected a map, found " + found(ph));
    rd.check_keys(
        ph, "physical",
        {"scenario", "fidelity", "points", "rms_rel_error", "max_rel_error", "parameters"});
    PhysicalFit f;
    rd.opt(ph, "scenario", "physical", "a string", f.scenario);
    rd.opt(ph, "fidelity", "physical", "a fidelity name", f.fidelity);
    rd.opt(ph, "points", "physical", "an integer", f.points);
    rd.opt(ph, "rms_rel_error", "physical", "a number", f.rms_rel_error);
    rd.opt(ph, "max_rel_error", "physical", "a number", f.max_rel_error);
    const YAML::Node ps = rd.list(ph, "parameters", "physical.");
    if (!ps || ps.size() == 0)
      fail(file, ph, "physical.parameters", "expected at least one parameter, found none");
    for (std::size_t i = 0; i < ps.size(); ++i) {
      const std::string path = "physical.parameters." + std::to_string(i);
      const YAML::Node n = ps[i];
      rd.check_keys(n, path, {"name", "unit", "value", "stddev", "nominal", "identified"});
      PhysicalParameter q;
      rd.opt(n, "name", path, "a parameter name", q.name);
      rd.opt(n, "unit", path, "a string", q.unit);
      rd.opt(n, "value", path, "a number", q.value);
      rd.opt(n, "stddev", path, "a number", q.stddev);
      rd.opt(n, "nominal", path, "a number", q.nominal);
      rd.opt(n, "identified", path, "true or false", q.identified);
      if (q.name.empty()) fail(file, n, path + ".name", "expected a parameter name, found none");
      if (!(q.value > 0) || q.stddev < 0) {
        fail(file, n, path,
             "expected value > 0 and stddev >= 0, found value " + std::to_string(q.value));
      }
      f.parameters.push_back(q);
    }
    p.physical = f;
  }
  if (const YAML::Node c = root["compute"]) {
    rd.check_keys(c, "compute", {"kernel_launch_us", "kernel_gaps", "attention"});
    rd.opt(c, "kernel_launch_us", "compute", "a number", p.kernel_launch_us);
    rd.opt(c, "kernel_gaps", "compute", "an integer", p.kernel_gaps);
    if (p.kernel_launch_us < 0 || p.kernel_gaps < 0) {
      fail(file, c, "compute", "expected kernel_launch_us >= 0 and kernel_gaps >= 0");
    }
    if (const YAML::Node as = rd.list(c, "attention", "compute.")) {
      for (std::size_t i = 0; i < as.size(); ++i) {
        const std::string path = "compute.attention." + std::to_string(i);
        const YAML::Node n = as[i];
        rd.check_keys(n, path, {"dtype", "peak_tflops", "efficiency", "calls"});
        AttentionProfile a;
        rd.opt(n, "dtype", path, "a dtype", a.dtype);
        rd.opt(n, "peak_tflops", path, "a number", a.peak_tflops);
        rd.opt(n, "efficiency", path, "a number", a.efficiency);
        rd.opt(n, "calls", path, "an integer", a.calls);
        try {
          (void)dtype_bytes(a.dtype);
        } catch (const FitError& ex) {
          fail(file, n, path + ".dtype", ex.what());
        }
        if (!(a.efficiency > 0 && a.efficiency <= 1) || a.peak_tflops < 0 || a.calls < 0) {
          fail(file, n, path,
               "expected 0 < efficiency <= 1, peak_tflops >= 0 and calls >= 0, found efficiency " +
                   found(n["efficiency"]));
        }
        p.attention.push_back(a);
      }
    }
  }
  return p;
}

CalibrationProfile read_profile_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ProfileError(path + ": expected a readable profile, found none");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_profile_yaml(ss.str(), path);
}

void write_profile_file(const CalibrationProfile& profile, const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  out << write_profile_yaml(profile);
  if (!out) throw ProfileError(path + ": cannot write the profile");
}

}  // namespace syncsim::calibration

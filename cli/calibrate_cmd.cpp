#include "cli/calibrate_cmd.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <ostream>
#include <sstream>
#include <utility>

#include "cli/calibrate_flow.hpp"
#include "cli/calibrate_report.hpp"
#include "calibration/profile.hpp"

namespace syncsim::app {

using calibration::LineFit;
using calibration::Measurement;
using calibration::ParseError;
using calibration::Placement;

namespace {

constexpr const char* kUsage =
    "usage: syncsim calibrate import LOG... [--json]\n"
    "       syncsim calibrate fit [LOG...] [--gemm CSV] [--peak DTYPE=TFLOPS]... [--json] [--residuals]\n"
    "                             [--out PROFILE.yaml]\n"
    "       syncsim calibrate report LOG... [--profile P] [--scenario S] [--set PATH=V]... [--plot FILE.svg]\n"
    "                                [--json]\n"
    "       syncsim calibrate flow [SCENARIO] [--set PATH=V]... [--size BYTES] [--json] [--out FILE]\n"
    "\n"
    "  import  parse nccl-tests logs (all_reduce_perf, all_gather_perf, reduce_scatter_perf,\n"
    "          alltoall_perf, sendrecv_perf, broadcast_perf, reduce_perf) into a table\n"
    "  fit     fit time_us = latency_us + bytes / (1000 * algbw_GBps) per op and rank count, with\n"
    "          size regimes where one line does not fit; LOG may also be an `import --json` table\n"
    "  report  measured vs predicted per size: the profile's calibrated line (default: the fit of the\n"
    "          logs) and, with --scenario, the uncalibrated simulator; `calibrate report --help`\n"
    "  flow    fit the flow backend's congestion-control correction against the packet model on\n"
    "          small contended cases with the scenario's PFC/ECN/DCQCN; `calibrate flow --help`\n"
    "\n"
    "  --json         print JSON instead of text\n"
    "  --residuals    (fit) print the relative error of every point\n"
    "  --out FILE     (fit) write the fitted calibration profile (YAML)\n"
    "  --gemm CSV     (fit) also fit GEMM efficiency from lines m,n,k,dtype,tflops\n"
    "  --peak D=T     (fit) peak TFLOPS of dtype D (default: its best measured throughput)\n";

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ParseError(path, 0, "expected a readable nccl-tests log, found none");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

std::vector<Measurement> import_measurements(const std::vector<std::string>& paths, std::string* gpu_name) {
  std::vector<Measurement> all;
  for (const auto& path : paths) {
    const std::string text = read_text(path);
    const auto first = text.find_first_not_of(" \t\r\n");
    std::vector<Measurement> ms;
    // A JSON table starts with '[' then '{' or ']'; a log line may start with a "[0]" prefix.
    const auto second = first == std::string::npos ? first : text.find_first_not_of(" \t\r\n", first + 1);
    if (second != std::string::npos && text[first] == '[' && (text[second] == '{' || text[second] == ']')) {
      nlohmann::json j;
      try {
        j = nlohmann::json::parse(text);
      } catch (const nlohmann::json::parse_error& e) {
        throw ParseError(path, 0, std::string("expected a JSON measurement table, found: ") + e.what());
      }
      ms = measurements_from_json(j, path);
    } else {
      auto log = calibration::parse_nccl_tests_log(text, path);
      if (gpu_name != nullptr && gpu_name->empty() && !log.devices.empty()) *gpu_name = log.devices.front().name;
      ms = std::move(log.measurements);
    }
    if (ms.empty()) throw ParseError(path, 0, "expected nccl-tests result rows, found none");
    all.insert(all.end(), ms.begin(), ms.end());
  }
  return all;
}

std::string measurements_text(const std::vector<Measurement>& ms) {
  std::ostringstream os;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-15s %5s %12s %12s %9s %6s %5s %5s %10s %8s %8s %8s\n", "op", "ranks",
                "bytes", "count", "type", "redop", "root", "place", "time_us", "algbw", "busbw", "wrong");
  os << buf;
  for (const auto& m : ms) {
    const std::string root = m.root ? std::to_string(*m.root) : "-";
    const std::string wrong = m.wrong ? fmt("%g", *m.wrong) : "N/A";
    std::snprintf(buf, sizeof buf, "%-15s %5d %12lld %12lld %9s %6s %5s %5s %10.2f %8.2f %8.2f %8s\n",
                  m.op.c_str(), m.ranks, static_cast<long long>(m.bytes), static_cast<long long>(m.count),
                  m.type.c_str(), m.redop.c_str(), root.c_str(), calibration::to_string(m.placement),
                  m.time_us, m.algbw_GBps, m.busbw_GBps, wrong.c_str());
    os << buf;
  }
  return os.str();
}

nlohmann::json measurements_json(const std::vector<Measurement>& ms) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& m : ms) {
    arr.push_back({{"op", m.op},
                   {"ranks", m.ranks},
                   {"bytes", m.bytes},
                   {"count", m.count},
                   {"type", m.type},
                   {"redop", m.redop},
                   {"root", m.root ? nlohmann::json(*m.root) : nlohmann::json()},
                   {"placement", calibration::to_string(m.placement)},
                   {"time_us", m.time_us},
                   {"algbw_GBps", m.algbw_GBps},
                   {"busbw_GBps", m.busbw_GBps},
                   {"wrong", m.wrong ? nlohmann::json(*m.wrong) : nlohmann::json()}});
  }
  return arr;
}

std::vector<Measurement> measurements_from_json(const nlohmann::json& j, const std::string& file) {
  if (!j.is_array()) throw ParseError(file, 0, "expected a JSON array of measurements, found " + std::string(j.type_name()));
  std::vector<Measurement> ms;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const auto& e = j[i];
    try {
      Measurement m;
      m.op = e.at("op").get<std::string>();
      m.ranks = e.at("ranks").get<int>();
      m.bytes = e.at("bytes").get<int64_t>();
      m.count = e.value("count", int64_t{0});
      m.type = e.value("type", std::string());
      m.redop = e.value("redop", std::string());
      if (e.contains("root") && !e["root"].is_null()) m.root = e["root"].get<int>();
      const std::string place = e.value("placement", std::string("out"));
      if (place != "out" && place != "in") throw std::invalid_argument("placement \"" + place + "\"");
      m.placement = place == "in" ? Placement::InPlace : Placement::OutOfPlace;
      m.time_us = e.at("time_us").get<double>();
      m.algbw_GBps = e.value("algbw_GBps", 0.0);
      m.busbw_GBps = e.value("busbw_GBps", 0.0);
      if (e.contains("wrong") && !e["wrong"].is_null()) m.wrong = e["wrong"].get<double>();
      m.line = static_cast<int>(i);
      ms.push_back(m);
    } catch (const std::exception& ex) {
      throw ParseError(file, 0, "entry " + std::to_string(i) +
                                    ": expected {op, ranks, bytes, time_us, ...}, found an error: " + ex.what());
    }
  }
  return ms;
}

std::vector<calibration::GemmSample> read_gemm_csv(const std::string& path) {
  std::istringstream in(read_text(path));
  std::vector<calibration::GemmSample> out;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#' || line[first] == 'm') continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) {
      const auto b = cell.find_first_not_of(" \t");
      const auto e = cell.find_last_not_of(" \t");
      f.push_back(b == std::string::npos ? std::string() : cell.substr(b, e - b + 1));
    }
    if (f.size() != 5) {
      throw ParseError(path, line_no, "expected 5 fields m,n,k,dtype,tflops, found " + std::to_string(f.size()));
    }
    calibration::GemmSample g;
    try {
      std::size_t used = 0;
      const char* names[] = {"m", "n", "k"};
      int64_t* dims[] = {&g.m, &g.n, &g.k};
      for (std::size_t i = 0; i < 3; ++i) {
        used = 0;
        try {
          *dims[i] = std::stoll(f[i], &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == 0 || used != f[i].size() || *dims[i] <= 0) {
          throw ParseError(path, line_no, std::string("field ") + names[i] + ": expected a positive integer, found \"" + f[i] + "\"");
        }
      }
      g.dtype = f[3];
      (void)calibration::dtype_bytes(g.dtype);
      g.tflops = std::stod(f[4], &used);
      if (used != f[4].size() || !(g.tflops > 0)) throw std::invalid_argument("tflops");
    } catch (const ParseError&) {
      throw;
    } catch (const calibration::FitError& e) {
      throw ParseError(path, line_no, std::string("field dtype: ") + e.what());
    } catch (const std::exception&) {
      throw ParseError(path, line_no, "expected positive numbers m,n,k,tflops, found \"" + line + "\"");
    }
    out.push_back(g);
  }
  return out;
}

std::string fits_text(const std::vector<LineFit>& fits, bool residuals) {
  std::ostringstream os;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-15s %5s %11s %11s %7s %13s %17s %8s\n", "op", "ranks", "latency_us",
                "algbw_GBps", "regimes", "max_rel_error", "heldout_rel_error", "outliers");
  os << buf;
  for (const auto& f : fits) {
    std::snprintf(buf, sizeof buf, "%-15s %5d %11.3f %11.3f %7zu %13.4f %17.4f %8d\n", f.op.c_str(), f.ranks,
                  f.latency_us(), f.algbw_GBps(), f.regimes.size(), f.max_rel_error, f.heldout_rel_error,
                  f.outliers);
    os << buf;
    if (f.regimes.size() > 1) {
      for (const auto& r : f.regimes) {
        std::snprintf(buf, sizeof buf, "    regime %12lld .. %-12lld B  latency_us %.3f  algbw_GBps %.3f\n",
                      static_cast<long long>(r.min_bytes), static_cast<long long>(r.max_bytes), r.latency_us,
                      r.algbw_GBps);
        os << buf;
      }
    }
    if (residuals) {
      for (const auto& p : f.points) {
        std::snprintf(buf, sizeof buf, "    %12lld %3s  measured %10.2f  predicted %10.2f  rel %+8.4f%s\n",
                      static_cast<long long>(p.bytes), calibration::to_string(p.placement), p.measured_us,
                      p.predicted_us, p.rel_error, p.outlier ? "  outlier" : "");
        os << buf;
      }
    }
  }
  return os.str();
}

nlohmann::json fits_json(const std::vector<LineFit>& fits) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& f : fits) {
    nlohmann::json regimes = nlohmann::json::array();
    for (const auto& r : f.regimes) {
      regimes.push_back({{"min_bytes", r.min_bytes}, {"max_bytes", r.max_bytes},
                         {"latency_us", r.latency_us}, {"algbw_GBps", r.algbw_GBps}});
    }
    nlohmann::json points = nlohmann::json::array();
    for (const auto& p : f.points) {
      points.push_back({{"bytes", p.bytes}, {"placement", calibration::to_string(p.placement)},
                        {"measured_us", p.measured_us}, {"predicted_us", p.predicted_us},
                        {"rel_error", p.rel_error}, {"outlier", p.outlier}, {"regime", p.regime}});
    }
    arr.push_back({{"op", f.op},
                   {"ranks", f.ranks},
                   {"latency_us", f.latency_us()},
                   {"algbw_GBps", f.algbw_GBps()},
                   {"regimes", regimes},
                   {"max_rel_error", f.max_rel_error},
                   {"heldout_rel_error", f.heldout_rel_error},
                   {"outliers", f.outliers},
                   {"points", points}});
  }
  return arr;
}

int calibrate_main(const std::vector<std::string>& args, std::ostream& out) {
  if (args.empty()) throw CalibrateUsageError(std::string("expected import, fit, report or flow\n") + kUsage);
  const std::string sub = args[0];
  if (sub == "--help" || sub == "-h" || sub == "help") {
    out << kUsage;
    return 0;
  }
  if (sub == "report") return calibrate_report_main({args.begin() + 1, args.end()}, out);
  if (sub == "flow") return calibrate_flow_main({args.begin() + 1, args.end()}, out);
  if (sub != "import" && sub != "fit") {
    throw CalibrateUsageError("expected import, fit, report or flow, found \"" + sub + "\"\n" + kUsage);
  }
  bool json = false;
  bool residuals = false;
  std::string out_path;
  std::string gemm_path;
  std::vector<std::pair<std::string, double>> peaks;
  std::vector<std::string> logs;
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      out << kUsage;
      return 0;
    } else if (a == "--json") {
      json = true;
    } else if (a == "--residuals" && sub == "fit") {
      residuals = true;
    } else if (a == "--out" && sub == "fit") {
      if (i + 1 >= args.size()) throw CalibrateUsageError("--out: expected a file name, found none");
      out_path = args[++i];
    } else if (a.starts_with("--out=") && sub == "fit") {
      out_path = a.substr(6);
    } else if (a == "--gemm" && sub == "fit") {
      if (i + 1 >= args.size()) throw CalibrateUsageError("--gemm: expected a CSV file, found none");
      gemm_path = args[++i];
    } else if (a == "--peak" && sub == "fit") {
      const std::string v = i + 1 < args.size() ? args[++i] : std::string();
      const auto eq = v.find('=');
      double tflops = 0;
      try {
        std::size_t used = 0;
        tflops = eq == std::string::npos ? 0.0 : std::stod(v.substr(eq + 1), &used);
        if (used != v.size() - eq - 1) tflops = 0;
      } catch (const std::exception&) {
        tflops = 0;
      }
      if (!(tflops > 0)) throw CalibrateUsageError("--peak: expected DTYPE=TFLOPS like bf16=989, found \"" + v + "\"");
      peaks.emplace_back(v.substr(0, eq), tflops);
    } else if (a.starts_with("-") && a != "-") {
      throw CalibrateUsageError("unknown option \"" + a + "\"\n" + kUsage);
    } else {
      logs.push_back(a);
    }
  }
  if (logs.empty() && gemm_path.empty()) {
    throw CalibrateUsageError("expected at least one LOG file, found none\n" + std::string(kUsage));
  }
  std::string gpu_name;
  const auto ms = import_measurements(logs, &gpu_name);
  if (sub == "import") {
    if (json) {
      out << measurements_json(ms).dump(2) << "\n";
    } else {
      out << measurements_text(ms);
    }
    return 0;
  }
  const auto fits = calibration::fit_collectives(ms);
  std::vector<calibration::GemmFit> gemm;
  if (!gemm_path.empty()) {
    const auto samples = read_gemm_csv(gemm_path);
    std::vector<std::string> dtypes;
    for (const auto& g : samples) {
      if (std::find(dtypes.begin(), dtypes.end(), g.dtype) == dtypes.end()) dtypes.push_back(g.dtype);
    }
    for (const auto& d : dtypes) {
      double peak = 0;
      for (const auto& [pd, pt] : peaks) {
        if (pd == d) peak = pt;
      }
      if (peak <= 0) {
        for (const auto& g : samples) {
          if (g.dtype == d) peak = std::max(peak, g.tflops);
        }
      }
      gemm.push_back(calibration::fit_gemm(samples, d, peak));
    }
  }
  if (!out_path.empty()) {
    calibration::CalibrationProfile profile;
    profile.gpu_name = gpu_name;
    profile.source = "syncsim calibrate fit";
    for (const auto& l : logs) profile.source += " " + l;
    for (const auto& f : fits) profile.collectives.push_back(calibration::to_profile(f));
    profile.gemm = gemm;
    calibration::write_profile_file(profile, out_path);
  }
  if (json) {
    if (gemm_path.empty()) {
      out << fits_json(fits).dump(2) << "\n";
    } else {
      nlohmann::json g = nlohmann::json::array();
      for (const auto& f : gemm) {
        g.push_back({{"dtype", f.dtype}, {"peak_tflops", f.peak_tflops}, {"e_max", f.e_max},
                     {"intensity_half", f.intensity_half}, {"max_rel_error", f.max_rel_error}});
      }
      out << nlohmann::json{{"collectives", fits_json(fits)}, {"gemm", g}}.dump(2) << "\n";
    }
  } else {
    if (!fits.empty()) out << fits_text(fits, residuals);
    for (const auto& f : gemm) {
      char buf[256];
      std::snprintf(buf, sizeof buf,
                    "gemm %-5s peak_tflops %.1f  efficiency = %.4f * I / (I + %.2f)  (I in FLOP/B)  max_rel_error %.4f\n",
                    f.dtype.c_str(), f.peak_tflops, f.e_max, f.intensity_half, f.max_rel_error);
      out << buf;
    }
  }
  return 0;
}

}  // namespace syncsim::app

#include "calibration/measurement_io.hpp"

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "calibration/profile.hpp"

namespace syncsim::calibration {

namespace {

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

ImportedLogs import_logs(const std::vector<std::string>& paths, const ImportOptions& options) {
  ImportedLogs all;
  for (const auto& path : paths) {
    const std::string text = read_text(path);
    const auto first = text.find_first_not_of(" \t\r\n");
    std::vector<Measurement> ms;
    // A JSON table starts with '[' then '{' or ']'; a log line may start with a "[0]" prefix.
    const auto second =
        first == std::string::npos ? first : text.find_first_not_of(" \t\r\n", first + 1);
    if (second != std::string::npos && text[first] == '[' &&
        (text[second] == '{' || text[second] == ']')) {
      nlohmann::json j;
      try {
        j = nlohmann::json::parse(text);
      } catch (const nlohmann::json::parse_error& e) {
        throw ParseError(path, 0,
                         std::string("expected a JSON measurement table, found: ") + e.what());
      }
      ms = measurements_from_json(j, path);
    } else {
      auto log = parse_nccl_tests_log(text, path, options.parse);
      if (all.gpu_name.empty() && !log.devices.empty()) all.gpu_name = log.devices.front().name;
      ms = std::move(log.measurements);
      all.warnings.insert(all.warnings.end(), log.warnings.begin(), log.warnings.end());
    }
    if (ms.empty()) throw ParseError(path, 0, "expected nccl-tests result rows, found none");
    for (auto& m : ms) {
      if (!options.placement || m.placement == *options.placement)
        all.measurements.push_back(std::move(m));
    }
  }
  return all;
}

std::optional<Placement> parse_placement_choice(const std::string& text) {
  if (text == "out") return Placement::OutOfPlace;
  if (text == "in") return Placement::InPlace;
  if (text == "both") return std::nullopt;
  throw std::invalid_argument("expected out, in or both, found \"" + text + "\"");
}

std::vector<Measurement> import_measurements(const std::vector<std::string>& paths,
                                             std::string* gpu_name) {
  ImportedLogs all = import_logs(paths);
  if (gpu_name != nullptr) *gpu_name = all.gpu_name;
  return std::move(all.measurements);
}

std::string measurements_text(const std::vector<Measurement>& ms) {
  std::ostringstream os;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-15s %5s %12s %12s %9s %6s %5s %5s %10s %8s %8s %8s\n", "op",
                "ranks", "bytes", "count", "type", "redop", "root", "place", "time_us", "algbw",
                "busbw", "wrong");
  os << buf;
  for (const auto& m : ms) {
    const std::string root = m.root ? std::to_string(*m.root) : "-";
    const std::string wrong = m.wrong ? fmt("%g", *m.wrong) : "N/A";
    std::snprintf(buf, sizeof buf,
                  "%-15s %5d %12lld %12lld %9s %6s %5s %5s %10.2f %8.2f %8.2f %8s\n", m.op.c_str(),
                  m.ranks, static_cast<long long>(m.bytes), static_cast<long long>(m.count),
                  m.type.c_str(), m.redop.c_str(), root.c_str(), to_string(m.placement), m.time_us,
                  m.algbw_GBps, m.busbw_GBps, wrong.c_str());
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
                   {"placement", to_string(m.placement)},
                   {"time_us", m.time_us},
                   {"algbw_GBps", m.algbw_GBps},
                   {"busbw_GBps", m.busbw_GBps},
                   {"wrong", m.wrong ? nlohmann::json(*m.wrong) : nlohmann::json()}});
  }
  return arr;
}

std::vector<Measurement> measurements_from_json(const nlohmann::json& j, const std::string& file) {
  if (!j.is_array())
    throw ParseError(file, 0,
                     "expected a JSON array of measurements, found " + std::string(j.type_name()));
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
      if (place != "out" && place != "in")
        throw std::invalid_argument("placement \"" + place + "\"");
      m.placement = place == "in" ? Placement::InPlace : Placement::OutOfPlace;
      m.time_us = e.at("time_us").get<double>();
      m.algbw_GBps = e.value("algbw_GBps", 0.0);
      m.busbw_GBps = e.value("busbw_GBps", 0.0);
      if (e.contains("wrong") && !e["wrong"].is_null()) m.wrong = e["wrong"].get<double>();
      m.line = static_cast<int>(i);
      ms.push_back(m);
    } catch (const std::exception& ex) {
      throw ParseError(
          file, 0,
          "entry " + std::to_string(i) +
              ": expected {op, ranks, bytes, time_us, ...}, found an error: " + ex.what());
    }
  }
  return ms;
}

std::vector<GemmSample> read_gemm_csv(const std::string& path) {
  std::istringstream in(read_text(path));
  std::vector<GemmSample> out;
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
      throw ParseError(path, line_no,
                       "expected 5 fields m,n,k,dtype,tflops, found " + std::to_string(f.size()));
    }
    GemmSample g;
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
          throw ParseError(path, line_no,
                           std::string("field ") + names[i] +
                               ": expected a positive integer, found \"" + f[i] + "\"");
        }
      }
      g.dtype = f[3];
      (void)dtype_bytes(g.dtype);
      g.tflops = std::stod(f[4], &used);
      if (used != f[4].size() || !(g.tflops > 0)) throw std::invalid_argument("tflops");
    } catch (const ParseError&) {
      throw;
    } catch (const FitError& e) {
      throw ParseError(path, line_no, std::string("field dtype: ") + e.what());
    } catch (const std::exception&) {
      throw ParseError(path, line_no,
                       "expected positive numbers m,n,k,tflops, found \"" + line + "\"");
    }
    out.push_back(g);
  }
  return out;
}

std::string fits_text(const std::vector<LineFit>& fits, bool residuals) {
  std::ostringstream os;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-15s %5s %11s %11s %7s %13s %17s %8s\n", "op", "ranks",
                "latency_us", "algbw_GBps", "regimes", "max_rel_error", "heldout_rel_error",
                "outliers");
  os << buf;
  for (const auto& f : fits) {
    std::snprintf(buf, sizeof buf, "%-15s %5d %11.3f %11.3f %7zu %13.4f %17.4f %8d\n", f.op.c_str(),
                  f.ranks, f.latency_us(), f.algbw_GBps(), f.regimes.size(), f.max_rel_error,
                  f.heldout_rel_error, f.outliers);
    os << buf;
    std::snprintf(buf, sizeof buf,
                  "    max_rel_error leaves out the %d outlier row(s) (with them %.4f); "
                  "heldout_rel_error: %d inner size(s) left out one at a time, their regime "
                  "refitted without them\n",
                  f.outliers, f.max_rel_error_all, f.heldout_sizes);
    os << buf;
    for (const auto& p : f.points) {
      if (!p.outlier) continue;
      std::snprintf(buf, sizeof buf, "    outlier %12lld %3s  measured %10.2f  rel %+8.4f\n",
                    static_cast<long long>(p.bytes), to_string(p.placement), p.measured_us,
                    p.rel_error);
      os << buf;
    }
    if (f.regimes.size() > 1) {
      for (const auto& r : f.regimes) {
        std::snprintf(buf, sizeof buf,
                      "    regime %12lld .. %-12lld B  latency_us %.3f  algbw_GBps %.3f\n",
                      static_cast<long long>(r.min_bytes), static_cast<long long>(r.max_bytes),
                      r.latency_us, r.algbw_GBps);
        os << buf;
      }
    }
    if (residuals) {
      for (const auto& p : f.points) {
        std::snprintf(buf, sizeof buf,
                      "    %12lld %3s  measured %10.2f  predicted %10.2f  rel %+8.4f%s\n",
                      static_cast<long long>(p.bytes), to_string(p.placement), p.measured_us,
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
      regimes.push_back({{"min_bytes", r.min_bytes},
                         {"max_bytes", r.max_bytes},
                         {"latency_us", r.latency_us},
                         {"algbw_GBps", r.algbw_GBps}});
    }
    nlohmann::json points = nlohmann::json::array();
    nlohmann::json outlier_rows = nlohmann::json::array();
    for (const auto& p : f.points) {
      if (p.outlier) {
        outlier_rows.push_back({{"bytes", p.bytes},
                                {"placement", to_string(p.placement)},
                                {"measured_us", p.measured_us},
                                {"rel_error", p.rel_error}});
      }
      points.push_back({{"bytes", p.bytes},
                        {"placement", to_string(p.placement)},
                        {"measured_us", p.measured_us},
                        {"predicted_us", p.predicted_us},
                        {"rel_error", p.rel_error},
                        {"outlier", p.outlier},
                        {"regime", p.regime}});
    }
    arr.push_back({{"op", f.op},
                   {"ranks", f.ranks},
                   {"latency_us", f.latency_us()},
                   {"algbw_GBps", f.algbw_GBps()},
                   {"regimes", regimes},
                   {"max_rel_error", f.max_rel_error},
                   {"max_rel_error_all", f.max_rel_error_all},
                   {"heldout_rel_error", f.heldout_rel_error},
                   {"heldout_sizes", f.heldout_sizes},
                   {"outliers", f.outliers},
                   {"outlier_rows", outlier_rows},
                   {"points", points}});
  }
  return arr;
}

}  // namespace syncsim::calibration

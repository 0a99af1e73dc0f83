// What an estimate looks like to the user (JSON, text, a refusal) and what the machine offers.
#include "run/estimate.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace syncsim::app {

namespace {

std::string gib(double bytes) {
  std::ostringstream out;
  out.precision(bytes >= 10.0 * (1 << 30) ? 0 : 2);
  out << std::fixed << bytes / static_cast<double>(1 << 30) << " GiB";
  return out.str();
}

}  // namespace

std::optional<double> positive_number_from_env(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(value > 0)) return std::nullopt;
  return value;
}

std::optional<double> available_memory_bytes() {
  // A stand-in machine size, so tests can exercise refusals and --force without a huge scenario.
  if (const auto bytes = positive_number_from_env("SYNCSIM_MEM_AVAILABLE")) return bytes;
  std::ifstream in("/proc/meminfo");
  std::string key;
  double value = 0;
  std::string unit;
  while (in >> key >> value >> unit) {
    if (key == "MemAvailable:") return value * 1024.0;
  }
  return std::nullopt;
}

double peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) * 1024.0;  // Linux reports KiB
}

nlohmann::json to_json(const Estimate& e) {
  nlohmann::json parts = nlohmann::json::object();
  for (const auto& [name, bytes] : e.memory_parts) parts[name] = bytes;
  return {{"memory_bytes", e.memory_bytes},
          {"wall_s", e.wall_s},
          {"transfers", e.transfers},
          {"packet_hops", e.packet_hops},
          {"extrapolated_buckets", e.extrapolated_buckets},
          {"machine_speed", e.machine_speed},
          {"sim_time_s", e.sim_time_s},
          {"memory_parts", parts},
          {"caveats", e.caveats}};
}

std::string to_text(const Estimate& e) {
  std::ostringstream out;
  out << "estimate: memory " << gib(e.memory_bytes) << " (";
  bool first = true;
  for (const auto& [name, bytes] : e.memory_parts) {
    if (bytes < 1e6) continue;
    out << (first ? "" : ", ") << name << " " << gib(bytes);
    first = false;
  }
  out.precision(3);
  out << "), wall " << e.wall_s << " s";
  if (e.machine_speed != 1) out << " (this machine " << e.machine_speed << "x the reference)";
  out << ", " << e.transfers << " transfers";
  if (e.packet_hops > 0) out << ", " << e.packet_hops << " packet hops";
  out << "\n";
  for (const std::string& caveat : e.caveats) out << "estimate: caveat: " << caveat << "\n";
  return out.str();
}

std::optional<std::string> refusal(const Estimate& e, std::optional<double> available) {
  if (!available || e.memory_bytes <= *available) return std::nullopt;
  std::string why = "estimated memory " + gib(e.memory_bytes) + " exceeds the " + gib(*available) +
                    " available (MemAvailable in /proc/meminfo, or SYNCSIM_MEM_AVAILABLE)";
  // Name the largest part, and what would shrink it.
  const auto largest =
      std::max_element(e.memory_parts.begin(), e.memory_parts.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  if (largest != e.memory_parts.end()) {
    why += "; the largest part is " + largest->first + " (" + gib(largest->second) + ")";
  }
  for (const std::string& c : e.cheaper) why += "; " + c;
  return why + "; refusing to start (--force runs it anyway, --verbose shows the estimate)";
}

}  // namespace syncsim::app

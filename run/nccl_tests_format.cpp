#include "run/nccl_tests_format.hpp"

#include <cstdarg>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace syncsim::app {

namespace {

// printf into a std::string (vsnprintf: the formats are checked by the attribute below).
__attribute__((format(printf, 1, 2))) std::string printf_string(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list again;
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, fmt, args);
  va_end(args);
  std::string out(static_cast<std::size_t>(n > 0 ? n : 0) + 1, '\0');
  std::vsnprintf(out.data(), out.size(), fmt, again);
  va_end(again);
  out.resize(out.size() - 1);
  return out;
}

std::string block(const NcclTestsResult& r) {
  return printf_string("  %7s  %6s  %6s  %6g", nccl_float(r.time_us, 7).c_str(),
                       nccl_float(r.algbw, 6).c_str(), nccl_float(r.busbw, 6).c_str(),
                       static_cast<double>(r.wrong));
}

bool is_reduction(models::CollectiveOp op) {
  return op == models::CollectiveOp::AllReduce || op == models::CollectiveOp::ReduceScatter ||
         op == models::CollectiveOp::Reduce;
}

bool per_rank_count(models::CollectiveOp op) {
  return op == models::CollectiveOp::ReduceScatter || op == models::CollectiveOp::AllGather ||
         op == models::CollectiveOp::AllToAll;
}

}  // namespace

std::string nccl_float(double value, int width) {
  int power = 0;
  for (uint64_t v = 1; value >= static_cast<double>(v) && power < 20; v *= 10) ++power;
  if (power < width - 2) return printf_string("%*.2f", width, value);
  if (power < width - 1) return printf_string("%*.1f", width, value);
  if (power < width + 1) return printf_string("%*.0f", width, value);
  if (width >= 7) return printf_string("%*.1e", width, value);
  return printf_string("%*.0e", width, value);
}

std::string device_line(int rank, const std::string& host, int device, const std::string& name) {
  return printf_string("#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s", rank,
                       0, 0, host.c_str(), device, 0u, 0u, 0u, name.c_str());
}

int64_t nccl_tests_size(models::CollectiveOp op, uint32_t ranks, int64_t requested) {
  const int64_t n = per_rank_count(op) ? static_cast<int64_t>(ranks) : 1;
  return requested / 4 / n * n * 4;
}

std::string nccl_tests_program(models::CollectiveOp op) {
  switch (op) {
    case models::CollectiveOp::AllReduce:
      return "all_reduce_perf";
    case models::CollectiveOp::ReduceScatter:
      return "reduce_scatter_perf";
    case models::CollectiveOp::AllGather:
      return "all_gather_perf";
    case models::CollectiveOp::Broadcast:
      return "broadcast_perf";
    case models::CollectiveOp::Reduce:
      return "reduce_perf";
    case models::CollectiveOp::AllToAll:
      return "alltoall_perf";
    case models::CollectiveOp::SendRecv:
      return "sendrecv_perf";
  }
  return "?";
}

NcclTestsRow make_row(models::CollectiveOp op, uint32_t ranks, int64_t size, double time_us,
                      int root, int64_t wrong) {
  NcclTestsRow row;
  row.size = size;
  row.count = size / 4 / (per_rank_count(op) ? static_cast<int64_t>(ranks) : 1);
  row.redop = is_reduction(op) ? "sum" : "none";
  const bool rooted = op == models::CollectiveOp::Broadcast || op == models::CollectiveOp::Reduce;
  row.root = rooted ? root : -1;
  NcclTestsResult r;
  r.time_us = time_us;
  r.algbw = time_us > 0 ? static_cast<double>(size) / 1.0e9 / (time_us * 1e-6) : 0.0;
  r.busbw = r.algbw * models::bus_bandwidth_factor(op, ranks);
  r.wrong = wrong;
  row.out_of_place = r;
  row.in_place = r;
  return row;
}

std::string format_row(const NcclTestsRow& row) {
  const std::string root = printf_string("%6i", row.root);
  return printf_string("%12li  %12li  %8s  %6s  %6s", static_cast<long>(row.size),
                       static_cast<long>(row.count), row.type.c_str(), row.redop.c_str(),
                       root.c_str()) +
         block(row.out_of_place) + block(row.in_place);
}

double average_bus_bandwidth(const std::vector<NcclTestsRow>& rows) {
  if (rows.empty()) return 0.0;
  double sum = 0;
  for (const auto& r : rows) sum += r.out_of_place.busbw + r.in_place.busbw;
  return sum / static_cast<double>(2 * rows.size());
}

std::string format_nccl_tests(const NcclTestsHeader& h, const std::vector<NcclTestsRow>& rows) {
  std::string out;
  out += "# nccl-tests version " + h.version + " nccl-headers=0 nccl-library=0\n";
  out += "# Collective test starting: " + h.program + "\n";
  out += printf_string(
      "# nThread %d nGpus %d minBytes %ld maxBytes %ld step: %ld(%s) warmup iters: %d iters: %d "
      "agg "
      "iters: %d validation: %d graph: %d unalign: %d\n",
      h.nthreads, h.ngpus, static_cast<long>(h.min_bytes), static_cast<long>(h.max_bytes),
      static_cast<long>(h.step_factor), "factor", h.warmup_iters, h.iters, h.agg_iters,
      h.validation, h.graph, h.unalign);
  out += "#\n# Using devices\n";
  for (const auto& d : h.devices) out += d + "\n";
  out += "#\n";
  out += printf_string(
      "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          "
      "\n",
      "", "", "", "", "");
  out += printf_string("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s \n",
                       "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong",
                       "time", "algbw", "busbw", "#wrong");
  out += printf_string("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s \n",
                       "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)",
                       "(GB/s)", "(GB/s)", "");
  for (const auto& r : rows) out += format_row(r) + "\n";
  out += printf_string("# %-20s : %d %s\n", "Out of bounds values", 0, "OK");
  out += printf_string("# %-20s : %g \n", "Avg bus bandwidth", average_bus_bandwidth(rows));
  out += "#\n";
  out += "# Collective test concluded: " + h.program + "\n";
  return out;
}

nlohmann::json nccl_tests_json(const NcclTestsHeader& h, const std::vector<NcclTestsRow>& rows) {
  nlohmann::json out;
  out["config"] = {{"program", h.program},
                   {"nthreads", h.nthreads},
                   {"ngpus", h.ngpus},
                   {"minimum_bytes", h.min_bytes},
                   {"maximum_bytes", h.max_bytes},
                   {"step_factor", h.step_factor},
                   {"warmup_iters", h.warmup_iters},
                   {"iterations", h.iters},
                   {"aggregated_iterations", h.agg_iters},
                   {"validation", h.validation},
                   {"graph", h.graph}};
  auto result = [](const NcclTestsResult& r) {
    return nlohmann::json{
        {"time", r.time_us}, {"alg_bw", r.algbw}, {"bus_bw", r.busbw}, {"nwrong", r.wrong}};
  };
  out["results"] = nlohmann::json::array();
  for (const auto& r : rows) {
    out["results"].push_back({{"size", r.size},
                              {"count", r.count},
                              {"type", r.type},
                              {"redop", r.redop},
                              {"root", r.root},
                              {"out_of_place", result(r.out_of_place)},
                              {"in_place", result(r.in_place)}});
    if (!r.algorithm.empty()) out["results"].back()["algorithm"] = r.algorithm;
    if (!r.protocol.empty()) out["results"].back()["protocol"] = r.protocol;
    if (r.sim_events > 0) {
      out["results"].back()["sim"] = {
          {"events", r.sim_events}, {"packet_hops", r.sim_packet_hops}, {"wall_s", r.sim_wall_s}};
    }
    if (r.link_load) {
      out["results"].back()["link_load"] = {{"tier", r.link_load->tier},
                                            {"ports", r.link_load->ports},
                                            {"max_bytes", r.link_load->max_bytes},
                                            {"mean_bytes", r.link_load->mean_bytes},
                                            {"max_over_mean", r.link_load->max_over_mean}};
    }
  }
  out["average_bus_bandwidth"] = average_bus_bandwidth(rows);
  return out;
}

}  // namespace syncsim::app

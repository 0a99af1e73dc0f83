#pragma once
// The result table of NVIDIA nccl-tests (all_reduce_perf and friends), byte for byte, so tools that
// parse nccl-tests logs parse ours (references §2: src/util.cu writeDeviceReport,
// writeResultHeader, writeBenchmarkLine*, writeResultFooter). Plus the same rows as JSON.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "models/collective_plan.hpp"
#include "sim/backends/link_load.hpp"

namespace syncsim::app {

struct NcclTestsResult {
  double time_us = 0;  // average time per iteration
  double algbw = 0;    // GB/s (1e9 B/s) = size / time
  double busbw = 0;    // algbw * bus factor of the op
  int64_t wrong = 0;   // #wrong elements
};

struct NcclTestsRow {
  int64_t size = 0;   // bytes, nccl-tests' S
  int64_t count = 0;  // elements, as nccl-tests prints them (per-rank count for RS/AG/A2A)
  std::string type = "float";
  std::string redop = "sum";
  int root = -1;
  NcclTestsResult out_of_place;
  NcclTestsResult in_place;
  std::string algorithm;  // not in nccl-tests' table; added to the JSON row when set
  std::string protocol;   // likewise
  // Simulation cost of the row (JSON "sim" object when events > 0): events executed, packet hops
  // (packet backend; the analytic backend counts the hops its packets would take) and wall time.
  uint64_t sim_events = 0;
  uint64_t sim_packet_hops = 0;
  double sim_wall_s = 0;
  // The busiest switch-to-switch tier's spread of bytes (sim/backends/link_load.hpp), when the
  // collective crossed one.
  std::optional<TierLoad> link_load{};
};

struct NcclTestsHeader {
  std::string program = "all_reduce_perf";  // "<op>_perf" as nccl-tests names its binaries
  std::string version = "syncsim";          // printed after "# nccl-tests version"
  int nthreads = 1;
  int ngpus = 1;
  int64_t min_bytes = 0;
  int64_t max_bytes = 0;
  int64_t step_factor = 2;
  int warmup_iters = 0;
  int iters = 1;
  int agg_iters = 1;
  int validation = 1;
  int graph = 0;
  int unalign = 0;
  // One "#  Rank ..." line per rank, without the newline (see device_line()).
  std::vector<std::string> devices;
};

// nccl-tests' number formatting for a field of `width` characters (getFloatStr): 2 decimals while
// they fit, then 1, then 0, then exponent notation.
std::string nccl_float(double value, int width);
// "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s".
std::string device_line(int rank, const std::string& host, int device, const std::string& name);

// A row from a measured time: fills size/count (float elements, 4 bytes), redop/root per op,
// algbw = size / time, busbw = algbw * bus_bandwidth_factor(op, ranks); in-place = out-of-place.
NcclTestsRow make_row(models::CollectiveOp op, uint32_t ranks, int64_t size, double time_us,
                      int root = 0, int64_t wrong = 0);
// nccl-tests' rounding of a requested size: whole floats, and for RS/AG/A2A a whole number per
// rank.
int64_t nccl_tests_size(models::CollectiveOp op, uint32_t ranks, int64_t requested);
// nccl-tests' program name for an op ("all_reduce_perf", "alltoall_perf", "sendrecv_perf", ...).
std::string nccl_tests_program(models::CollectiveOp op);

std::string format_row(const NcclTestsRow& row);
// Average of the out-of-place and in-place busbw of every row (nccl-tests' "Avg bus bandwidth").
double average_bus_bandwidth(const std::vector<NcclTestsRow>& rows);
// The whole log: report, header, rows, footer.
std::string format_nccl_tests(const NcclTestsHeader& header, const std::vector<NcclTestsRow>& rows);

// {"config": {...}, "results": [{size, count, type, redop, root, out_of_place: {time, alg_bw,
// bus_bw, nwrong}, in_place: {...}}], "average_bus_bandwidth": x} (nccl-tests' JSON key names).
nlohmann::json nccl_tests_json(const NcclTestsHeader& header,
                               const std::vector<NcclTestsRow>& rows);

}  // namespace syncsim::app

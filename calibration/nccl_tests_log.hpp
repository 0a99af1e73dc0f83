#pragma once
// Parser for NVIDIA nccl-tests logs (all_reduce_perf, all_gather_perf, reduce_scatter_perf,
// alltoall_perf, sendrecv_perf, broadcast_perf, reduce_perf, ...), references §2.
//
// Accepted: the current layout (size count type redop root | time algbw busbw #wrong | ...) and the
// old one (no root column, a float `error` column instead of `#wrong`); any number of per-block
// columns announced by the column header (e.g. `-I 1` timing columns, which are read and dropped);
// "[0] " or "[1,0]<stdout>:" prefixes of multi-process launches; times over 1e4 us printed without
// decimals; "N/A" where nccl-tests prints it (#wrong of some in-place blocks). Lines that are
// neither
// '#' header lines nor rows (NCCL INFO chatter, warnings) are skipped. Several tests concatenated
// in one file are fine: each "# Collective test starting" / "# nThread" / "# Using devices" starts
// over.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace syncsim::calibration {

// A malformed log. what() is "file:line: what was expected, what was found".
class ParseError : public std::runtime_error {
 public:
  ParseError(std::string file, int line, std::string message);
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  int line_;
  std::string message_;
};

enum class Placement { OutOfPlace, InPlace };
const char* to_string(Placement p);

// One timed block of one row: nccl-tests prints an out-of-place and an in-place block per size.
struct Measurement {
  std::string op;           // canonical: all_reduce, all_gather, reduce_scatter, all_to_all,
                            // send_recv, broadcast, reduce (else the binary name without "_perf")
  int ranks = 0;            // see "What a table does not say" above
  int64_t bytes = 0;        // the size column, nccl-tests' S
  int64_t count = 0;        // elements
  std::string type;         // "float", "half", "bfloat16", ...
  std::string redop;        // "sum", "none", ...
  std::optional<int> root;  // absent in the old layout; -1 for ops without a root
  Placement placement = Placement::OutOfPlace;
  double time_us = 0;           // average time per iteration
  double algbw_GBps = 0;        // bytes / time, GB/s = 1e9 B/s
  double busbw_GBps = 0;        // algbw x the op's bus factor
  std::optional<double> wrong;  // #wrong elements (new layout) or max error (old); nullopt for N/A
  int line = 0;                 // 1-based line of the row in its file
};

struct DeviceInfo {
  int rank = 0;
  std::string host;
  int device = 0;
  std::string name;  // e.g. "NVIDIA H100 80GB HBM3"
};

// Something the parser inferred or noticed that the reader should know. text() is
// "file:line: message".
struct LogWarning {
  std::string file;
  int line = 0;
  std::string op;  // of the test it is about
  int ranks = 0;
  std::string message;
  std::string text() const;
};

// What the caller knows that a table may not say (a bare pasted table has no header).
struct ParseOptions {
  std::string op;  // canonical op name; empty: the log's own, or what the columns fix
  int ranks = 0;   // 0: the log's own, or what busbw/algbw fixes
};

struct NcclTestsLog {
  std::string file;
  std::string op;       // op of the last test in the file
  std::string version;  // "# nccl-tests version ..." remainder, if printed
  int nthreads = 0;
  int ngpus = 0;
  int ranks = 0;
  std::vector<DeviceInfo> devices;
  std::vector<Measurement> measurements;
  std::vector<LogWarning> warnings;
};

// "all_reduce_perf" / "alltoall" / "AllReduce" -> canonical op name ("" when not a collective
// name).
std::string canonical_op(std::string_view name);

// `file` is only used in error messages.
NcclTestsLog parse_nccl_tests_log(std::string_view text, const std::string& file,
                                  const ParseOptions& options = {});
// Reads and parses a file; an unreadable file is a ParseError at line 0 ("file: cannot read ...").
NcclTestsLog read_nccl_tests_log(const std::string& path, const ParseOptions& options = {});

}  // namespace syncsim::calibration

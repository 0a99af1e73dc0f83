#pragma once
// The rank count an nccl-tests table implies through its busbw / algbw ratio.
//
// nccl-tests prints busbw = algbw x a factor of the op and the rank count n (nccl-tests
// doc/PERFORMANCE.md): all_reduce 2(n-1)/n; all_gather, reduce_scatter, alltoall, gather, scatter
// (n-1)/n; broadcast, reduce, sendrecv 1. Where the factor grows with n, the printed ratio fixes n:
// each row bounds the ratio by its two-decimal rounding, the bounds of all rows are intersected,
// and n is inferred when exactly one whole number fits. Broadcast, reduce and sendrecv say nothing
// about n (their factor is 1 whatever n is).
#include <optional>
#include <string>
#include <vector>

#include "calibration/nccl_tests_log.hpp"

namespace syncsim::calibration {

// busbw / algbw of `op` (canonical name) at `ranks`; nullopt for an op nccl-tests does not define.
std::optional<double> nccl_tests_bus_factor(const std::string& op, int ranks);

struct RanksFromBusBandwidth {
  std::optional<int> ranks;  // the one rank count every row agrees with
  std::string why_not;       // when ranks is empty: why the rows cannot tell
};

// The rank count the rows' busbw / algbw imply for `op`. Rows with algbw 0.00 say nothing.
RanksFromBusBandwidth ranks_from_bus_bandwidth(const std::string& op,
                                               const std::vector<Measurement>& rows);

}  // namespace syncsim::calibration

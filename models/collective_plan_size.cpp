// plan_size_estimate: the all-reduce plan's transfer count from its parameters, following the
// per-algorithm builders (collective_plan_<algorithm>.cpp) step for step.
#include <algorithm>
#include <cmath>

#include "models/collective_plan.hpp"

namespace syncsim::models {

namespace {

double ceil_div(double a, double b) { return b <= 0 ? a : std::ceil(a / b); }

double allreduce_transfers(CollectiveAlgo algo, double n, double bytes, double chunk,
                           double channels, double gpus_per_host, RingSlicing slicing) {
  if (n <= 1) return 0;
  switch (algo) {
    case CollectiveAlgo::Tree:
      // Per channel a tree over all ranks (node chains and the node tree): reduce then broadcast
      // along its n-1 edges, chunked.
      return channels * 2.0 * (n - 1) * ceil_div(bytes / channels, chunk);
    case CollectiveAlgo::HalvingDoubling: {
      // p = 2^floor(log2 n) ranks halve and double (p log2 p transfers each way); the n - p extra
      // ranks fold in and out (one transfer each way).
      const double stages = std::floor(std::log2(n));
      const double p = std::exp2(stages);
      return 2.0 * stages * p + 2.0 * (n - p);
    }
    case CollectiveAlgo::Hierarchical: {
      // Intra-host ring reduce-scatter and all-gather (2 (g-1) transfers per rank), and per local
      // index and channel an inter-host ring all-reduce of one part per host (not pipelined).
      const double g = std::max(1.0, gpus_per_host);
      const double nodes = std::max(1.0, n / g);
      const double intra = 2.0 * (g - 1) * n;
      return intra + channels * g * 2.0 * (nodes - 1) * nodes;
    }
    case CollectiveAlgo::Nvls:
    case CollectiveAlgo::NvlsTree: {
      // collective_plan_nvls.cpp: rounds of heads x chunk (NCCL's chunk when none is given), at
      // most 64 per channel; per channel and round every host's 2 g + 2 heads transfers, and the
      // tree's 2 (nodes - 1) per head.
      // NVLS across hosts (with SHARP) has the tree's shape: per head and round a slice up and
      // down its SHARP tree instead of the node tree (about as many transfers).
      const bool tree =
          algo == CollectiveAlgo::NvlsTree || (gpus_per_host > 0 && gpus_per_host < n);
      const double g = tree ? std::max(1.0, gpus_per_host) : n;
      const double nodes = n / g;
      const double heads = std::min(g, 32.0);
      if (chunk <= 0) chunk = tree && nodes >= 4 ? 65536.0 : 131072.0;
      const double rounds = std::min(64.0, ceil_div(bytes / channels, heads * chunk));
      return channels * std::max(1.0, rounds) *
             (nodes * (2.0 * g + 2.0 * heads) + 2.0 * (nodes - 1.0) * heads);
    }
    case CollectiveAlgo::Pat:  // all-gather / reduce-scatter only: no all-reduce plan
      return 0;
    case CollectiveAlgo::CollnetDirect:
    case CollectiveAlgo::CollnetChain: {
      // collective_plan_collnet.cpp: rounds of heads x chunk (at most 64 per channel, fewer past
      // about 300,000 transfers, never under 8); per channel
      // and round the hosts' scatter and broadcast (Direct: 2 heads (g - 1) per host; Chain:
      // 2 (g - 1)) and per head its tree: up and down once per host and, counted as a
      // spine-leaf's two levels, once per leaf engine (at most one per host).
      const bool direct = algo == CollectiveAlgo::CollnetDirect;
      const double g = std::max(1.0, gpus_per_host);
      const double nodes = n / g;
      const double heads = direct ? std::min(g, 8.0) : 1.0;
      const double per_round = heads * (2.0 * nodes * g + 4.0 * nodes);
      const double most = std::min(64.0, std::max(8.0, std::floor(3.0e5 / (per_round * channels))));
      const double rounds =
          chunk <= 0 ? 1.0 : std::min(most, ceil_div(bytes / channels, heads * chunk));
      return channels * std::max(1.0, rounds) * heads * (2.0 * nodes * (g - 1) + 4.0 * nodes);
    }
    case CollectiveAlgo::Ring:
    case CollectiveAlgo::Pairwise:
      break;
  }
  // channels rings of n positions, 2 (n-1) steps each, one transfer per segment piece; a segment
  // of one piece is cut into NCCL's slices when each keeps min_piece_bytes (the ring builder's
  // rule, on channel 0's first segment, which holds the remainder bytes).
  const double per_step = bytes / (channels * n);
  double pieces = ceil_div(per_step, chunk);
  const double first_segment = std::ceil(per_step);
  if (pieces == 1 && slicing.min_pieces > 1 &&
      first_segment >= static_cast<double>(slicing.min_pieces) *
                           static_cast<double>(std::max<int64_t>(1, slicing.min_piece_bytes))) {
    pieces = slicing.min_pieces;
  }
  return channels * 2.0 * (n - 1) * n * pieces;
}

}  // namespace

PlanSizeEstimate plan_size_estimate(CollectiveAlgo algo, double ranks, double bytes,
                                    double chunk_bytes, double channels, double gpus_per_host,
                                    RingSlicing slicing) {
  PlanSizeEstimate e;
  e.transfers =
      allreduce_transfers(algo, ranks, bytes, chunk_bytes, channels, gpus_per_host, slicing);
  // Every algorithm's all-reduce reduces in one of its two halves (reduce-scatter, tree up, fold
  // in and halving), and every reducing transfer is followed by its Reduce step.
  e.steps = 1.5 * e.transfers;
  return e;
}

}  // namespace syncsim::models

// Recursive halving-doubling plans: all_reduce, reduce_scatter, all_gather.
#include "models/collective_plan_builder.hpp"

#include <algorithm>
#include <span>
#include <vector>

namespace syncsim::models::plan_detail {

// Recursive halving-doubling (Rabenseifner) with the standard fold for non-powers of two: ranks
// 0..2e-1 pair up (even sends everything to odd, which reduces), leaving p = 2^floor(log2 n) ranks.
void build_halving_doubling(CollectivePlan& plan, const PlanOptions& o) {
  const uint32_t n = o.ranks;
  uint32_t p = 1;
  while (p * 2 <= n) p *= 2;
  const uint32_t extra = n - p;
  auto rank_of = [&](uint32_t v) { return v < extra ? 2 * v + 1 : v + extra; };
  const bool shards = o.op != CollectiveOp::AllReduce;
  // AllReduce: p equal blocks (the halving splits them evenly). RS/AG: n shards, shard r owned by
  // r.
  const uint32_t nchunks = shards ? n : p;
  for (int64_t bytes : split_bytes(o.bytes, nchunks)) {
    Builder::add_chunk(plan, bytes, static_cast<uint32_t>(plan.chunk_bytes.size()));
  }
  Builder b(plan, o.connection_depth);
  const ChunkRange all{0, nchunks};
  if (o.op == CollectiveOp::AllGather) {
    std::vector<ChunkRange> held(p);
    for (uint32_t v = 0; v < p; ++v)
      held[v] = v < extra ? ChunkRange{2 * v, 2} : ChunkRange{v + extra, 1};
    for (uint32_t v = 0; v < extra; ++v)
      b.transfer(2 * v, 2 * v + 1, ChunkRange{2 * v, 1}, 0, false);
    for (uint32_t mask = 1; mask < p; mask *= 2) {
      std::vector<ChunkRange> next(p);
      for (uint32_t v = 0; v < p; ++v) {
        const uint32_t w = v ^ mask;
        b.transfer(rank_of(v), rank_of(w), held[v], 0, false);
        const ChunkRange& x = held[v];
        const ChunkRange& y = held[w];
        next[v] = ChunkRange{std::min(x.first, y.first), x.count + y.count};
      }
      held = next;
    }
    for (uint32_t v = 0; v < extra; ++v) {
      if (v > 0) b.transfer(2 * v + 1, 2 * v, ChunkRange{0, 2 * v}, 0, false);
      b.transfer(2 * v + 1, 2 * v, ChunkRange{2 * v + 1, n - 2 * v - 1}, 0, false);
    }
    return;
  }
  // Fold in. done[v]: the reduction that ended v's previous stage (kNone: none yet).
  std::vector<uint32_t> done(p, kNone);
  for (uint32_t v = 0; v < extra; ++v) done[v] = b.transfer(2 * v, 2 * v + 1, all, 0, true) + 1;
  // Halving: v keeps the half of its range that matches its bit, sends the other half. Each
  // exchange is a rendezvous (MPI sendrecv of large messages): it starts once the receiver has
  // finished its previous stage too, so a rank still receiving its fold-in is not sent to early.
  std::vector<ChunkRange> range(p, all);
  std::vector<uint32_t> next_done(p, kNone);
  for (uint32_t mask = p / 2; mask >= 1; mask /= 2) {
    for (uint32_t v = 0; v < p; ++v) {
      const ChunkRange r = range[v];
      const uint32_t lo_count = r.count / 2;
      const ChunkRange lower{r.first, lo_count}, upper{r.first + lo_count, r.count - lo_count};
      const bool keep_lower = (v & mask) == 0;
      const ChunkRange send = keep_lower ? upper : lower;
      const uint32_t w = v ^ mask;
      next_done[w] = done[w];
      if (send.count > 0) {
        const std::span<const uint32_t> after =
            done[w] != kNone ? std::span<const uint32_t>(&done[w], 1) : std::span<const uint32_t>();
        next_done[w] = b.transfer(rank_of(v), rank_of(w), send, 0, true, after) + 1;
      }
      range[v] = keep_lower ? lower : upper;
    }
    done = next_done;
  }
  if (o.op == CollectiveOp::ReduceScatter) {
    for (uint32_t v = 0; v < p; ++v) {
      for (uint32_t c = range[v].first; c < range[v].first + range[v].count; ++c) {
        if (c != rank_of(v)) b.transfer(rank_of(v), c, ChunkRange{c, 1}, 0, false);
      }
    }
    return;
  }
  // Doubling: exchange held ranges in reverse order of the halving.
  for (uint32_t mask = 1; mask < p; mask *= 2) {
    std::vector<ChunkRange> next(p);
    for (uint32_t v = 0; v < p; ++v) {
      const uint32_t w = v ^ mask;
      if (range[v].count > 0) b.transfer(rank_of(v), rank_of(w), range[v], 0, false);
      next[v] =
          ChunkRange{std::min(range[v].first, range[w].first), range[v].count + range[w].count};
    }
    range = next;
  }
  for (uint32_t v = 0; v < extra; ++v) b.transfer(2 * v + 1, 2 * v, all, 0, false);
}

}  // namespace syncsim::models::plan_detail

// PAT plans (Parallel Aggregated Trees, NCCL 2.23+, src/include/collectives.h PatAGAlgorithm /
// PatRSAlgorithm): all_gather and reduce_scatter in log2(n) steps, for one GPU per node.
//
// All n binomial broadcast trees (one per rank's shard) run at once and their messages between the
// same two ranks are aggregated, which is Bruck's all-gather: at step k (distance d = 2^k) rank r
// sends rank r - d the shards r .. r + c - 1 it holds (c = min(d, n - d)), so after step k it holds
// r .. r + 2d - 1 (mod n). Every rank sends and receives (n - 1) / n S in all, as on a ring, in
// ceil(log2 n) dependent steps instead of n - 1. reduce_scatter is the same plan reversed in time:
// the broadcast trees become reduction trees, the steps run from the longest distance down, and
// each message carries partial sums the receiver adds.
//
// Simplified: NCCL bounds how many trees it aggregates by its buffer (a step's message is then
// sent in parts); here a step moves all of it, cut into the chunk's pieces, which pipeline
// across steps per piece.
#include <algorithm>
#include <utility>
#include <vector>

#include "models/collective_plan_builder.hpp"

namespace syncsim::models::plan_detail {

void build_pat(CollectivePlan& plan, const PlanOptions& o) {
  const uint32_t n = o.ranks;
  // Chunk ids: channel-major, then piece, then shard (so a run of shards is one range).
  const auto channel_bytes = split_bytes(o.bytes, o.channels);
  std::vector<uint32_t> first(o.channels);  // chunk id of (channel, piece 0, shard 0)
  std::vector<uint32_t> pieces(o.channels);
  for (uint32_t ch = 0; ch < o.channels; ++ch) {
    const auto shard_bytes = split_bytes(channel_bytes[ch], n);
    pieces[ch] = static_cast<uint32_t>(pieces_for(shard_bytes[0], o.chunk_bytes));
    first[ch] = static_cast<uint32_t>(plan.chunk_bytes.size());
    std::vector<std::vector<int64_t>> per_shard(n);
    for (uint32_t s = 0; s < n; ++s) per_shard[s] = split_bytes(shard_bytes[s], pieces[ch]);
    for (uint32_t p = 0; p < pieces[ch]; ++p) {
      for (uint32_t s = 0; s < n; ++s) Builder::add_chunk(plan, per_shard[s][p], s);
    }
  }
  std::vector<uint32_t> distances;
  for (uint32_t d = 1; d < n; d *= 2) distances.push_back(d);
  const bool gather = o.op == CollectiveOp::AllGather;
  if (!gather) std::reverse(distances.begin(), distances.end());
  Builder b(plan, o.connection_depth);
  // A rank sends a step's message once it has received the previous step's (NCCL's steps run in
  // order), even the part it held from the start: its own shard is not sent early.
  std::vector<std::vector<uint32_t>> received(n), arriving(n);
  // Shards [lo, lo + count) mod n of (channel, piece) from `src` to `dst`: one transfer per
  // contiguous run (two where the range wraps).
  auto send = [&](uint32_t src, uint32_t dst, uint32_t lo, uint32_t count, uint32_t base,
                  uint32_t ch) {
    const uint32_t head = std::min(count, n - lo);
    arriving[dst].push_back(
        b.transfer(src, dst, ChunkRange{base + lo, head}, ch, !gather, received[src]));
    if (head < count) {
      arriving[dst].push_back(
          b.transfer(src, dst, ChunkRange{base, count - head}, ch, !gather, received[src]));
    }
  };
  for (uint32_t ch = 0; ch < o.channels; ++ch) {
    for (uint32_t p = 0; p < pieces[ch]; ++p) {
      const uint32_t base = first[ch] + p * n;
      for (auto& v : received) v.clear();
      for (uint32_t d : distances) {
        const uint32_t count = std::min(d, n - d);
        for (uint32_t r = 0; r < n; ++r) {
          const uint32_t peer = mod(static_cast<int64_t>(r) - d, n);
          // all_gather: r sends what it holds to r - d; reduce_scatter: r - d sends r its partial
          // sums of the same shards, for r to add.
          if (gather) {
            send(r, peer, r, count, base, ch);
          } else {
            send(peer, r, r, count, base, ch);
          }
        }
        std::swap(received, arriving);
        for (auto& v : arriving) v.clear();
      }
    }
  }
}

}  // namespace syncsim::models::plan_detail

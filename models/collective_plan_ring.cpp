// Ring plans: all_reduce (reduce-scatter then all-gather), reduce_scatter, all_gather, and
// broadcast/reduce as chains along the ring; one ring per channel, rail-aligned across hosts.
#include "models/collective_plan_builder.hpp"

#include <stdexcept>
#include <string>
#include <vector>

#include "sim/core/huge_pages.hpp"

namespace syncsim::models::plan_detail {

namespace {

// Chunks for `parts` segments of `bytes`, each cut into pipelining pieces; owner of segment j = j.
std::vector<std::vector<ChunkRange>> make_segments(CollectivePlan& plan, int64_t bytes,
                                                   uint32_t parts, const PlanOptions& o) {
  std::vector<std::vector<ChunkRange>> segs(parts);
  const auto seg_bytes = split_bytes(bytes, parts);
  // Every segment gets the same number of pieces, so ring steps line up.
  int64_t pieces = pieces_for(seg_bytes[0], o.chunk_bytes);
  if (pieces == 1 && o.min_pieces > 1 &&
      seg_bytes[0] >= int64_t{o.min_pieces} * std::max<int64_t>(1, o.min_piece_bytes)) {
    pieces = o.min_pieces;
  }
  for (uint32_t j = 0; j < parts; ++j) {
    for (int64_t piece : split_bytes(seg_bytes[j], pieces)) {
      segs[j].push_back(ChunkRange{Builder::add_chunk(plan, piece, j), 1});
    }
  }
  return segs;
}

std::vector<uint32_t> iota_ranks(uint32_t n, uint32_t start = 0) {
  std::vector<uint32_t> r(n);
  for (uint32_t i = 0; i < n; ++i) r[i] = (start + i) % n;
  return r;
}

// Ring order of channel `ch`. With hosts of g GPUs (ranks node-major) and more than one host, every
// host is visited in one block that starts at the first GPU on rail (ch mod rails) and goes round
// its GPUs in local order: the ring enters host i+1 at that GPU, and the edge into it leaves host i
// from the GPU just before in local order. Sent through the host's NIC on the destination GPU's
// rail (NCCL's PXN, CollectiveRunOptions::pxn), every inter-host hop of channel ch then stays on
// rail ch mod rails, as NCCL's rings on rail-optimized fabrics do (NET/c GPU/c ... NET/c). Other
// shapes (one host, ranks not a multiple of g) keep the plain order 0..n-1.
std::vector<uint32_t> channel_ring(const PlanOptions& o, uint32_t ch) {
  const uint32_t n = o.ranks;
  const uint32_t g = o.gpus_per_host;
  if (g < 2 || n % g != 0 || n / g < 2) return iota_ranks(n);
  // The fabric builder gives GPU l NIC floor(l * nics / g); with nics >= g every GPU has its own.
  const uint32_t nics = o.nics_per_host == 0 ? g : o.nics_per_host;
  uint32_t entry = ch % g;
  if (nics < g) {
    const uint64_t rail = ch % nics;
    entry = static_cast<uint32_t>((rail * g + nics - 1) /
                                  nics);  // first l with floor(l*nics/g) == rail
  }
  std::vector<uint32_t> ring;
  ring.reserve(n);
  for (uint32_t node = 0; node < n / g; ++node) {
    for (uint32_t k = 0; k < g; ++k) ring.push_back(node * g + (entry + k) % g);
  }
  return ring;
}

}  // namespace

void ring_reduce_scatter(Builder& b, const std::vector<uint32_t>& ring,
                         const std::vector<std::vector<ChunkRange>>& segs, uint32_t channel) {
  const auto m = static_cast<uint32_t>(ring.size());
  for (uint32_t k = 0; k + 1 < m; ++k) {
    for (std::size_t p = 0; p < segs[0].size(); ++p) {
      for (uint32_t i = 0; i < m; ++i) {
        const uint32_t seg = mod(static_cast<int64_t>(i) - k, m);
        b.transfer(ring[i], ring[(i + 1) % m], segs[seg][p], channel, true);
      }
    }
  }
}

void ring_all_gather(Builder& b, const std::vector<uint32_t>& ring,
                     const std::vector<std::vector<ChunkRange>>& segs, uint32_t channel,
                     uint32_t offset) {
  const auto m = static_cast<uint32_t>(ring.size());
  for (uint32_t k = 0; k + 1 < m; ++k) {
    for (std::size_t p = 0; p < segs[0].size(); ++p) {
      for (uint32_t i = 0; i < m; ++i) {
        const uint32_t seg = mod(static_cast<int64_t>(i) + offset - k, m);
        b.transfer(ring[i], ring[(i + 1) % m], segs[seg][p], channel, false);
      }
    }
  }
}

void build_ring(CollectivePlan& plan, const PlanOptions& o) {
  const uint32_t n = o.ranks;
  const auto channel_bytes = split_bytes(o.bytes, o.channels);
  std::vector<std::vector<std::vector<ChunkRange>>> segs(o.channels);
  const bool chain = o.op == CollectiveOp::Broadcast || o.op == CollectiveOp::Reduce;
  for (uint32_t ch = 0; ch < o.channels; ++ch) {
    segs[ch] = make_segments(plan, channel_bytes[ch], chain ? 1 : n, o);
  }
  std::size_t pieces = 0;
  for (const auto& ch : segs) pieces += ch[0].size();
  // Reductions double the step count of reducing phases; reserve for the worst case.
  // Steps per piece and channel: all_reduce 2(n-1) transfers per position and (n-1) reductions,
  // reduce_scatter (n-1) of each, all_gather (n-1) transfers; a chain n-1 transfers (and as many
  // reductions for reduce). Transfers have at most 3 dependencies (sender's writer, receiver's
  // writer, previous on the connection), reductions 2.
  std::size_t per_piece = n - 1;
  if (o.op == CollectiveOp::AllReduce) per_piece = 3 * std::size_t{n} * (n - 1);
  if (o.op == CollectiveOp::ReduceScatter) per_piece = 2 * std::size_t{n} * (n - 1);
  if (o.op == CollectiveOp::AllGather) per_piece = std::size_t{n} * (n - 1);
  if (o.op == CollectiveOp::Reduce) per_piece = 2 * std::size_t{n - 1};
  const std::size_t max_steps = pieces * per_piece;
  reserve_huge(plan.steps, max_steps);
  reserve_huge(plan.dep_offsets, max_steps + 1);
  reserve_huge(plan.dep_list, 3 * max_steps);
  Builder b(plan, o.connection_depth);
  std::vector<uint32_t> position(n);
  std::vector<std::vector<ChunkRange>> rot(n);
  for (uint32_t ch = 0; ch < o.channels; ++ch) {
    const auto ring = channel_ring(o, ch);
    for (uint32_t i = 0; i < n; ++i) position[ring[i]] = i;
    switch (o.op) {
      case CollectiveOp::AllReduce:
        ring_reduce_scatter(b, ring, segs[ch], ch);
        ring_all_gather(b, ring, segs[ch], ch, 1);
        break;
      case CollectiveOp::ReduceScatter:
        // Position i ends with segment i + 1; give rank j its shard j by rotating the segments.
        for (uint32_t j = 0; j < n; ++j) rot[(position[j] + 1) % n] = segs[ch][j];
        ring_reduce_scatter(b, ring, rot, ch);
        break;
      case CollectiveOp::AllGather:
        // Position i starts with the shard of the rank there.
        for (uint32_t j = 0; j < n; ++j) rot[position[j]] = segs[ch][j];
        ring_all_gather(b, ring, rot, ch, 0);
        break;
      case CollectiveOp::Broadcast:
      case CollectiveOp::Reduce: {
        // A chain along the ring: from the root (broadcast), or from the root's successor to the
        // root (reduce).
        const bool bcast = o.op == CollectiveOp::Broadcast;
        const uint32_t first = (position[o.root] + (bcast ? 0 : 1)) % n;
        for (const ChunkRange& piece : segs[ch][0]) {
          for (uint32_t i = 0; i + 1 < n; ++i) {
            b.transfer(ring[(first + i) % n], ring[(first + i + 1) % n], piece, ch, !bcast);
          }
        }
        break;
      }
      default:
        throw std::invalid_argument("ring does not implement " + std::string(to_string(o.op)));
    }
  }
}

}  // namespace syncsim::models::plan_detail

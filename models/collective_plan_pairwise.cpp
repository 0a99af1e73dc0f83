// Pairwise plans: all_to_all (pairwise exchange, one peer per step) and send_recv.
#include "models/collective_plan_builder.hpp"

#include <span>
#include <vector>

namespace syncsim::models::plan_detail {

void build_pairwise(CollectivePlan& plan, const PlanOptions& o) {
  const uint32_t n = o.ranks;
  if (o.op == CollectiveOp::SendRecv) {
    for (int64_t piece : split_bytes(o.bytes, pieces_for(o.bytes, o.chunk_bytes))) {
      Builder::add_chunk(plan, piece);
    }
    Builder b(plan, o.connection_depth);
    for (uint32_t c = 0; c < plan.chunk_bytes.size(); ++c) {
      b.transfer(o.root, o.peer, ChunkRange{c, 1}, 0, false);
    }
    return;
  }
  // AllToAll: block (s, d) is chunk s * n + d, S / n bytes. Step k: s sends to s + k, after its
  // step k - 1 send finished (pairwise exchange, one peer at a time).
  const auto block = split_bytes(o.bytes, n);
  for (uint32_t s = 0; s < n; ++s) {
    for (uint32_t d = 0; d < n; ++d) Builder::add_chunk(plan, block[d], s);
  }
  Builder b(plan, o.connection_depth);
  std::vector<uint32_t> prev(n, kNone);
  for (uint32_t k = 1; k < n; ++k) {
    for (uint32_t s = 0; s < n; ++s) {
      const uint32_t d = (s + k) % n;
      const std::span<const uint32_t> after =
          prev[s] != kNone ? std::span<const uint32_t>(&prev[s], 1) : std::span<const uint32_t>();
      prev[s] = b.transfer(s, d, ChunkRange{s * n + d, 1}, 0, false, after);
    }
  }
}

}  // namespace syncsim::models::plan_detail

// Hierarchical all_reduce plans: intra-host rings over NVLink around inter-host rings per rail.
#include "models/collective_plan_builder.hpp"

#include <stdexcept>
#include <vector>

namespace syncsim::models::plan_detail {

// Hierarchical all-reduce: ranks node*g + l. Intra-node ring reduce-scatter over NVLink (segment l
// ends at local l - 1), inter-node ring all-reduce of each segment among the ranks with the same
// local index (one rail each, channels rings per rail), intra-node ring all-gather.
void build_hierarchical(CollectivePlan& plan, const PlanOptions& o) {
  const uint32_t g = o.gpus_per_host;
  if (g == 0 || o.ranks % g != 0) {
    throw std::invalid_argument("hierarchical needs gpus_per_host dividing the rank count");
  }
  const uint32_t nodes = o.ranks / g;
  const uint32_t ch_count = o.channels;
  // Chunk layout: segment j (g of them) = nodes * channels sub-chunks, contiguous.
  const auto seg_bytes = split_bytes(o.bytes, g);
  std::vector<ChunkRange> seg(g);
  std::vector<std::vector<std::vector<ChunkRange>>> sub(g);  // [segment][channel][node part]
  for (uint32_t j = 0; j < g; ++j) {
    seg[j].first = static_cast<uint32_t>(plan.chunk_bytes.size());
    const auto per_channel = split_bytes(seg_bytes[j], ch_count);
    sub[j].resize(ch_count);
    for (uint32_t ch = 0; ch < ch_count; ++ch) {
      for (int64_t bytes : split_bytes(per_channel[ch], nodes)) {
        sub[j][ch].push_back(ChunkRange{Builder::add_chunk(plan, bytes), 1});
      }
    }
    seg[j].count = static_cast<uint32_t>(plan.chunk_bytes.size()) - seg[j].first;
  }
  std::vector<std::vector<ChunkRange>> segs(g);
  for (uint32_t j = 0; j < g; ++j) segs[j] = {seg[j]};
  Builder b(plan, o.connection_depth);
  auto node_ring = [&](uint32_t node) {
    std::vector<uint32_t> r(g);
    for (uint32_t l = 0; l < g; ++l) r[l] = node * g + l;
    return r;
  };
  if (g > 1) {
    for (uint32_t node = 0; node < nodes; ++node) ring_reduce_scatter(b, node_ring(node), segs, 0);
  }
  if (nodes > 1) {
    for (uint32_t l = 0; l < g; ++l) {
      const uint32_t j = g > 1 ? (l + 1) % g : 0;  // the segment local l holds
      std::vector<uint32_t> rail(nodes);
      for (uint32_t node = 0; node < nodes; ++node) rail[node] = node * g + l;
      for (uint32_t ch = 0; ch < ch_count; ++ch) {
        std::vector<std::vector<ChunkRange>> parts(nodes);
        for (uint32_t k = 0; k < nodes; ++k) parts[k] = {sub[j][ch][k]};
        ring_reduce_scatter(b, rail, parts, 1 + ch);
        ring_all_gather(b, rail, parts, 1 + ch, 1);
      }
    }
  }
  if (g > 1) {
    for (uint32_t node = 0; node < nodes; ++node) ring_all_gather(b, node_ring(node), segs, 0, 1);
  }
}

}  // namespace syncsim::models::plan_detail

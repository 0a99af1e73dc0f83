#pragma once
// Internal to the collective-plan builders (collective_plan_*.cpp): the step builder that derives
// dependencies from the data each step touches, and the helpers the per-algorithm files share.
// Not part of the models/ interface; include collective_plan.hpp instead.
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/collective_plan.hpp"

namespace syncsim::models::plan_detail {

inline constexpr uint32_t kNone = UINT32_MAX;

struct ChunkRange {
  uint32_t first = 0;
  uint32_t count = 0;
};

// `total` bytes in `parts` parts of whole bytes; the remainder goes to the first parts.
inline std::vector<int64_t> split_bytes(int64_t total, int64_t parts) {
  std::vector<int64_t> out(static_cast<std::size_t>(parts), total / parts);
  for (int64_t i = 0; i < total % parts; ++i) out[static_cast<std::size_t>(i)] += 1;
  return out;
}

inline int64_t pieces_for(int64_t bytes, int64_t chunk_bytes) {
  if (chunk_bytes <= 0 || bytes <= chunk_bytes) return 1;
  return (bytes + chunk_bytes - 1) / chunk_bytes;
}

// Appends steps and derives their dependencies from the data they touch: a transfer waits for the
// last writer of every chunk it reads on the sender and writes on the receiver, and for the
// previous transfer on the same connection (channel, sender, receiver), which is processed in
// order as in NCCL. A reducing transfer is followed by a Reduce step on the receiver.
// With a connection depth D > 1 a transfer waits only for the transfer D earlier on its
// connection: up to D transfers of a connection are in flight, as NCCL's NCCL_STEPS slots allow.
class Builder {
 public:
  explicit Builder(CollectivePlan& plan, uint32_t depth = 1)
      : plan_(plan),
        chunks_(plan.chunk_bytes.size()),
        depth_(std::max(1u, depth)),
        last_writer_(static_cast<std::size_t>(plan.total_ranks()) * plan.chunk_bytes.size(),
                     kNone) {}

  // Adds a chunk of `bytes`; returns its id. Only before any step is added.
  static uint32_t add_chunk(CollectivePlan& plan, int64_t bytes, uint32_t owner = 0) {
    plan.chunk_bytes.push_back(bytes);
    plan.chunk_owner.push_back(owner);
    return static_cast<uint32_t>(plan.chunk_bytes.size() - 1);
  }

  uint32_t transfer(uint32_t src, uint32_t dst, ChunkRange r, uint32_t channel, bool reduce,
                    std::span<const uint32_t> extra_deps = {}) {
    PlanStep s;
    s.kind = PlanStep::Kind::Transfer;
    s.src = src;
    s.dst = dst;
    s.channel = static_cast<uint16_t>(channel);
    s.chunk_first = r.first;
    s.chunk_count = r.count;
    s.reduce = reduce;
    deps_.assign(extra_deps.begin(), extra_deps.end());
    for (uint32_t c = r.first; c < r.first + r.count; ++c) {
      s.bytes += plan_.chunk_bytes[c];
      add(writer(src, c));
      if (!reduce) add(writer(dst, c));
    }
    const uint64_t ranks = plan_.total_ranks();
    const uint64_t key = (static_cast<uint64_t>(channel) * ranks + src) * ranks + dst;
    auto [conn, inserted] = connection_.try_emplace(key, static_cast<uint32_t>(sent_.size()));
    if (inserted) {
      sent_.push_back(0);
      window_.resize(window_.size() + depth_, kNone);
      plan_.connections = static_cast<uint32_t>(sent_.size());
    }
    s.source_step = conn->second;
    // window_ holds the connection's last depth_ transfers, the oldest at sent % depth_.
    uint32_t& oldest =
        window_[static_cast<std::size_t>(conn->second) * depth_ + sent_[conn->second] % depth_];
    add(oldest);
    const uint32_t id = push(s);
    oldest = id;
    ++sent_[conn->second];
    uint32_t written = id;
    if (reduce) {
      PlanStep red;
      red.kind = PlanStep::Kind::Reduce;
      red.src = dst;
      red.dst = dst;
      red.bytes = s.bytes;
      red.chunk_first = r.first;
      red.chunk_count = r.count;
      red.source_step = id;
      deps_.assign(1, id);
      for (uint32_t c = r.first; c < r.first + r.count; ++c) add(writer(dst, c));
      written = push(red);
    }
    for (uint32_t c = r.first; c < r.first + r.count; ++c) {
      last_writer_[static_cast<std::size_t>(dst) * chunks_ + c] = written;
    }
    return id;
  }

 private:
  uint32_t writer(uint32_t rank, uint32_t chunk) const {
    return last_writer_[static_cast<std::size_t>(rank) * chunks_ + chunk];
  }
  void add(uint32_t d) {
    if (d == kNone) return;
    if (std::find(deps_.begin(), deps_.end(), d) == deps_.end()) deps_.push_back(d);
  }
  uint32_t push(const PlanStep& s) {
    std::sort(deps_.begin(), deps_.end());
    return plan_.add_step(s, deps_);
  }

  CollectivePlan& plan_;
  std::size_t chunks_;
  uint32_t depth_;
  std::vector<uint32_t> last_writer_;
  std::unordered_map<uint64_t, uint32_t> connection_;  // connection -> its index
  std::vector<uint32_t> sent_;                         // per connection: transfers so far
  std::vector<uint32_t> window_;  // per connection: its last depth_ transfers (ring)
  std::vector<uint32_t> deps_;    // scratch: the dependencies of the step being added
};

inline uint32_t mod(int64_t a, uint32_t m) {
  const int64_t mm = static_cast<int64_t>(m);
  return static_cast<uint32_t>(((a % mm) + mm) % mm);
}

// Ring reduce-scatter over `ring` (ranks in ring order): segs[j] are the pieces of segment j. After
// it, position i holds segment (i + 1) mod m fully reduced over the ring.
void ring_reduce_scatter(Builder& b, const std::vector<uint32_t>& ring,
                         const std::vector<std::vector<ChunkRange>>& segs, uint32_t channel);
// Ring all-gather: position i starts with segment (i + offset) mod m.
void ring_all_gather(Builder& b, const std::vector<uint32_t>& ring,
                     const std::vector<std::vector<ChunkRange>>& segs, uint32_t channel,
                     uint32_t offset);

// Node-level tree (NCCL's ncclGetDtree, tree 0 or 1; collective_plan_node_tree.cpp): parents
// (kNone at the root), children, and a children-first order (a node after all its descendants).
struct NodeTree {
  std::vector<uint32_t> parent;
  std::vector<uint32_t> children_first;
  std::vector<std::vector<uint32_t>> children;
};
NodeTree node_tree(uint32_t nodes, uint32_t tree);

// SHARP aggregation trees in a plan (collective_plan_collnet.cpp). map_sharp_engines appends the
// plan engines of every fabric engine the trees use (after any NVLS engines the plan already has)
// and returns, per fabric engine id, its plan rank (kNone where unused). sharp_through_tree sends
// `slice` from every host's head (head_of[v]) up the tree, reduced in its engines, and the total
// back down to every head.
std::vector<uint32_t> map_sharp_engines(CollectivePlan& plan,
                                        const std::vector<net::AggregationTree>& trees);
// Throws unless `o` has an aggregation tree over the `nodes` hosts for each of the first `count`
// NICs; `who` starts the message ("collnet_direct needs").
void check_sharp_trees(const PlanOptions& o, uint32_t count, uint32_t nodes,
                       const std::string& who);
void sharp_through_tree(Builder& b, const net::AggregationTree& tree,
                        const std::vector<uint32_t>& rank_of, const std::vector<uint32_t>& head_of,
                        ChunkRange slice, uint32_t ch);
// ReduceScatter / AllGather over whole hosts of g GPUs with a NIC each, SHARP between them:
// rail h (the shards of local rank h on every host) runs on NIC h's tree, whose switches add the
// hosts' sums (ReduceScatter) or pass the shards along (AllGather). `stage` is how a host's GPUs
// meet their rail's head: CollNet Direct's NVLink copies to and from the heads, or NVLS's NVSwitch
// (engine ranks + v of host v: multimem.ld_reduce / multimem.st). collective_plan_collnet.cpp.
enum class ShardHostStage : uint8_t { NvlinkToHeads, NvlsSwitch };
void build_sharp_shards(CollectivePlan& plan, const PlanOptions& o, uint32_t nodes,
                        const std::vector<uint32_t>& rank_of, ShardHostStage stage);
// The first GPU of NIC i on hosts of g GPUs and `nics` NICs (GPU l uses NIC floor(l nics / g)).
inline uint32_t first_gpu_of_nic(uint32_t i, uint32_t g, uint32_t nics) {
  return static_cast<uint32_t>((uint64_t{i} * g + nics - 1) / nics);
}

// One builder per algorithm (collective_plan_<algorithm>.cpp). build_plan has checked the
// (op, algo) pair and the common parameters; the builders fill chunks and steps.
void build_ring(CollectivePlan& plan, const PlanOptions& o);
void build_tree(CollectivePlan& plan, const PlanOptions& o);
void build_halving_doubling(CollectivePlan& plan, const PlanOptions& o);
void build_hierarchical(CollectivePlan& plan, const PlanOptions& o);
void build_pairwise(CollectivePlan& plan, const PlanOptions& o);
void build_nvls(CollectivePlan& plan, const PlanOptions& o);
void build_nvls_tree(CollectivePlan& plan, const PlanOptions& o);
void build_nvls_sharp(CollectivePlan& plan, const PlanOptions& o);
void build_pat(CollectivePlan& plan, const PlanOptions& o);
void build_collnet(CollectivePlan& plan, const PlanOptions& o);

}  // namespace syncsim::models::plan_detail

// NVLS and NVLS-tree all_reduce plans: NVLink SHARP inside one NVLink domain, as NCCL's NVLS
// algorithm runs it (src/device/all_reduce.h, the NVLS Simple kernel; src/transport/nvls.cc).
//
// The NVSwitch holds a multicast object over every GPU's buffer. Each channel walks its part of the
// buffer in rounds of heads x NCCL_NVLS_CHUNKSIZE; in a round, head h issues multimem.ld_reduce on
// its slice (the switch reads the slice from every GPU, adds them and returns the sum to h) and
// then multimem.st of the sum (h writes it once, the switch copies it to every GPU). Per GPU and
// direction that is S + S / heads on NVLink (S from the reads or the multicast, S / heads from its
// own slice's result or store), against 2 (n - 1) / n S for a ring.
//
// In the plan the switch is engine rank n (CollectivePlan::engines = 1): per channel and round,
//   every GPU k -> engine: the whole round (all heads' slices), the engine reducing (free: the
//     switch adds at line rate);
//   engine -> head h: slice h reduced (the ld_reduce result); head h -> engine: slice h (the st);
//   engine -> every GPU k: the whole round once every head has stored (the multicast).
// One transfer per GPU carries a round's slices together (they are contiguous chunks), so a round
// is 2 n + 2 heads transfers rather than heads (2 n + 2): the same bytes on every link.
// NVLS-tree across hosts: build_nvls_tree below; NVLS across hosts with SHARP: build_nvls_sharp.
//
// ReduceScatter and AllGather in one domain (src/device/reduce_scatter.h and all_gather.h, the
// NVLS kernels with one node): rank s issues multimem.ld_reduce on its own shard (the switch reads
// it from every GPU, adds and returns it to s), or multimem.st of its shard (the switch writes it
// to every GPU). Per channel and round, in the plan: every GPU -> engine: the round's pieces of all
// shards (reduced), engine -> s: piece s; or s -> engine: piece s, engine -> every GPU: all pieces.
// Per GPU that is S out and S / n in (reduce_scatter), or the reverse (all_gather), against the
// ring's (n - 1) / n S each way.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/collective_plan_builder.hpp"

namespace syncsim::models::plan_detail {

namespace {

// NCCL_NVLS_CHUNKSIZE (src/transport/nvls.cc): 128 KiB per head and round.
constexpr int64_t kNvlsChunkBytes = int64_t{128} << 10;
// NCCL_MAX_NVLS_ARITY (src/include/device.h): at most 32 heads.
constexpr uint32_t kMaxNvlsHeads = 32;
// Rounds simulated per channel at most: larger buffers get proportionally larger rounds (the same
// bytes in fewer, larger transfers). With two rounds in flight per connection the pipeline's fill
// and drain are then under 2 % of a large all-reduce, and an 8 GiB all-reduce on 72 GPUs stays
// at ~3 x 10^5 transfers.
constexpr int64_t kMaxRoundsPerChannel = 64;

// The chunks of a plan: per channel, rounds of `heads` consecutive slices (chunk ids).
std::vector<std::vector<uint32_t>> add_rounds(CollectivePlan& plan, const PlanOptions& o,
                                              uint32_t heads, int64_t chunk) {
  std::vector<std::vector<uint32_t>> rounds(o.channels);
  const auto channel_bytes = split_bytes(o.bytes, o.channels);
  for (uint32_t ch = 0; ch < o.channels; ++ch) {
    const int64_t count = std::min<int64_t>(kMaxRoundsPerChannel,
                                            pieces_for(channel_bytes[ch], int64_t{heads} * chunk));
    for (int64_t round_bytes : split_bytes(channel_bytes[ch], count)) {
      rounds[ch].push_back(static_cast<uint32_t>(plan.chunk_bytes.size()));
      for (int64_t slice : split_bytes(round_bytes, heads)) Builder::add_chunk(plan, slice);
    }
  }
  return rounds;
}

uint32_t heads_of(const PlanOptions& o, uint32_t gpus) {
  const uint32_t cap = o.nvls_heads == 0 ? kMaxNvlsHeads : std::min(o.nvls_heads, kMaxNvlsHeads);
  return std::min(gpus, cap);
}

// The local GPU of each head: GPUs 0..heads-1, or across hosts with SHARP the first GPU of each
// head's NIC (every head needs a NIC of its own).
std::vector<uint32_t> first_heads(uint32_t heads) {
  std::vector<uint32_t> local(heads);
  for (uint32_t h = 0; h < heads; ++h) local[h] = h;
  return local;
}

// One host's NVLS reduction of a round: its GPUs first..first+g-1 send the round to `engine`
// (which adds them), and each head (local GPU head_local[h]) gets its slice back.
void reduce_in_host(Builder& b, uint32_t first, uint32_t g, uint32_t engine,
                    const std::vector<uint32_t>& head_local, uint32_t round, uint32_t ch) {
  const auto heads = static_cast<uint32_t>(head_local.size());
  const ChunkRange all{round, heads};
  for (uint32_t k = 0; k < g; ++k) b.transfer(first + k, engine, all, ch, /*reduce=*/k != 0);
  for (uint32_t h = 0; h < heads; ++h)
    b.transfer(engine, first + head_local[h], ChunkRange{round + h, 1}, ch, false);
}

// Each head stores its slice into the switch, which multicasts the round to the host's GPUs.
void multicast_in_host(Builder& b, uint32_t first, uint32_t g, uint32_t engine,
                       const std::vector<uint32_t>& head_local, uint32_t round, uint32_t ch) {
  const auto heads = static_cast<uint32_t>(head_local.size());
  for (uint32_t h = 0; h < heads; ++h)
    b.transfer(first + head_local[h], engine, ChunkRange{round + h, 1}, ch, false);
  for (uint32_t k = 0; k < g; ++k)
    b.transfer(engine, first + k, ChunkRange{round, heads}, ch, false);
}

}  // namespace

namespace {

void build_nvls_shards(CollectivePlan& plan, const PlanOptions& o) {
  const uint32_t n = o.ranks;
  plan.engines = 1;
  const int64_t chunk = o.chunk_bytes > 0 ? o.chunk_bytes : kNvlsChunkBytes;
  // Chunks: per channel and round, the round's piece of every shard s (owner s), in shard order.
  const auto shard_bytes = split_bytes(o.bytes, n);
  std::vector<std::vector<int64_t>> shard_channel(n);
  for (uint32_t s = 0; s < n; ++s) shard_channel[s] = split_bytes(shard_bytes[s], o.channels);
  std::vector<std::vector<uint32_t>> rounds(o.channels);
  for (uint32_t ch = 0; ch < o.channels; ++ch) {
    const int64_t count =
        std::min<int64_t>(kMaxRoundsPerChannel, pieces_for(shard_channel[0][ch], chunk));
    std::vector<std::vector<int64_t>> pieces(n);
    for (uint32_t s = 0; s < n; ++s) pieces[s] = split_bytes(shard_channel[s][ch], count);
    for (int64_t k = 0; k < count; ++k) {
      rounds[ch].push_back(static_cast<uint32_t>(plan.chunk_bytes.size()));
      for (uint32_t s = 0; s < n; ++s) {
        Builder::add_chunk(plan, pieces[s][static_cast<std::size_t>(k)], s);
      }
    }
  }
  Builder b(plan, plan.connection_depth);
  const bool reduce_scatter = o.op == CollectiveOp::ReduceScatter;
  for (uint32_t ch = 0; ch < o.channels; ++ch) {
    for (uint32_t r : rounds[ch]) {
      if (reduce_scatter) {
        for (uint32_t k = 0; k < n; ++k) b.transfer(k, n, ChunkRange{r, n}, ch, /*reduce=*/k != 0);
        for (uint32_t s = 0; s < n; ++s) b.transfer(n, s, ChunkRange{r + s, 1}, ch, false);
      } else {
        for (uint32_t s = 0; s < n; ++s) b.transfer(s, n, ChunkRange{r + s, 1}, ch, false);
        for (uint32_t k = 0; k < n; ++k) b.transfer(n, k, ChunkRange{r, n}, ch, false);
      }
    }
  }
}

}  // namespace

void build_nvls(CollectivePlan& plan, const PlanOptions& o) {
  if (o.op == CollectiveOp::ReduceScatter || o.op == CollectiveOp::AllGather) {
    build_nvls_shards(plan, o);
    return;
  }
  const uint32_t n = o.ranks;
  const uint32_t heads = heads_of(o, n);
  plan.engines = 1;
  const auto rounds =
      add_rounds(plan, o, heads, o.chunk_bytes > 0 ? o.chunk_bytes : kNvlsChunkBytes);
  // The runner starts a step once its dependencies are done; issuing channel-major, round by
  // round, keeps a connection's transfers in round order.
  const std::vector<uint32_t> head_local = first_heads(heads);
  Builder b(plan, plan.connection_depth);
  for (uint32_t ch = 0; ch < o.channels; ++ch) {
    for (uint32_t r : rounds[ch]) {
      reduce_in_host(b, 0, n, n, head_local, r, ch);
      multicast_in_host(b, 0, n, n, head_local, r, ch);
    }
  }
}

// NVLS-tree (src/device/all_reduce.h, NCCL_ALGO_NVLS_TREE): every host reduces a round in its
// switch as above; head h of every host then reduces slice h up NCCL's node tree (channels
// 0..C/2-1 on the first tree of ncclGetDtree, the rest on the second, as the tree plans do) with
// the other hosts' heads h, through its own NIC, and broadcasts the result back down; each head
// stores the final slice into its switch, which multicasts the round.
void build_nvls_tree(CollectivePlan& plan, const PlanOptions& o) {
  const uint32_t n = o.ranks;
  const uint32_t g = o.gpus_per_host;
  const uint32_t nodes = n / g;
  const uint32_t heads = heads_of(o, g);
  plan.engines = nodes;
  // NCCL_NVLSTREE_MAX_CHUNKSIZE's default: 64 KiB from 4 nodes, else the NVLS chunk.
  const int64_t chunk = o.chunk_bytes > 0 ? o.chunk_bytes
                        : nodes >= 4      ? int64_t{64} << 10
                                          : kNvlsChunkBytes;
  const auto rounds = add_rounds(plan, o, heads, chunk);
  const uint32_t half = std::max(1u, o.channels / 2);
  const NodeTree trees[2] = {node_tree(nodes, 0), node_tree(nodes, 1)};
  const std::vector<uint32_t> head_local = first_heads(heads);
  Builder b(plan, plan.connection_depth);
  for (uint32_t ch = 0; ch < o.channels; ++ch) {
    const NodeTree& tree = trees[(ch / half) % 2];
    for (uint32_t r : rounds[ch]) {
      for (uint32_t v = 0; v < nodes; ++v) reduce_in_host(b, v * g, g, n + v, head_local, r, ch);
      for (uint32_t h = 0; h < heads; ++h) {
        const ChunkRange slice{r + h, 1};
        for (uint32_t v : tree.children_first) {
          if (tree.parent[v] != kNone)
            b.transfer(v * g + h, tree.parent[v] * g + h, slice, ch, true);
        }
        for (auto it = tree.children_first.rbegin(); it != tree.children_first.rend(); ++it) {
          for (uint32_t child : tree.children[*it])
            b.transfer(*it * g + h, child * g + h, slice, ch, false);
        }
      }
      for (uint32_t v = 0; v < nodes; ++v) {
        multicast_in_host(b, v * g, g, n + v, head_local, r, ch);
      }
    }
  }
}

// NVLS across hosts with SHARP (NCCL_ALGO_NVLS on more than one node, which NCCL enables only
// with CollNet: tuning.cc disables "Collnet+NVLS if collnet is not supported"): every host reduces
// a round in its NVSwitch as above, head h (the first GPU of NIC h: every head has a NIC of its
// own, getNvlsNetDev) sends its host's slice h up NIC h's SHARP tree, the fabric's switches add
// the hosts' slices and send the total back down, and each head stores it into its NVSwitch,
// which multicasts the round. Per NIC that is S / heads each way, against NVLS-tree's 2 S / heads
// through the inner nodes of a binary tree and the ring's 2 (n - 1) / n S.
//
// ReduceScatter / AllGather across hosts (src/device/reduce_scatter.h and all_gather.h, the NVLS
// kernels with more than one node) need a NIC per GPU (tuning.cc: "AllGather/ReduceScatter
// requires 1:1 GPU:NIC"): head h serves rail h, the shards of local rank h on every host, as
// CollNet Direct does, but meets the host's GPUs in the NVSwitch. ReduceScatter: every GPU puts its
// round into the switch, head h's multimem.ld_reduce takes the host's sum of rail h and sends it
// up tree h; each host's head gets its own shard back. AllGather: head h sends its shard up, gets
// the rail back from the tree and stores it into the switch (multimem.st), which multicasts the
// round to every GPU. Per GPU that is S out and S / n in over NVLink (or the reverse), per NIC
// S / g up and S / (g n) down (or the reverse): CollNet Direct's network traffic with NVLS's
// NVLink traffic.
void build_nvls_sharp(CollectivePlan& plan, const PlanOptions& o) {
  const uint32_t n = o.ranks;
  const uint32_t g = o.gpus_per_host;
  const uint32_t nodes = n / g;
  const uint32_t nics = std::min(o.nics_per_host == 0 ? g : o.nics_per_host, g);
  if (o.op == CollectiveOp::ReduceScatter || o.op == CollectiveOp::AllGather) {
    if (nics < g || g > kMaxNvlsHeads) {
      throw std::invalid_argument("nvls " + std::string(to_string(o.op)) +
                                  " across hosts needs a NIC per GPU on hosts of at most 32 GPUs "
                                  "(NCCL: 1:1 GPU:NIC), got " +
                                  std::to_string(g) + " GPUs and " + std::to_string(nics) +
                                  " NICs per host");
    }
    check_sharp_trees(o, g, nodes, "nvls across hosts needs SHARP switches:");
    plan.engines = nodes;
    const std::vector<uint32_t> rank_of = map_sharp_engines(plan, o.collnet_trees);
    build_sharp_shards(plan, o, nodes, rank_of, ShardHostStage::NvlsSwitch);
    return;
  }
  const uint32_t heads = std::min(heads_of(o, g), nics);
  if (heads < 2) {
    throw std::invalid_argument(
        "nvls across hosts needs two or more GPUs with a NIC each per host");
  }
  check_sharp_trees(o, heads, nodes, "nvls across hosts needs SHARP switches:");
  // Engines (the hosts' NVSwitches, then the SHARP switches), then chunks, then the builder.
  plan.engines = nodes;
  const std::vector<uint32_t> rank_of = map_sharp_engines(plan, o.collnet_trees);
  const auto rounds =
      add_rounds(plan, o, heads, o.chunk_bytes > 0 ? o.chunk_bytes : kNvlsChunkBytes);
  std::vector<uint32_t> head_local(heads);
  for (uint32_t h = 0; h < heads; ++h) head_local[h] = first_gpu_of_nic(h, g, nics);
  std::vector<uint32_t> head_of(nodes);
  Builder b(plan, plan.connection_depth);
  for (uint32_t ch = 0; ch < o.channels; ++ch) {
    for (uint32_t r : rounds[ch]) {
      for (uint32_t v = 0; v < nodes; ++v) reduce_in_host(b, v * g, g, n + v, head_local, r, ch);
      for (uint32_t h = 0; h < heads; ++h) {
        for (uint32_t v = 0; v < nodes; ++v) head_of[v] = v * g + head_local[h];
        sharp_through_tree(b, o.collnet_trees[h], rank_of, head_of, ChunkRange{r + h, 1}, ch);
      }
      for (uint32_t v = 0; v < nodes; ++v) {
        multicast_in_host(b, v * g, g, n + v, head_local, r, ch);
      }
    }
  }
}

}  // namespace syncsim::models::plan_detail

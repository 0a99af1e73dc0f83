// CollNet all_reduce plans: the reduction across hosts runs in the fabric's SHARP switches, as
// NCCL's CollNet algorithms run it through the SHARP plugin (src/device/all_reduce.h,
// RunWorkColl<..., NCCL_ALGO_COLLNET_DIRECT / NCCL_ALGO_COLLNET_CHAIN, NCCL_PROTO_SIMPLE>).
//
// CollNet Direct: every channel walks its part of the buffer in rounds of heads x chunk. In a round
// each GPU scatters slice h to head h over NVLink, where it is added (the kernel's scatter and
// reduce warps); head h sends its host's sum of slice h to its NIC's aggregation tree; the tree's
// switches add the hosts' sums on the way up and send the total back down the same tree; head h
// receives it and copies it to the host's other GPUs (broadcast warps). Per GPU that is
// (heads - 1) / heads of the buffer out and in over NVLink, and per head S / heads up and down its
// NIC, against 2 (n - 1) / n S on each NIC for a ring: SHARP's twofold gain at scale.
//
// CollNet Chain: channel c chains the host's GPUs to the first GPU of NIC c mod NICs (the chain's
// head), which sends the host's sum up that NIC's tree and passes the total back down the chain.
//
// The tree (net::aggregation_tree): each participant's head sends to the engine of its leaf
// switch; each engine adds what its children send (the first arrival is copied, the others
// reduced, at no GPU cost) and forwards the sum to its parent; the root's total flows back down.
//
// ReduceScatter and AllGather run on CollNet Direct only, with a NIC per GPU (tuning.cc disables
// them when a node has more local ranks than heads: "AllGather/ReduceScatter requires 1:1
// GPU:NIC"). Head h (GPU h, NIC h) serves rail h: the shards of local rank h on every host
// (src/device/reduce_scatter.h and all_gather.h, RunWorkColl<..., NCCL_ALGO_COLLNET_DIRECT>).
// ReduceScatter: every GPU sends head h its input for rail h's shards (added there; the scatter
// warps), head h sends the host's sums up tree h, the switches add them, and each host's head
// receives only its own shard back down (the network's reduce-scatter); a switch sends a child
// only the shards of the hosts below it. AllGather: each head sends its shard up tree h, the
// switches pass what is below them up to the root, the root sends all of the rail's shards down
// to every head (as a multicast would), and head h copies them to the host's other GPUs. Per NIC
// that is S / g up and S / (g n) down (ReduceScatter) or the reverse (AllGather), the ring's
// traffic: SHARP's gain for these two is latency (two tree hops instead of n - 1 ring steps).
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/collective_plan_builder.hpp"

namespace syncsim::models::plan_detail {

namespace {

// Rounds simulated per channel at most, as for NVLS: larger buffers get larger rounds. A round's
// slices cross the NIC once each way, so its pipeline's fill and drain cost about one round of the
// NIC's time: under 2 % at 64 rounds. Large collectives keep about 300,000 transfers in all (at
// least 8 rounds per channel, ~1/8 of fill), as a 64-rank Direct round of 8-GPU hosts on 16
// channels is ~20,000 transfers.
constexpr int64_t kMaxRoundsPerChannel = 64;
constexpr int64_t kMinRoundsPerChannel = 8;
constexpr double kTransferBudget = 3.0e5;

using net::AggregationTree;

}  // namespace

std::vector<uint32_t> map_sharp_engines(CollectivePlan& plan,
                                        const std::vector<AggregationTree>& trees) {
  uint32_t most = 0;
  for (const AggregationTree& t : trees) {
    for (const AggregationTree::Edge& e : t.edges) most = std::max(most, e.engine + 1);
  }
  // NVLS engines (the hosts' NVSwitches) come first, the fabric's after them.
  const uint32_t host_engines = plan.engines - static_cast<uint32_t>(plan.fabric_engines.size());
  std::vector<uint32_t> rank_of(most, kNone);
  for (const AggregationTree& t : trees) {
    for (const AggregationTree::Edge& e : t.edges) {
      if (rank_of[e.engine] == kNone) {
        rank_of[e.engine] =
            plan.ranks + host_engines + static_cast<uint32_t>(plan.fabric_engines.size());
        plan.fabric_engines.push_back(e.engine);
      }
    }
  }
  plan.engines = host_engines + static_cast<uint32_t>(plan.fabric_engines.size());
  return rank_of;
}

namespace {

// A range up a tree from each host's head (head_of[v]) to the root, reduced in every engine (the
// first arrival is copied, the others added).
void reduce_up(Builder& b, const AggregationTree& tree, const std::vector<uint32_t>& rank_of,
               const std::vector<uint32_t>& head_of, ChunkRange range, uint32_t ch) {
  std::vector<bool> filled(rank_of.size(), false);
  auto send_up = [&](uint32_t src, uint32_t engine) {
    b.transfer(src, rank_of[engine], range, ch, /*reduce=*/filled[engine]);
    filled[engine] = true;
  };
  for (uint32_t v = 0; v < head_of.size(); ++v) send_up(head_of[v], tree.participant_engine[v]);
  for (const AggregationTree::Edge& e : tree.edges) {
    if (e.parent != AggregationTree::kNoEngine) send_up(rank_of[e.engine], e.parent);
  }
}

// A range from the root down the tree to every host's head.
void broadcast_down(Builder& b, const AggregationTree& tree, const std::vector<uint32_t>& rank_of,
                    const std::vector<uint32_t>& head_of, ChunkRange range, uint32_t ch) {
  for (auto it = tree.edges.rbegin(); it != tree.edges.rend(); ++it) {
    if (it->parent != AggregationTree::kNoEngine) {
      b.transfer(rank_of[it->parent], rank_of[it->engine], range, ch, false);
    }
  }
  for (uint32_t v = 0; v < head_of.size(); ++v) {
    b.transfer(rank_of[tree.participant_engine[v]], head_of[v], range, ch, false);
  }
}

}  // namespace

void check_sharp_trees(const PlanOptions& o, uint32_t count, uint32_t nodes,
                       const std::string& who) {
  if (o.collnet_trees.size() < count) {
    throw std::invalid_argument(who + " an aggregation tree for each of the " +
                                std::to_string(count) + " NICs of a host it uses, got " +
                                std::to_string(o.collnet_trees.size()) +
                                " (SHARP switches: fabric.infiniband.sharp.enabled)");
  }
  for (uint32_t i = 0; i < count; ++i) {
    if (o.collnet_trees[i].participant_engine.size() != nodes || o.collnet_trees[i].edges.empty()) {
      throw std::invalid_argument("aggregation tree " + std::to_string(i) + " joins " +
                                  std::to_string(o.collnet_trees[i].participant_engine.size()) +
                                  " hosts, the collective " + std::to_string(nodes));
    }
  }
}

void sharp_through_tree(Builder& b, const AggregationTree& tree,
                        const std::vector<uint32_t>& rank_of, const std::vector<uint32_t>& head_of,
                        ChunkRange slice, uint32_t ch) {
  reduce_up(b, tree, rank_of, head_of, slice, ch);
  broadcast_down(b, tree, rank_of, head_of, slice, ch);
}

namespace {

// Per channel, rounds of `per_round` consecutive slices (chunk ids of each round's first slice).
std::vector<std::vector<uint32_t>> add_rounds(CollectivePlan& plan, const PlanOptions& o,
                                              uint32_t per_round, double transfers_per_round) {
  std::vector<std::vector<uint32_t>> rounds(o.channels);
  const auto channel_bytes = split_bytes(o.bytes, o.channels);
  const auto budget =
      std::max<int64_t>(kMinRoundsPerChannel,
                        static_cast<int64_t>(kTransferBudget / (transfers_per_round * o.channels)));
  const int64_t most = std::min(kMaxRoundsPerChannel, budget);
  for (uint32_t ch = 0; ch < o.channels; ++ch) {
    const int64_t count = std::min<int64_t>(
        most, o.chunk_bytes > 0 ? pieces_for(channel_bytes[ch], per_round * o.chunk_bytes) : 1);
    for (int64_t round_bytes : split_bytes(channel_bytes[ch], count)) {
      rounds[ch].push_back(static_cast<uint32_t>(plan.chunk_bytes.size()));
      for (int64_t slice : split_bytes(round_bytes, per_round)) Builder::add_chunk(plan, slice);
    }
  }
  return rounds;
}

// Per engine of `tree` (by fabric engine id): the participants below it, in increasing order.
std::vector<std::vector<uint32_t>> participants_below(const AggregationTree& tree,
                                                      std::size_t engines) {
  std::vector<uint32_t> parent(engines, AggregationTree::kNoEngine);
  for (const AggregationTree::Edge& e : tree.edges) parent[e.engine] = e.parent;
  std::vector<std::vector<uint32_t>> below(engines);
  for (uint32_t v = 0; v < tree.participant_engine.size(); ++v) {
    for (uint32_t e = tree.participant_engine[v]; e != AggregationTree::kNoEngine; e = parent[e]) {
      below[e].push_back(v);
    }
  }
  return below;
}

// Sends the participants' pieces `base + v` (v in `parts`, increasing) from src to dst, one
// transfer per run of consecutive participants.
void send_runs(Builder& b, uint32_t src, uint32_t dst, uint32_t base,
               const std::vector<uint32_t>& parts, uint32_t ch) {
  for (std::size_t i = 0; i < parts.size();) {
    std::size_t j = i + 1;
    while (j < parts.size() && parts[j] == parts[j - 1] + 1) ++j;
    b.transfer(src, dst, ChunkRange{base + parts[i], static_cast<uint32_t>(j - i)}, ch, false);
    i = j;
  }
}

}  // namespace

// ReduceScatter / AllGather with SHARP between hosts (see the top of the file, and
// collective_plan_nvls.cpp for the NVSwitch stage).
void build_sharp_shards(CollectivePlan& plan, const PlanOptions& o, uint32_t nodes,
                        const std::vector<uint32_t>& rank_of, ShardHostStage stage) {
  const uint32_t g = o.gpus_per_host;
  const uint32_t n = o.ranks;
  const bool reduce_scatter = o.op == CollectiveOp::ReduceScatter;
  const bool nvls = stage == ShardHostStage::NvlsSwitch;
  // Chunks: per channel, round, rail h and host v, the round's piece of shard v g + h (owner).
  // Transfers per round: the hosts' NVLink stage (Direct: g (g - 1) per host; NVLS: 3 g) and each
  // rail's tree (about 4 per host).
  const double per_round = (nvls ? 3.0 * nodes * g : 1.0 * nodes * g * (g - 1)) + 4.0 * nodes * g;
  const auto budget = std::max<int64_t>(
      kMinRoundsPerChannel, static_cast<int64_t>(kTransferBudget / (per_round * o.channels)));
  const int64_t most = std::min(kMaxRoundsPerChannel, budget);
  const auto shard_bytes = split_bytes(o.bytes, n);
  std::vector<std::vector<int64_t>> shard_channel(n);
  for (uint32_t s = 0; s < n; ++s) shard_channel[s] = split_bytes(shard_bytes[s], o.channels);
  std::vector<std::vector<uint32_t>> rounds(o.channels);  // first chunk of each round
  for (uint32_t ch = 0; ch < o.channels; ++ch) {
    const int64_t rail_bytes = shard_channel[0][ch] * nodes;
    const int64_t count =
        std::min<int64_t>(most, o.chunk_bytes > 0 ? pieces_for(rail_bytes, o.chunk_bytes) : 1);
    std::vector<std::vector<int64_t>> pieces(n);
    for (uint32_t s = 0; s < n; ++s) pieces[s] = split_bytes(shard_channel[s][ch], count);
    for (int64_t k = 0; k < count; ++k) {
      rounds[ch].push_back(static_cast<uint32_t>(plan.chunk_bytes.size()));
      for (uint32_t h = 0; h < g; ++h) {
        for (uint32_t v = 0; v < nodes; ++v) {
          const uint32_t s = v * g + h;
          Builder::add_chunk(plan, pieces[s][static_cast<std::size_t>(k)], s);
        }
      }
    }
  }
  std::vector<std::vector<std::vector<uint32_t>>> below(g);
  for (uint32_t h = 0; h < g; ++h)
    below[h] = participants_below(o.collnet_trees[h], rank_of.size());
  std::vector<uint32_t> head_of(nodes);
  const uint32_t round_chunks = nodes * g;
  Builder b(plan, plan.connection_depth);
  for (uint32_t ch = 0; ch < o.channels; ++ch) {
    for (const uint32_t r : rounds[ch]) {
      // NVLS reduce_scatter: every GPU's round into its NVSwitch (engine n + v), added there.
      if (nvls && reduce_scatter) {
        for (uint32_t v = 0; v < nodes; ++v) {
          for (uint32_t k = 0; k < g; ++k) {
            b.transfer(v * g + k, n + v, ChunkRange{r, round_chunks}, ch, /*reduce=*/k != 0);
          }
        }
      }
      for (uint32_t h = 0; h < g; ++h) {
        const AggregationTree& tree = o.collnet_trees[h];
        for (uint32_t v = 0; v < nodes; ++v) head_of[v] = v * g + h;
        const uint32_t base = r + h * nodes;
        const ChunkRange rail{base, nodes};
        if (reduce_scatter) {
          for (uint32_t v = 0; v < nodes; ++v) {
            if (nvls) {
              // Head h's multimem.ld_reduce of rail h: the host's sum, from the switch.
              b.transfer(n + v, v * g + h, rail, ch, false);
              continue;
            }
            for (uint32_t k = 0; k < g; ++k) {
              if (k != h) b.transfer(v * g + k, v * g + h, rail, ch, true);
            }
          }
          reduce_up(b, tree, rank_of, head_of, rail, ch);
          for (auto it = tree.edges.rbegin(); it != tree.edges.rend(); ++it) {
            if (it->parent != AggregationTree::kNoEngine) {
              send_runs(b, rank_of[it->parent], rank_of[it->engine], base, below[h][it->engine],
                        ch);
            }
          }
          for (uint32_t v = 0; v < nodes; ++v) {
            b.transfer(rank_of[tree.participant_engine[v]], v * g + h, ChunkRange{base + v, 1}, ch,
                       false);
          }
          continue;
        }
        for (uint32_t v = 0; v < nodes; ++v) {
          b.transfer(v * g + h, rank_of[tree.participant_engine[v]], ChunkRange{base + v, 1}, ch,
                     false);
        }
        for (const AggregationTree::Edge& e : tree.edges) {
          if (e.parent != AggregationTree::kNoEngine) {
            send_runs(b, rank_of[e.engine], rank_of[e.parent], base, below[h][e.engine], ch);
          }
        }
        broadcast_down(b, tree, rank_of, head_of, rail, ch);
        for (uint32_t v = 0; v < nodes; ++v) {
          if (nvls) {
            // Head h's multimem.st of rail h into its NVSwitch.
            b.transfer(v * g + h, n + v, rail, ch, false);
            continue;
          }
          for (uint32_t k = 0; k < g; ++k) {
            if (k != h) b.transfer(v * g + h, v * g + k, rail, ch, false);
          }
        }
      }
      // NVLS all_gather: the switch multicasts the round to every GPU of its host.
      if (nvls && !reduce_scatter) {
        for (uint32_t v = 0; v < nodes; ++v) {
          for (uint32_t k = 0; k < g; ++k) {
            b.transfer(n + v, v * g + k, ChunkRange{r, round_chunks}, ch, false);
          }
        }
      }
    }
  }
}

void build_collnet(CollectivePlan& plan, const PlanOptions& o) {
  const uint32_t n = o.ranks;
  const uint32_t g = o.gpus_per_host;
  if (g < 1 || n % g != 0 || n / g < 2) {
    throw std::invalid_argument(std::string(to_string(o.algo)) +
                                " needs two or more whole hosts: " + std::to_string(n) +
                                " ranks on hosts of " + std::to_string(g) + " GPUs");
  }
  const uint32_t nodes = n / g;
  const uint32_t nics = std::min(o.nics_per_host == 0 ? g : o.nics_per_host, g);
  check_sharp_trees(o, nics, nodes, std::string(to_string(o.algo)) + " needs");
  if (o.op != CollectiveOp::AllReduce) {
    if (nics < g || g > 8) {
      throw std::invalid_argument(
          "collnet_direct " + std::string(to_string(o.op)) +
          " needs a NIC per GPU on hosts of at most 8 GPUs (NCCL: 1:1 GPU:NIC), got " +
          std::to_string(g) + " GPUs and " + std::to_string(nics) + " NICs per host");
    }
    const std::vector<uint32_t> rank_of = map_sharp_engines(plan, o.collnet_trees);
    build_sharp_shards(plan, o, nodes, rank_of, ShardHostStage::NvlinkToHeads);
    return;
  }
  // Engines, then chunks, then the builder (it sizes its state by both).
  const std::vector<uint32_t> rank_of = map_sharp_engines(plan, o.collnet_trees);
  std::vector<uint32_t> head_of(nodes);
  if (o.algo == CollectiveAlgo::CollnetDirect) {
    // NCCL_MAX_DIRECT_ARITY + 1 = 8 heads at most (src/include/device.h).
    const uint32_t heads = std::min(nics, 8u);
    const double per_round = 2.0 * nodes * g * heads + 4.0 * nodes * heads;
    const auto rounds = add_rounds(plan, o, heads, per_round);
    Builder b(plan, plan.connection_depth);
    for (uint32_t ch = 0; ch < o.channels; ++ch) {
      for (const uint32_t r : rounds[ch]) {
        // Scatter: every GPU's slice h to head h, added there.
        for (uint32_t v = 0; v < nodes; ++v) {
          for (uint32_t k = 0; k < g; ++k) {
            for (uint32_t h = 0; h < heads; ++h) {
              const uint32_t head = v * g + first_gpu_of_nic(h, g, nics);
              if (v * g + k != head) b.transfer(v * g + k, head, ChunkRange{r + h, 1}, ch, true);
            }
          }
        }
        for (uint32_t h = 0; h < heads; ++h) {
          for (uint32_t v = 0; v < nodes; ++v) head_of[v] = v * g + first_gpu_of_nic(h, g, nics);
          sharp_through_tree(b, o.collnet_trees[h], rank_of, head_of, ChunkRange{r + h, 1}, ch);
          // Broadcast: head h copies the total of slice h to the host's other GPUs.
          for (uint32_t v = 0; v < nodes; ++v) {
            for (uint32_t k = 0; k < g; ++k) {
              if (v * g + k != head_of[v]) {
                b.transfer(head_of[v], v * g + k, ChunkRange{r + h, 1}, ch, false);
              }
            }
          }
        }
      }
    }
    return;
  }
  const auto rounds = add_rounds(plan, o, 1, 2.0 * nodes * g + 4.0 * nodes);
  Builder b(plan, plan.connection_depth);
  for (uint32_t ch = 0; ch < o.channels; ++ch) {
    const uint32_t nic = ch % nics;
    const uint32_t head = first_gpu_of_nic(nic, g, nics);
    for (const uint32_t r : rounds[ch]) {
      const ChunkRange slice{r, 1};
      for (uint32_t v = 0; v < nodes; ++v) {
        // Up the chain: head+1, head+2, ... (mod g) towards the head.
        for (uint32_t i = g - 1; i >= 1; --i) {
          const uint32_t from = v * g + (head + i) % g;
          const uint32_t to = v * g + (head + i - 1) % g;
          b.transfer(from, to, slice, ch, true);
        }
        head_of[v] = v * g + head;
      }
      sharp_through_tree(b, o.collnet_trees[nic], rank_of, head_of, slice, ch);
      for (uint32_t v = 0; v < nodes; ++v) {
        for (uint32_t i = 1; i < g; ++i) {
          b.transfer(v * g + (head + i - 1) % g, v * g + (head + i) % g, slice, ch, false);
        }
      }
    }
  }
}

}  // namespace syncsim::models::plan_detail

#include "models/collective_plan.hpp"

#include "sim/core/huge_pages.hpp"

#include <algorithm>
#include <span>
#include <stdexcept>
#include <unordered_map>
#include <utility>

namespace syncsim::models {

namespace {

constexpr uint32_t kNone = UINT32_MAX;

struct ChunkRange {
  uint32_t first = 0;
  uint32_t count = 0;
};

// `total` bytes in `parts` parts of whole bytes; the remainder goes to the first parts.
std::vector<int64_t> split_bytes(int64_t total, int64_t parts) {
  std::vector<int64_t> out(static_cast<std::size_t>(parts), total / parts);
  for (int64_t i = 0; i < total % parts; ++i) out[static_cast<std::size_t>(i)] += 1;
  return out;
}

int64_t pieces_for(int64_t bytes, int64_t chunk_bytes) {
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
        last_writer_(static_cast<std::size_t>(plan.ranks) * plan.chunk_bytes.size(), kNone) {}

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
    const uint64_t key = (static_cast<uint64_t>(channel) * plan_.ranks + src) * plan_.ranks + dst;
    auto [conn, inserted] = connection_.try_emplace(key, static_cast<uint32_t>(sent_.size()));
    if (inserted) {
      sent_.push_back(0);
      window_.resize(window_.size() + depth_, kNone);
      plan_.connections = static_cast<uint32_t>(sent_.size());
    }
    s.source_step = conn->second;
    // window_ holds the connection's last depth_ transfers, the oldest at sent % depth_.
    uint32_t& oldest = window_[static_cast<std::size_t>(conn->second) * depth_ + sent_[conn->second] % depth_];
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
  std::vector<uint32_t> sent_;    // per connection: transfers so far
  std::vector<uint32_t> window_;  // per connection: its last depth_ transfers (ring)
  std::vector<uint32_t> deps_;  // scratch: the dependencies of the step being added
};

uint32_t mod(int64_t a, uint32_t m) {
  const int64_t mm = static_cast<int64_t>(m);
  return static_cast<uint32_t>(((a % mm) + mm) % mm);
}

// Ring reduce-scatter over `ring` (ranks in ring order): segs[j] are the pieces of segment j. After
// it, position i holds segment (i + 1) mod m fully reduced over the ring.
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

// Ring all-gather: position i starts with segment (i + offset) mod m.
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

// Chunks for `parts` segments of `bytes`, each cut into pipelining pieces; owner of segment j = j.
std::vector<std::vector<ChunkRange>> make_segments(CollectivePlan& plan, int64_t bytes,
                                                   uint32_t parts, int64_t chunk_bytes) {
  std::vector<std::vector<ChunkRange>> segs(parts);
  const auto seg_bytes = split_bytes(bytes, parts);
  // Every segment gets the same number of pieces, so ring steps line up.
  const int64_t pieces = pieces_for(seg_bytes[0], chunk_bytes);
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
    entry = static_cast<uint32_t>((rail * g + nics - 1) / nics);  // first l with floor(l*nics/g) == rail
  }
  std::vector<uint32_t> ring;
  ring.reserve(n);
  for (uint32_t node = 0; node < n / g; ++node) {
    for (uint32_t k = 0; k < g; ++k) ring.push_back(node * g + (entry + k) % g);
  }
  return ring;
}

void build_ring(CollectivePlan& plan, const PlanOptions& o) {
  const uint32_t n = o.ranks;
  const auto channel_bytes = split_bytes(o.bytes, o.channels);
  std::vector<std::vector<std::vector<ChunkRange>>> segs(o.channels);
  const bool chain = o.op == CollectiveOp::Broadcast || o.op == CollectiveOp::Reduce;
  for (uint32_t ch = 0; ch < o.channels; ++ch) {
    segs[ch] = make_segments(plan, channel_bytes[ch], chain ? 1 : n, o.chunk_bytes);
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
      default: throw std::invalid_argument("ring does not implement " + std::string(to_string(o.op)));
    }
  }
}

// A binary tree over `order`: order[0] is the root with one child, the in-order tree of the rest
// (middle element as subtree root). parent[rank] = parent rank or kNone.
struct Tree {
  std::vector<uint32_t> parent;
  std::vector<std::vector<uint32_t>> children;
  std::vector<uint32_t> preorder;
};

uint32_t build_inorder(Tree& t, const std::vector<uint32_t>& order, std::size_t lo, std::size_t hi,
                       uint32_t parent) {
  if (lo >= hi) return kNone;
  const std::size_t mid = lo + (hi - lo) / 2;
  const uint32_t node = order[mid];
  t.parent[node] = parent;
  t.preorder.push_back(node);
  if (parent != kNone) t.children[parent].push_back(node);
  build_inorder(t, order, lo, mid, node);
  build_inorder(t, order, mid + 1, hi, node);
  return node;
}

Tree make_tree(const std::vector<uint32_t>& order) {
  Tree t;
  const std::size_t n = order.size();
  t.parent.assign(n, kNone);
  t.children.assign(n, {});
  t.preorder.push_back(order[0]);
  build_inorder(t, order, 1, n, order[0]);
  return t;
}

void build_tree(CollectivePlan& plan, const PlanOptions& o) {
  const uint32_t n = o.ranks;
  const uint32_t root = o.op == CollectiveOp::AllReduce ? 0 : o.root;
  // Two complementary trees: the second shifts the in-order part by one position, so nodes that are
  // leaves in one tree tend to be interior in the other (NCCL shifts or mirrors similarly).
  std::vector<uint32_t> a{root}, bo{root};
  for (uint32_t i = 1; i < n; ++i) a.push_back((root + i) % n);
  for (uint32_t i = 1; i < n; ++i) bo.push_back((root + 1 + i % (n - 1)) % n);
  const Tree trees[2] = {make_tree(a), make_tree(bo)};
  const auto halves = split_bytes(o.bytes, 2);
  std::vector<std::vector<ChunkRange>> pieces(2);
  for (int t = 0; t < 2; ++t) {
    for (int64_t piece : split_bytes(halves[static_cast<std::size_t>(t)],
                                     pieces_for(halves[0], o.chunk_bytes))) {
      pieces[static_cast<std::size_t>(t)].push_back(ChunkRange{Builder::add_chunk(plan, piece), 1});
    }
  }
  Builder b(plan, o.connection_depth);
  const bool up = o.op != CollectiveOp::Broadcast;
  const bool down = o.op != CollectiveOp::Reduce;
  for (uint32_t t = 0; t < 2; ++t) {
    const Tree& tr = trees[t];
    for (const ChunkRange& piece : pieces[t]) {
      if (up) {  // reverse preorder visits children before parents
        for (auto it = tr.preorder.rbegin(); it != tr.preorder.rend(); ++it) {
          if (tr.parent[*it] != kNone) b.transfer(*it, tr.parent[*it], piece, t, true);
        }
      }
      if (down) {
        for (uint32_t node : tr.preorder) {
          for (uint32_t child : tr.children[node]) b.transfer(node, child, piece, t, false);
        }
      }
    }
  }
}

// Recursive halving-doubling (Rabenseifner) with the standard fold for non-powers of two: ranks
// 0..2e-1 pair up (even sends everything to odd, which reduces), leaving p = 2^floor(log2 n) ranks.
void build_halving_doubling(CollectivePlan& plan, const PlanOptions& o) {
  const uint32_t n = o.ranks;
  uint32_t p = 1;
  while (p * 2 <= n) p *= 2;
  const uint32_t extra = n - p;
  auto rank_of = [&](uint32_t v) { return v < extra ? 2 * v + 1 : v + extra; };
  const bool shards = o.op != CollectiveOp::AllReduce;
  // AllReduce: p equal blocks (the halving splits them evenly). RS/AG: n shards, shard r owned by r.
  const uint32_t nchunks = shards ? n : p;
  for (int64_t bytes : split_bytes(o.bytes, nchunks)) {
    Builder::add_chunk(plan, bytes, static_cast<uint32_t>(plan.chunk_bytes.size()));
  }
  Builder b(plan, o.connection_depth);
  const ChunkRange all{0, nchunks};
  if (o.op == CollectiveOp::AllGather) {
    std::vector<ChunkRange> held(p);
    for (uint32_t v = 0; v < p; ++v) held[v] = v < extra ? ChunkRange{2 * v, 2} : ChunkRange{v + extra, 1};
    for (uint32_t v = 0; v < extra; ++v) b.transfer(2 * v, 2 * v + 1, ChunkRange{2 * v, 1}, 0, false);
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
      next[v] = ChunkRange{std::min(range[v].first, range[w].first), range[v].count + range[w].count};
    }
    range = next;
  }
  for (uint32_t v = 0; v < extra; ++v) b.transfer(2 * v + 1, 2 * v, all, 0, false);
}

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

// ----- verifier -----

bool is_ancestor(const CollectivePlan& plan, uint32_t ancestor, uint32_t step) {
  if (ancestor == kNone) return true;
  std::vector<uint32_t> stack{step};
  std::vector<char> seen(plan.steps.size(), 0);
  while (!stack.empty()) {
    const uint32_t s = stack.back();
    stack.pop_back();
    for (uint32_t d : plan.deps(s)) {
      if (d == ancestor) return true;
      if (d > ancestor && !seen[d]) {
        seen[d] = 1;
        stack.push_back(d);
      }
    }
  }
  return false;
}

}  // namespace

std::string_view to_string(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::AllReduce: return "all_reduce";
    case CollectiveOp::ReduceScatter: return "reduce_scatter";
    case CollectiveOp::AllGather: return "all_gather";
    case CollectiveOp::Broadcast: return "broadcast";
    case CollectiveOp::Reduce: return "reduce";
    case CollectiveOp::AllToAll: return "all_to_all";
    case CollectiveOp::SendRecv: return "send_recv";
  }
  return "?";
}

std::string_view to_string(CollectiveAlgo algo) {
  switch (algo) {
    case CollectiveAlgo::Ring: return "ring";
    case CollectiveAlgo::Tree: return "tree";
    case CollectiveAlgo::HalvingDoubling: return "halving_doubling";
    case CollectiveAlgo::Hierarchical: return "hierarchical";
    case CollectiveAlgo::Pairwise: return "pairwise";
  }
  return "?";
}

CollectiveOp parse_collective_op(std::string_view text) {
  for (auto op : {CollectiveOp::AllReduce, CollectiveOp::ReduceScatter, CollectiveOp::AllGather,
                  CollectiveOp::Broadcast, CollectiveOp::Reduce, CollectiveOp::AllToAll,
                  CollectiveOp::SendRecv}) {
    if (to_string(op) == text) return op;
  }
  throw std::invalid_argument("unknown collective \"" + std::string(text) +
                              "\" (all_reduce, reduce_scatter, all_gather, broadcast, reduce, "
                              "all_to_all, send_recv)");
}

CollectiveAlgo parse_collective_algo(std::string_view text) {
  for (auto a : {CollectiveAlgo::Ring, CollectiveAlgo::Tree, CollectiveAlgo::HalvingDoubling,
                 CollectiveAlgo::Hierarchical, CollectiveAlgo::Pairwise}) {
    if (to_string(a) == text) return a;
  }
  throw std::invalid_argument("unknown algorithm \"" + std::string(text) +
                              "\" (ring, tree, halving_doubling, hierarchical, pairwise)");
}

uint32_t CollectivePlan::add_step(const PlanStep& step, std::span<const uint32_t> step_deps) {
  steps.push_back(step);
  dep_list.insert(dep_list.end(), step_deps.begin(), step_deps.end());
  dep_offsets.push_back(static_cast<uint32_t>(dep_list.size()));
  return static_cast<uint32_t>(steps.size() - 1);
}

std::size_t CollectivePlan::transfer_count() const {
  return static_cast<std::size_t>(std::count_if(steps.begin(), steps.end(), [](const PlanStep& s) {
    return s.kind == PlanStep::Kind::Transfer;
  }));
}

CollectivePlan build_plan(const PlanOptions& o) {
  if (o.ranks < 2) throw std::invalid_argument("a collective needs at least 2 ranks");
  if (o.bytes < 0) throw std::invalid_argument("negative collective size");
  if (o.channels < 1 || o.channels > 60000) throw std::invalid_argument("1 to 60000 channels");
  if (o.root >= o.ranks || o.peer >= o.ranks) throw std::invalid_argument("root/peer out of range");
  CollectivePlan plan;
  plan.op = o.op;
  plan.algo = o.algo;
  plan.ranks = o.ranks;
  plan.root = o.root;
  plan.peer = o.peer;
  plan.bytes = o.bytes;
  plan.connection_depth = std::max(1u, o.connection_depth);
  const auto unsupported = [&] {
    return std::invalid_argument(std::string(to_string(o.algo)) + " does not implement " +
                                 std::string(to_string(o.op)));
  };
  switch (o.algo) {
    case CollectiveAlgo::Ring:
      if (o.op == CollectiveOp::AllToAll || o.op == CollectiveOp::SendRecv) throw unsupported();
      build_ring(plan, o);
      break;
    case CollectiveAlgo::Tree:
      if (o.op != CollectiveOp::AllReduce && o.op != CollectiveOp::Broadcast &&
          o.op != CollectiveOp::Reduce) {
        throw unsupported();
      }
      build_tree(plan, o);
      break;
    case CollectiveAlgo::HalvingDoubling:
      if (o.op != CollectiveOp::AllReduce && o.op != CollectiveOp::ReduceScatter &&
          o.op != CollectiveOp::AllGather) {
        throw unsupported();
      }
      build_halving_doubling(plan, o);
      break;
    case CollectiveAlgo::Hierarchical:
      if (o.op != CollectiveOp::AllReduce) throw unsupported();
      build_hierarchical(plan, o);
      break;
    case CollectiveAlgo::Pairwise:
      if (o.op != CollectiveOp::AllToAll && o.op != CollectiveOp::SendRecv) throw unsupported();
      if (o.op == CollectiveOp::SendRecv && o.root == o.peer) {
        throw std::invalid_argument("send_recv needs two different ranks");
      }
      build_pairwise(plan, o);
      break;
  }
  return plan;
}

PlanCheck verify_plan(const CollectivePlan& plan) {
  const uint32_t n = plan.ranks;
  const std::size_t chunks = plan.chunk_bytes.size();
  using Counts = std::vector<uint32_t>;
  std::vector<Counts> state(static_cast<std::size_t>(n) * chunks, Counts(n, 0));
  auto at = [&](uint32_t rank, std::size_t c) -> Counts& { return state[rank * chunks + c]; };
  auto unit = [&](uint32_t r) {
    Counts v(n, 0);
    v[r] = 1;
    return v;
  };
  const Counts all_ones(n, 1);
  const bool a2a = plan.op == CollectiveOp::AllToAll;
  for (uint32_t r = 0; r < n; ++r) {
    for (std::size_t c = 0; c < chunks; ++c) {
      switch (plan.op) {
        case CollectiveOp::AllReduce:
        case CollectiveOp::ReduceScatter:
        case CollectiveOp::Reduce: at(r, c) = unit(r); break;
        case CollectiveOp::AllGather:
          if (plan.chunk_owner[c] == r) at(r, c) = unit(r);
          break;
        case CollectiveOp::Broadcast:
        case CollectiveOp::SendRecv:
          if (r == plan.root) at(r, c) = unit(r);
          break;
        case CollectiveOp::AllToAll:
          if (c / n == r) at(r, c) = unit(r);
          break;
      }
    }
  }
  auto fail = [](std::string msg) { return PlanCheck{false, std::move(msg)}; };
  if (plan.dep_offsets.size() != plan.steps.size() + 1 || plan.dep_offsets.front() != 0 ||
      plan.dep_offsets.back() != plan.dep_list.size() ||
      !std::is_sorted(plan.dep_offsets.begin(), plan.dep_offsets.end())) {
    return fail("dependency arrays do not match the steps");
  }
  std::vector<uint32_t> writer(static_cast<std::size_t>(n) * chunks, kNone);
  std::unordered_map<uint32_t, std::vector<Counts>> payload;  // reducing transfers -> their data
  for (uint32_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& s = plan.steps[i];
    const std::string where = "step " + std::to_string(i) + ": ";
    for (uint32_t d : plan.deps(i)) {
      if (d >= i) return fail(where + "depends on a later step");
    }
    if (s.src >= n || s.dst >= n) return fail(where + "rank out of range");
    if (s.chunk_first + s.chunk_count > chunks || s.chunk_count == 0) {
      return fail(where + "chunk range out of bounds");
    }
    if (s.kind == PlanStep::Kind::Transfer) {
      if (s.src == s.dst) return fail(where + "transfer to itself");
      std::vector<Counts> data;
      for (uint32_t c = s.chunk_first; c < s.chunk_first + s.chunk_count; ++c) {
        if (!is_ancestor(plan, writer[s.src * chunks + c], i)) {
          return fail(where + "reads chunk " + std::to_string(c) + " of rank " +
                      std::to_string(s.src) + " without depending on its last writer");
        }
        const Counts& v = at(s.src, c);
        if (std::all_of(v.begin(), v.end(), [](uint32_t x) { return x == 0; })) {
          return fail(where + "rank " + std::to_string(s.src) + " sends chunk " +
                      std::to_string(c) + " it does not hold");
        }
        data.push_back(v);
      }
      if (s.reduce) {
        payload[i] = std::move(data);
      } else {
        for (uint32_t c = s.chunk_first; c < s.chunk_first + s.chunk_count; ++c) {
          if (!is_ancestor(plan, writer[s.dst * chunks + c], i)) {
            return fail(where + "overwrites chunk " + std::to_string(c) + " of rank " +
                        std::to_string(s.dst) + " concurrently with its previous writer");
          }
          at(s.dst, c) = data[c - s.chunk_first];
          writer[s.dst * chunks + c] = i;
        }
      }
    } else {
      auto it = payload.find(s.source_step);
      if (it == payload.end()) return fail(where + "reduces data of a step that is not a reducing transfer");
      const PlanStep& t = plan.steps[s.source_step];
      if (t.dst != s.src || t.chunk_first != s.chunk_first || t.chunk_count != s.chunk_count ||
          !is_ancestor(plan, s.source_step, i)) {
        return fail(where + "does not match its transfer");
      }
      for (uint32_t c = s.chunk_first; c < s.chunk_first + s.chunk_count; ++c) {
        if (!is_ancestor(plan, writer[s.src * chunks + c], i)) {
          return fail(where + "reduces into chunk " + std::to_string(c) + " of rank " +
                      std::to_string(s.src) + " concurrently with its previous writer");
        }
        Counts& v = at(s.src, c);
        const Counts& add = it->second[c - s.chunk_first];
        for (uint32_t k = 0; k < n; ++k) v[k] += add[k];
        writer[s.src * chunks + c] = i;
      }
      payload.erase(it);
    }
  }
  auto expect = [&](uint32_t r, std::size_t c, const Counts& want) -> PlanCheck {
    if (at(r, c) == want) return PlanCheck{true, {}};
    std::string got;
    for (uint32_t x : at(r, c)) got += std::to_string(x);
    std::string w;
    for (uint32_t x : want) w += std::to_string(x);
    return fail("rank " + std::to_string(r) + " chunk " + std::to_string(c) + " holds " + got +
                ", expected " + w);
  };
  for (uint32_t r = 0; r < n; ++r) {
    for (std::size_t c = 0; c < chunks; ++c) {
      PlanCheck ck{true, {}};
      switch (plan.op) {
        case CollectiveOp::AllReduce: ck = expect(r, c, all_ones); break;
        case CollectiveOp::ReduceScatter:
          if (plan.chunk_owner[c] == r) ck = expect(r, c, all_ones);
          break;
        case CollectiveOp::AllGather: ck = expect(r, c, unit(plan.chunk_owner[c])); break;
        case CollectiveOp::Broadcast: ck = expect(r, c, unit(plan.root)); break;
        case CollectiveOp::Reduce:
          if (r == plan.root) ck = expect(r, c, all_ones);
          break;
        case CollectiveOp::AllToAll:
          if (a2a && c % n == r) ck = expect(r, c, unit(static_cast<uint32_t>(c / n)));
          break;
        case CollectiveOp::SendRecv:
          if (r == plan.peer) ck = expect(r, c, unit(plan.root));
          break;
      }
      if (!ck.ok) return ck;
    }
  }
  return PlanCheck{true, {}};
}

double bus_bandwidth_factor(CollectiveOp op, uint32_t ranks) {
  const double n = static_cast<double>(ranks);
  switch (op) {
    case CollectiveOp::AllReduce: return 2.0 * (n - 1.0) / n;
    case CollectiveOp::ReduceScatter:
    case CollectiveOp::AllGather:
    case CollectiveOp::AllToAll: return (n - 1.0) / n;
    case CollectiveOp::Broadcast:
    case CollectiveOp::Reduce:
    case CollectiveOp::SendRecv: return 1.0;
  }
  return 1.0;
}

}  // namespace syncsim::models

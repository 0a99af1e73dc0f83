#include "models/chakra_replay.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <memory>
#include <stdexcept>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "models/collective_runner.hpp"
#include "sim/core/simulation.hpp"

namespace syncsim::models {

namespace {

using Interval = std::pair<Time, Time>;

std::string node_text(const ChakraRankTrace& t, const ChakraNode& n) {
  return t.file + ": node " + std::to_string(n.id) + (n.name.empty() ? "" : " (" + n.name + ")");
}

std::string op_text(const ChakraNode& n) {
  return (n.barrier ? std::string("barrier") : std::string(to_string(n.op))) + " of " +
         std::to_string(n.bytes) + " B";
}

// Sorted, merged copy of `v`.
std::vector<Interval> merged(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  std::vector<Interval> out;
  for (const Interval& i : v) {
    if (i.second <= i.first) continue;
    if (!out.empty() && i.first <= out.back().second) {
      out.back().second = std::max(out.back().second, i.second);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

Time length(const std::vector<Interval>& v) {
  Time t = Time::zero();
  for (const Interval& i : v) t += i.second - i.first;
  return t;
}

// Time covered by both merged lists.
Time overlap(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  Time t = Time::zero();
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    const Time lo = std::max(a[i].first, b[j].first);
    const Time hi = std::min(a[i].second, b[j].second);
    if (hi > lo) t += hi - lo;
    (a[i].second < b[j].second) ? ++i : ++j;
  }
  return t;
}

using P2pKey = std::tuple<uint32_t, uint32_t, int64_t>;  // source, destination, tag

class Replay {
 public:
  Replay(TransferBackend& backend, const ChakraTrace& trace, const StepConfig& config)
      : backend_(backend), trace_(trace), config_(config), ranks_(trace.ranks.size()) {
    const auto groups = chakra_groups(trace);
    for (const auto& [name, members] : groups) {
      group_index_[name] = group_members_.size();
      group_members_.push_back(members);
    }
    pending_.resize(group_members_.size());
    result_.groups = groups;
    for (std::size_t r = 0; r < ranks_.size(); ++r) {
      const auto& nodes = trace.ranks[r].nodes;
      RankState& s = ranks_[r];
      s.waiting.assign(nodes.size(), 0);
      s.dependents.resize(nodes.size());
      s.posted.assign(nodes.size(), Time::zero());
      s.done.assign(nodes.size(), false);
      for (std::size_t i = 0; i < nodes.size(); ++i)
        s.index[nodes[i].id] = static_cast<uint32_t>(i);
      for (std::size_t i = 0; i < nodes.size(); ++i) {
        for (const auto* deps : {&nodes[i].ctrl_deps, &nodes[i].data_deps}) {
          for (uint64_t d : *deps) {
            s.dependents[s.index.at(d)].push_back(static_cast<uint32_t>(i));
            ++s.waiting[i];
          }
        }
      }
    }
  }

  ChakraReplayResult run() {
    EventQueue& q = backend_.simulation().queue();
    q.schedule_fn(q.now(), [this] {
      for (std::size_t r = 0; r < ranks_.size(); ++r) {
        for (std::size_t i = 0; i < ranks_[r].waiting.size(); ++i) {
          if (ranks_[r].waiting[i] == 0) ready(static_cast<uint32_t>(r), static_cast<uint32_t>(i));
        }
      }
    });
    q.run();
    for (std::size_t r = 0; r < ranks_.size(); ++r) {
      const RankState& s = ranks_[r];
      for (std::size_t i = 0; i < s.done.size(); ++i) {
        if (s.done[i]) continue;
        const ChakraNode& n = trace_.ranks[r].nodes[i];
        throw std::runtime_error(
            "chakra replay stalled: " + node_text(trace_.ranks[r], n) + " never ran (" +
            (s.waiting[i] > 0 ? std::to_string(s.waiting[i]) + " dependencies unfinished: a cycle?"
                              : std::string("waiting for its peers")) +
            ")");
      }
    }
    for (std::size_t r = 0; r < ranks_.size(); ++r) {
      RankState& s = ranks_[r];
      const auto compute = merged(s.compute);
      const auto comm = merged(s.comm);
      result_.rank_finish.push_back(s.finish);
      result_.rank_compute.push_back(length(compute));
      result_.rank_exposed_comm.push_back(length(comm) - overlap(comm, compute));
      result_.step = std::max(result_.step, s.finish);
    }
    for (const auto& runner : runners_) result_.bytes_sent += runner->result().bytes_sent;
    return result_;
  }

 private:
  struct RankState {
    std::unordered_map<uint64_t, uint32_t> index;
    std::vector<uint32_t> waiting;
    std::vector<std::vector<uint32_t>> dependents;
    std::vector<Time> posted;  // when the node became ready
    std::vector<bool> done;
    std::deque<uint32_t> queue[2];  // ready compute nodes: GPU, CPU
    bool busy[2] = {false, false};
    std::vector<Interval> compute, comm;
    std::map<std::size_t, uint32_t> collectives_reached;  // per group
    Time finish = Time::zero();
  };
  struct Instance {
    std::vector<std::pair<uint32_t, uint32_t>> members;  // (rank, node)
  };
  struct P2pQueues {
    std::deque<uint32_t> sends, recvs;  // node indices on the source / destination rank
  };

  const ChakraNode& node(uint32_t r, uint32_t i) const { return trace_.ranks[r].nodes[i]; }
  Time now() const { return backend_.simulation().now(); }

  void ready(uint32_t r, uint32_t i) {
    RankState& s = ranks_[r];
    s.posted[i] = now();
    const ChakraNode& n = node(r, i);
    switch (n.kind) {
      case ChakraNodeKind::Metadata:
        backend_.simulation().queue().schedule_fn(now(), [this, r, i] { complete(r, i); });
        break;
      case ChakraNodeKind::Compute:
        s.queue[n.cpu ? 1 : 0].push_back(i);
        next_compute(r, n.cpu ? 1 : 0);
        break;
      case ChakraNodeKind::Collective:
        arrive(r, i);
        break;
      case ChakraNodeKind::Send:
      case ChakraNodeKind::Recv:
        post(r, i);
        break;
    }
  }

  void next_compute(uint32_t r, int unit) {
    RankState& s = ranks_[r];
    if (s.busy[unit] || s.queue[unit].empty()) return;
    const uint32_t i = s.queue[unit].front();
    s.queue[unit].pop_front();
    s.busy[unit] = true;
    ++result_.compute_nodes;
    const Time start = now();
    backend_.simulation().queue().schedule_fn(start + node(r, i).duration,
                                              [this, r, i, unit, start] {
                                                ranks_[r].compute.emplace_back(start, now());
                                                ranks_[r].busy[unit] = false;
                                                complete(r, i);
                                                next_compute(r, unit);
                                              });
  }

  void complete(uint32_t r, uint32_t i) {
    RankState& s = ranks_[r];
    s.done[i] = true;
    s.finish = std::max(s.finish, now());
    const ChakraNodeKind k = node(r, i).kind;
    if (k != ChakraNodeKind::Compute && k != ChakraNodeKind::Metadata) {
      s.comm.emplace_back(s.posted[i], now());
    }
    for (uint32_t d : s.dependents[i]) {
      if (--s.waiting[d] == 0) ready(r, d);
    }
  }

  void arrive(uint32_t r, uint32_t i) {
    const ChakraNode& n = node(r, i);
    const std::size_t g = group_index_.at(n.group);
    const uint32_t k = ranks_[r].collectives_reached[g]++;
    Instance& inst = pending_[g][k];
    if (!inst.members.empty()) {
      const ChakraNode& first = node(inst.members.front().first, inst.members.front().second);
      if (first.barrier != n.barrier || first.bytes != n.bytes ||
          (!n.barrier && first.op != n.op)) {
        throw std::runtime_error("chakra replay: collective " + std::to_string(k) +
                                 " of process group '" + n.group + "' is a " + op_text(first) +
                                 " at " +
                                 node_text(trace_.ranks[inst.members.front().first], first) +
                                 " but a " + op_text(n) + " at " + node_text(trace_.ranks[r], n));
      }
    }
    inst.members.emplace_back(r, i);
    if (inst.members.size() < group_members_[g].size()) return;
    std::vector<std::pair<uint32_t, uint32_t>> members = std::move(inst.members);
    pending_[g].erase(k);
    std::sort(members.begin(), members.end());
    ++result_.collectives;
    if (n.barrier || n.bytes == 0 || members.size() < 2) {
      finish_all(members, now());
      return;
    }
    std::vector<uint32_t> gpus;
    for (const auto& m : members) gpus.push_back(config_.rank_to_gpu.at(m.first));
    launch(n.op, n.bytes, std::move(gpus), std::move(members), static_cast<uint32_t>(g));
  }

  void post(uint32_t r, uint32_t i) {
    const ChakraNode& n = node(r, i);
    const bool send = n.kind == ChakraNodeKind::Send;
    const P2pKey key = send ? P2pKey{r, n.peer, n.tag} : P2pKey{n.peer, r, n.tag};
    P2pQueues& q = p2p_[key];
    (send ? q.sends : q.recvs).push_back(i);
    if (q.sends.empty() || q.recvs.empty()) return;
    const auto [src, dst, tag] = key;
    const uint32_t s = q.sends.front();
    const uint32_t d = q.recvs.front();
    q.sends.pop_front();
    q.recvs.pop_front();
    if (node(src, s).bytes != node(dst, d).bytes) {
      throw std::runtime_error("chakra replay: " + node_text(trace_.ranks[src], node(src, s)) +
                               " sends " + std::to_string(node(src, s).bytes) + " B but " +
                               node_text(trace_.ranks[dst], node(dst, d)) + " receives " +
                               std::to_string(node(dst, d).bytes) + " B");
    }
    ++result_.point_to_point;
    std::vector<std::pair<uint32_t, uint32_t>> members = {{src, s}, {dst, d}};
    if (n.bytes == 0) {
      finish_all(members, now());
      return;
    }
    launch(CollectiveOp::SendRecv, n.bytes,
           {config_.rank_to_gpu.at(src), config_.rank_to_gpu.at(dst)}, std::move(members),
           static_cast<uint32_t>(group_members_.size()));
  }

  void finish_all(const std::vector<std::pair<uint32_t, uint32_t>>& members, Time at) {
    backend_.simulation().queue().schedule_fn(at, [this, members] {
      for (const auto& [r, i] : members) complete(r, i);
    });
  }

  // Ranks whose GPUs fill whole hosts in order, as the plans' gpus_per_host assumes.
  bool host_aligned(const std::vector<uint32_t>& gpus) const {
    const uint32_t g = config_.gpus_per_host;
    if (g <= 1 || gpus.size() % g != 0) return g <= 1;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      const uint32_t base = gpus[i - i % g];
      if (base % g != 0 || gpus[i] != base + i % g) return false;
    }
    return true;
  }

  // One collective's plan under the protocol NCCL picks for it (StepProtocols), with that
  // protocol's run options.
  struct PlannedCollective {
    CollectivePlan plan;
    CollectiveRunOptions run;
  };

  const PlannedCollective& plan(CollectiveOp op, int64_t bytes, const std::vector<uint32_t>& gpus) {
    PlanOptions o;
    o.op = op;
    o.ranks = static_cast<uint32_t>(gpus.size());
    o.bytes = bytes;
    o.channels = config_.channels;
    o.gpus_per_host = host_aligned(gpus) ? config_.gpus_per_host : 0;
    o.nics_per_host = config_.nics_per_host;
    const bool pairwise = op == CollectiveOp::SendRecv || op == CollectiveOp::AllToAll;
    o.algo = pairwise ? CollectiveAlgo::Pairwise : config_.algorithm;
    const std::string key = std::string(to_string(op)) + "/" + std::to_string(o.ranks) + "/" +
                            std::to_string(bytes) + "/" + std::to_string(o.gpus_per_host);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
    auto planned = [&] {
      PlannedCollective p;
      p.run = shape_step_collective(config_, step_protocol(config_, op, o.algo, o.ranks, bytes), o);
      p.plan = build_plan(o);
      return p;
    };
    try {
      return plans_.emplace(key, planned()).first->second;
    } catch (const std::invalid_argument&) {
      // The step's algorithm does not run this operation or group (a tree reduce-scatter, NVLS
      // across a partial host): NCCL falls back to its ring, and so does the replay.
      o.algo = CollectiveAlgo::Ring;
      return plans_.emplace(key, planned()).first->second;
    }
  }

  void launch(CollectiveOp op, int64_t bytes, std::vector<uint32_t> gpus,
              std::vector<std::pair<uint32_t, uint32_t>> members, uint32_t communicator) {
    const PlannedCollective& p = plan(op, bytes, gpus);
    CollectiveRunOptions options = p.run;
    // Each process group its own NCCL communicator (queue pairs); group 0 keeps the step's.
    options.communicator = (config_.collective.communicator + communicator) % 65536;
    runners_.push_back(
        std::make_unique<CollectiveRunner>(backend_, p.plan, std::move(gpus), options));
    const bool collective = op != CollectiveOp::SendRecv;
    runners_.back()->start(
        [this, collective, members = std::move(members)](const CollectiveResult& c) {
          if (collective) result_.collective_busy += c.duration();
          for (const auto& [r, i] : members) complete(r, i);
        });
  }

  TransferBackend& backend_;
  const ChakraTrace& trace_;
  const StepConfig& config_;
  std::vector<RankState> ranks_;
  std::map<std::string, std::size_t> group_index_;
  std::vector<std::vector<uint32_t>> group_members_;
  std::vector<std::map<uint32_t, Instance>> pending_;  // per group: occurrence -> arrivals
  std::map<P2pKey, P2pQueues> p2p_;
  std::map<std::string, PlannedCollective> plans_;  // referenced by the runners
  std::vector<std::unique_ptr<CollectiveRunner>> runners_;
  ChakraReplayResult result_;
};

}  // namespace

std::vector<std::pair<std::string, std::vector<uint32_t>>> chakra_groups(const ChakraTrace& trace) {
  std::map<std::string, std::vector<uint32_t>> groups;
  for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
    for (const ChakraNode& n : trace.ranks[r].nodes) {
      if (n.kind != ChakraNodeKind::Collective || n.group.empty()) continue;
      auto& members = groups[n.group];
      if (members.empty() || members.back() != r) members.push_back(static_cast<uint32_t>(r));
    }
  }
  std::vector<uint32_t> all(trace.ranks.size());
  for (std::size_t r = 0; r < all.size(); ++r) all[r] = static_cast<uint32_t>(r);
  std::vector<std::pair<std::string, std::vector<uint32_t>>> out = {{"", all}};
  for (auto& [name, members] : groups) out.emplace_back(name, std::move(members));
  return out;
}

void check_chakra_trace(const ChakraTrace& trace) {
  // Per group, each member's collectives in file order.
  std::map<std::string, std::map<uint32_t, std::vector<const ChakraNode*>>> by_group;
  std::map<P2pKey, std::pair<std::vector<const ChakraNode*>, std::vector<const ChakraNode*>>> p2p;
  for (const auto& [name, members] : chakra_groups(trace)) {
    for (uint32_t m : members) by_group[name][m];
  }
  for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
    const auto rank = static_cast<uint32_t>(r);
    for (const ChakraNode& n : trace.ranks[r].nodes) {
      if (n.kind == ChakraNodeKind::Collective) by_group[n.group][rank].push_back(&n);
      if (n.kind == ChakraNodeKind::Send) p2p[{rank, n.peer, n.tag}].first.push_back(&n);
      if (n.kind == ChakraNodeKind::Recv) p2p[{n.peer, rank, n.tag}].second.push_back(&n);
    }
  }
  for (const auto& [name, members] : by_group) {
    const auto& [r0, first] = *members.begin();
    for (const auto& [r, list] : members) {
      const std::string group = name.empty() ? "every rank" : "process group '" + name + "'";
      if (list.size() != first.size()) {
        throw std::invalid_argument(trace.ranks[r].file + " has " + std::to_string(list.size()) +
                                    " collectives of " + group + ", " + trace.ranks[r0].file +
                                    " has " + std::to_string(first.size()));
      }
      for (std::size_t k = 0; k < list.size(); ++k) {
        const ChakraNode& a = *first[k];
        const ChakraNode& b = *list[k];
        if (a.barrier != b.barrier || a.bytes != b.bytes || (!a.barrier && a.op != b.op)) {
          throw std::invalid_argument("collective " + std::to_string(k) + " of " + group +
                                      " is a " + op_text(a) + " at " +
                                      node_text(trace.ranks[r0], a) + " but a " + op_text(b) +
                                      " at " + node_text(trace.ranks[r], b));
        }
      }
    }
  }
  for (const auto& [key, pair] : p2p) {
    const auto [src, dst, tag] = key;
    if (pair.first.size() != pair.second.size()) {
      throw std::invalid_argument(
          trace.ranks[src].file + " sends " + std::to_string(pair.first.size()) +
          " messages to rank " + std::to_string(dst) + " with comm_tag " + std::to_string(tag) +
          ", " + trace.ranks[dst].file + " receives " + std::to_string(pair.second.size()));
    }
  }
}

std::size_t retime_chakra_compute(ChakraTrace& trace, const GpuSpec& gpu, DType dtype) {
  std::size_t retimed = 0;
  const double flops_per_s = peak_flops(gpu, dtype) * gpu.max_gemm_efficiency;
  for (ChakraRankTrace& rank : trace.ranks) {
    for (ChakraNode& n : rank.nodes) {
      if (n.kind != ChakraNodeKind::Compute || !n.num_ops || n.cpu) continue;
      const double compute = *n.num_ops / flops_per_s;
      const double memory = n.tensor_bytes ? *n.tensor_bytes / gpu.hbm_bytes_per_s : 0.0;
      const double seconds = std::max(compute, memory) + gpu.kernel_launch_s;
      n.duration = Time::ps(std::llround(seconds * 1e12));
      ++retimed;
    }
  }
  return retimed;
}

ChakraReplayResult replay_chakra(TransferBackend& backend, const ChakraTrace& trace,
                                 const StepConfig& config) {
  check_chakra_trace(trace);
  if (config.rank_to_gpu.size() < trace.ranks.size()) {
    throw std::invalid_argument("chakra replay: " + std::to_string(trace.ranks.size()) +
                                " ranks but " + std::to_string(config.rank_to_gpu.size()) +
                                " GPUs placed");
  }
  Replay replay(backend, trace, config);
  return replay.run();
}

}  // namespace syncsim::models

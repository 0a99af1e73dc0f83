// verify_plan: replays a plan symbolically and checks its data flow (see collective_plan.hpp).
#include "models/collective_plan.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "models/collective_plan_builder.hpp"

namespace syncsim::models {

namespace {

using plan_detail::kNone;

// Whether `ancestor` is `step` itself's dependency, transitively (kNone: nothing to depend on).
// One instance per plan: its visit marks are stamped with a number per query, so a query costs
// what it walks, not a pass over every step (a plan of 10^5 steps asks about each of them).
class AncestorQuery {
 public:
  explicit AncestorQuery(const CollectivePlan& plan) : plan_(plan), seen_(plan.steps.size(), 0) {}

  bool operator()(uint32_t ancestor, uint32_t step) {
    if (ancestor == kNone) return true;
    if (++query_ == 0) {  // the stamp wrapped: clear the marks once
      std::fill(seen_.begin(), seen_.end(), 0u);
      query_ = 1;
    }
    stack_.assign(1, step);
    while (!stack_.empty()) {
      const uint32_t s = stack_.back();
      stack_.pop_back();
      for (uint32_t d : plan_.deps(s)) {
        if (d == ancestor) return true;
        if (d > ancestor && seen_[d] != query_) {
          seen_[d] = query_;
          stack_.push_back(d);
        }
      }
    }
    return false;
  }

 private:
  const CollectivePlan& plan_;
  std::vector<uint32_t> seen_;  // seen_[s] == query_: visited in this query
  std::vector<uint32_t> stack_;
  uint32_t query_ = 0;
};

}  // namespace

PlanCheck verify_plan(const CollectivePlan& plan) {
  // Contributions are counted per GPU rank; switch engines (ranks n..) start empty.
  const uint32_t n = plan.ranks;
  const uint32_t all_ranks = plan.total_ranks();
  const std::size_t chunks = plan.chunk_bytes.size();
  using Counts = std::vector<uint32_t>;
  std::vector<Counts> state(static_cast<std::size_t>(all_ranks) * chunks, Counts(n, 0));
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
        case CollectiveOp::Reduce:
          at(r, c) = unit(r);
          break;
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
  std::vector<uint32_t> writer(static_cast<std::size_t>(all_ranks) * chunks, kNone);
  AncestorQuery is_ancestor(plan);
  std::unordered_map<uint32_t, std::vector<Counts>> payload;  // reducing transfers -> their data
  for (uint32_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& s = plan.steps[i];
    // Spelled out only for a failure: a plan of millions of steps passes without one string each.
    const auto where = [i] { return "step " + std::to_string(i) + ": "; };
    for (uint32_t d : plan.deps(i)) {
      if (d >= i) return fail(where() + "depends on a later step");
    }
    if (s.src >= all_ranks || s.dst >= all_ranks) return fail(where() + "rank out of range");
    if (s.chunk_first + s.chunk_count > chunks || s.chunk_count == 0) {
      return fail(where() + "chunk range out of bounds");
    }
    if (s.kind == PlanStep::Kind::Transfer) {
      if (s.src == s.dst) return fail(where() + "transfer to itself");
      for (uint32_t c = s.chunk_first; c < s.chunk_first + s.chunk_count; ++c) {
        if (!is_ancestor(writer[s.src * chunks + c], i)) {
          return fail(where() + "reads chunk " + std::to_string(c) + " of rank " +
                      std::to_string(s.src) + " without depending on its last writer");
        }
        const Counts& v = at(s.src, c);
        if (std::all_of(v.begin(), v.end(), [](uint32_t x) { return x == 0; })) {
          return fail(where() + "rank " + std::to_string(s.src) + " sends chunk " +
                      std::to_string(c) + " it does not hold");
        }
      }
      if (s.reduce) {
        // Kept until its reduction: the sender's chunks may change before then.
        std::vector<Counts>& data = payload[i];
        for (uint32_t c = s.chunk_first; c < s.chunk_first + s.chunk_count; ++c) {
          data.push_back(at(s.src, c));
        }
      } else {
        // Straight from the sender's chunks into the receiver's (two ranks, two buffers).
        for (uint32_t c = s.chunk_first; c < s.chunk_first + s.chunk_count; ++c) {
          if (!is_ancestor(writer[s.dst * chunks + c], i)) {
            return fail(where() + "overwrites chunk " + std::to_string(c) + " of rank " +
                        std::to_string(s.dst) + " concurrently with its previous writer");
          }
          at(s.dst, c) = at(s.src, c);
          writer[s.dst * chunks + c] = i;
        }
      }
    } else {
      auto it = payload.find(s.source_step);
      if (it == payload.end())
        return fail(where() + "reduces data of a step that is not a reducing transfer");
      const PlanStep& t = plan.steps[s.source_step];
      if (t.dst != s.src || t.chunk_first != s.chunk_first || t.chunk_count != s.chunk_count ||
          !is_ancestor(s.source_step, i)) {
        return fail(where() + "does not match its transfer");
      }
      for (uint32_t c = s.chunk_first; c < s.chunk_first + s.chunk_count; ++c) {
        if (!is_ancestor(writer[s.src * chunks + c], i)) {
          return fail(where() + "reduces into chunk " + std::to_string(c) + " of rank " +
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
        case CollectiveOp::AllReduce:
          ck = expect(r, c, all_ones);
          break;
        case CollectiveOp::ReduceScatter:
          if (plan.chunk_owner[c] == r) ck = expect(r, c, all_ones);
          break;
        case CollectiveOp::AllGather:
          ck = expect(r, c, unit(plan.chunk_owner[c]));
          break;
        case CollectiveOp::Broadcast:
          ck = expect(r, c, unit(plan.root));
          break;
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

}  // namespace syncsim::models

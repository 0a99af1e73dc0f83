#include "sim/net/partition_windows.hpp"

#include <algorithm>
#include <bit>

#include "sim/core/check.hpp"
#include "sim/net/fabric_partition.hpp"

namespace syncsim::net {

PartitionWindows::PartitionWindows(EventQueue& global,
                                   std::vector<std::unique_ptr<Partition>>& partitions,
                                   Time lookahead, const FlowTable& flows, unsigned threads,
                                   uint64_t min_window_events_per_thread)
    : global_(global),
      parts_(partitions),
      lookahead_ps_(lookahead.picoseconds()),
      flows_(flows),
      workers_(std::max(1U, std::min<unsigned>(threads, static_cast<unsigned>(partitions.size())))),
      load_(static_cast<uint32_t>(partitions.size()), min_window_events_per_thread),
      window_events_(partitions.size(), 0) {
  SIM_CHECK(lookahead_ps_ > 0, "a windowed run needs a positive lookahead");
  static_assert(kMaxFabricPartitions <= 64, "an outbox summary holds a sender per bit of 64");
  SIM_CHECK(parts_.size() <= kMaxFabricPartitions, "more partitions than the fabric's cap");
  for (std::size_t from = 0; from < parts_.size(); ++from) {
    Partition& sender = *parts_[from];
    sender.queue.keep_clock_history();
    for (std::size_t to = 0; to < parts_.size(); ++to) {
      RemoteOutbox& box = sender.outbox[to];
      box.filling = &filling_;
      box.sender = &sender.posts;
      box.receiver = &parts_[to]->posts;
      box.sender_bit = uint64_t{1} << from;
    }
  }
}

void PartitionWindows::bring_to_now() {
  const Time now = global_.now();
  const bool arrivals = arrivals_pending();
  for (std::size_t i = 0; i < parts_.size(); ++i) {
    // A window ends no later than the next event of the simulation's queue (unless flows are set
    // up ahead), so only a flow started now from a completion's callback, or from an event the
    // window ran past, gets here behind a partition's clock: sooner than the network's reaction
    // (NetworkSpec::Execution::reaction) allows.
    SIM_CHECK(parts_[i]->queue.now() <= now,
              "a flow was started in a partition's past: a completion started it sooner than the "
              "network's reaction");
    if (arrivals) take_in(i);
    parts_[i]->queue.advance_to(now);
  }
}

bool PartitionWindows::arrivals_pending() const {
  for (const auto& p : parts_) {
    if (p->next_posted_ps != INT64_MAX) return true;
  }
  return false;
}

void PartitionWindows::accept_posted(std::size_t i, uint32_t buffer) {
  // By sending partition in index order, from each in the order sent.
  // Packets first, then posted events. Nothing in the buffer was sent before the window that
  // filled it began, so the clock's earlier moves are of no more use.
  EventQueue& queue = parts_[i]->queue;
  queue.forget_clock_history_before(Time::ps(buffer_window_start_ps_[buffer]));
  // The senders that posted into this buffer, in index order (their bits, lowest first).
  const uint64_t senders =
      parts_[i]->posts.posted_by[buffer].exchange(0, std::memory_order_relaxed);
  if (senders == 0) return;
  // Arrivals and events of one instant that were sent at the same picosecond (so schedule_as_of
  // gives them the same sequence number) run in the order taken in here, not by which payload slot
  // each happened to get: a slot comes free whenever an event runs, so its number follows the
  // partition's history. Ordered by slot, such ties went to no sender in particular, and
  // synchronised senders lost packets in other places than on one queue (a TCP incast: 3x the fast
  // retransmits, 1/8 of the timeouts); in the order taken in, they go the way one queue sends them.
  // The outbox to `i` of the lowest sender left in `bits`.
  auto box_of = [&](uint64_t bits) -> RemoteOutbox& {
    return parts_[static_cast<std::size_t>(std::countr_zero(bits))]->outbox[i];
  };
  std::size_t batch = 0;
  for (uint64_t bits = senders; bits != 0; bits &= bits - 1) {
    const RemoteOutbox& box = box_of(bits);
    batch += box.buffers[buffer].size() + box.events[buffer].size();
  }
  queue.order_next_slots(batch);
  for (uint64_t bits = senders; bits != 0; bits &= bits - 1) {
    RemoteOutbox& box = box_of(bits);
    for (const RemoteArrival& a : box.buffers[buffer]) a.link->accept(a);
    for (const PostedEvent& e : box.events[buffer]) {
      queue.schedule_as_of(Time::ps(e.at_ps), Time::ps(e.sent_ps), e.target, e.kind, e.arg);
    }
    box.clear(buffer);
  }
}

void PartitionWindows::take_in(std::size_t i) {
  accept_posted(i, filled_);
  // Taken in by every partition in turn: nothing is left posted once the last one has.
  if (i + 1 == parts_.size()) {
    for (auto& p : parts_) p->next_posted_ps = INT64_MAX;
  }
}

void PartitionWindows::wake() { schedule_window(global_.now().picoseconds()); }

void PartitionWindows::schedule_window(int64_t at_ps) {
  if (window_at_ps_ <= at_ps) return;  // an earlier (or the same) window is pending already
  window_token_.cancel_pending();
  window_at_ps_ = at_ps;
  global_.schedule(Time::ps(at_ps), this, kWindow, 0, &window_token_);
}

void PartitionWindows::on_event(uint32_t kind, uint64_t arg) {
  if (kind == kWindow) {
    window();
  } else if (kind == kCompletion) {
    const auto id = static_cast<FlowId>(arg);
    if (FlowCompletionHandler* handler = flows_.completion_handler()) {
      handler->on_flow_complete(id, flows_[id]);
    }
  }
  // kClock: nothing to do; it brings the simulation's clock to the partitions' last event.
}

void PartitionWindows::window() {
  window_at_ps_ = INT64_MAX;
  const int64_t start = global_.now().picoseconds();
  // Up to the lookahead, and never past the next event outside the partitions.
  const int64_t next_global =
      bounded_by_global_ ? global_.next_event_time().picoseconds() : INT64_MAX;
  const int64_t end =
      std::min({next_global, start > INT64_MAX - lookahead_ps_ ? INT64_MAX : start + lookahead_ps_,
                std::max(limit_ps_, start + 1)});
  if (end > start) {
    run_window(end);
    if (listener_ != nullptr) listener_->after_window();
  } else {
    // Something outside the partitions runs first at this instant: what is pending now.
    for (auto& p : parts_) p->next_event_ps = p->queue.next_event_time().picoseconds();
  }

  // The flows completed in the window, to their callbacks at their finish times: in time order,
  // ties by partition and, within one, in the order they completed.
  due_.clear();
  for (auto& p : parts_) {
    due_.insert(due_.end(), p->completions.begin(), p->completions.end());
    p->completions.clear();
  }
  std::stable_sort(due_.begin(), due_.end(),
                   [](const DeferredCompletion& a, const DeferredCompletion& b) {
                     return a.finish_ps < b.finish_ps;
                   });
  for (const DeferredCompletion& d : due_) {
    global_.schedule(Time::ps(d.finish_ps), this, kCompletion, d.flow);
  }

  int64_t next = INT64_MAX;
  int64_t last = start;
  for (auto& p : parts_) {
    next = std::min({next, p->next_event_ps, p->next_posted_ps});
    last = std::max(last, p->last_event_ps);
  }
  if (next != INT64_MAX) {
    schedule_window(next);
  } else if (last > start) {
    // Idle until something starts a flow: the simulation's clock ends where the partitions did.
    global_.schedule(Time::ps(last), this, kClock);
  }
}

void PartitionWindows::run_window(int64_t end_ps) {
  ++windows_;
  const uint32_t taking = filled_;
  const uint32_t filling = 1 - taking;
  filling_ = filling;
  buffer_window_start_ps_[filling] = global_.now().picoseconds();
  const Time last_inside = Time::ps(end_ps - 1);
  // A window expected to hold few events runs on fewer threads, or on this one alone
  // (window_load.hpp).
  const unsigned threads = load_.threads_for_window(workers_.threads());
  if (threads > 1) ++threaded_windows_;
  workers_.run(
      parts_.size(),
      [&](std::size_t i) {
        Partition& p = *parts_[i];
        p.posts.sender_earliest_ps[filling] = INT64_MAX;  // the buffer was taken in a window ago
        accept_posted(i, taking);  // what the others sent it in the window before
        p.window_events = p.queue.run(last_inside);
        if (p.window_events > 0) p.last_event_ps = p.queue.now().picoseconds();
        p.queue.advance_to(Time::ps(end_ps));
        p.next_event_ps = p.queue.next_event_time().picoseconds();
        p.next_posted_ps = p.posts.sender_earliest_ps[filling];
      },
      /*pinned=*/true, threads);
  filled_ = filling;
  for (std::size_t i = 0; i < parts_.size(); ++i) window_events_[i] = parts_[i]->window_events;
  load_.add_window(window_events_);
}

uint64_t PartitionWindows::events() const {
  uint64_t n = 0;
  for (const auto& p : parts_) n += p->queue.executed();
  return n;
}

}  // namespace syncsim::net

#include "models/traffic_injector.hpp"

#include <algorithm>

namespace syncsim::models {

TrafficInjector::TrafficInjector(TransferBackend& backend, std::vector<MessageSpec> messages)
    : backend_(backend), messages_(std::move(messages)), outcomes_(messages_.size()) {
  std::stable_sort(messages_.begin(), messages_.end(),
                   [](const auto& a, const auto& b) { return a.start < b.start; });
  for (std::size_t k = 0; k < messages_.size(); ++k) {
    outcomes_[k].traffic_entry = messages_[k].traffic_entry;
    outcomes_[k].size_bytes = messages_[k].size.count();
  }
  if (backend_.starts_ahead()) lead_ = backend_.execution().window;
  if (lead_ > Time::zero()) {
    hand_over();
  } else if (!messages_.empty()) {
    backend_.simulation().queue().schedule(messages_[0].start, this, 0);
  }
}

void TrafficInjector::start(std::size_t k) {
  const auto& m = messages_[k];
  TransferRequest request{m.src_gpu, m.dst_gpu, m.size, m.priority};
  request.start_at = m.start;
  backend_.start(request, [this, k](TransferId, const TransferRecord& rec) {
    outcomes_[k].done = true;
    outcomes_[k].fct_s = (rec.finish - rec.start).seconds();
  });
}

void TrafficInjector::hand_over() {
  // The partitions run at most one window past the simulation's clock, so a message handed over
  // a window ahead (or at the start, before anything ran) starts in none's past. Without a lead
  // each message starts at its own time, from this event.
  const Time now = backend_.simulation().now();
  while (next_ < messages_.size() && messages_[next_].start - lead_ <= now) start(next_++);
  if (next_ < messages_.size()) {
    backend_.simulation().queue().schedule(messages_[next_].start - lead_, this, 0);
  }
}

void TrafficInjector::on_event(uint32_t /*kind*/, uint64_t /*arg*/) { hand_over(); }

}  // namespace syncsim::models

#pragma once
// Starts a list of messages on a backend, each at its start time: messages sorted by start, one
// pending event at a time (so a million messages cost one queue entry, not a million). Keeps each
// message's outcome (its traffic entry, size, completion) for per-entry fairness. On a backend that
// sets transfers up ahead (a partitioned packet fabric whose windows do not stop at the
// simulation's events, TransferBackend::starts_ahead) each message is handed over a window before
// its start (BackendExecution::window), to start then in its source's partition.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/traffic.hpp"
#include "sim/backends/transfer_backend.hpp"
#include "sim/core/event_queue.hpp"

namespace syncsim::models {

class TrafficInjector final : public EventTarget {
 public:
  struct Outcome {
    uint32_t traffic_entry = 0;
    int64_t size_bytes = 0;
    bool done = false;
    double fct_s = 0;
  };
  // Schedules the first start on `backend`'s simulation; the backend must outlive the injector's
  // events (run the simulation while both exist).
  TrafficInjector(TransferBackend& backend, std::vector<MessageSpec> messages);
  void on_event(uint32_t kind, uint64_t arg) override;
  // In start order (a stable sort of the given messages by start time).
  const std::vector<Outcome>& outcomes() const { return outcomes_; }

 private:
  // Starts (or hands over) every message due by now + lead_, then schedules the next hand-over.
  void hand_over();
  void start(std::size_t k);

  TransferBackend& backend_;
  Time lead_ = Time::zero();  // how long before its start a message is handed over
  std::vector<MessageSpec> messages_;
  std::vector<Outcome> outcomes_;  // in start order, as messages_
  std::size_t next_ = 0;
};

}  // namespace syncsim::models

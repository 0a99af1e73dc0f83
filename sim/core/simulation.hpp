#pragma once
// A Simulation is a value: its own clock, event queue and seed. Nothing is global, so two
// simulations can run side by side in one process (the determinism tests rely on it).
#include <cstdint>

#include "sim/core/event_queue.hpp"
#include "sim/core/rng.hpp"

namespace syncsim {

// Stream ids for RngStream, one per component family; a component adds its own index.
enum class RngStreamKind : uint64_t { Traffic = 1, Ecmp = 2, Jitter = 3, Compute = 4, Ecn = 5 };

class Simulation {
 public:
  explicit Simulation(uint64_t seed) : seed_(seed) {}
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  EventQueue& queue() { return queue_; }
  const EventQueue& queue() const { return queue_; }
  Time now() const { return queue_.now(); }
  uint64_t seed() const { return seed_; }
  RngStream rng(RngStreamKind kind, uint64_t index = 0) const {
    return RngStream(seed_, mix64(static_cast<uint64_t>(kind), index));
  }

 private:
  uint64_t seed_;
  EventQueue queue_;
};

}  // namespace syncsim

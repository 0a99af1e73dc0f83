#pragma once
// Fixtures shared by the event-driven model-parallel step's tests: a layout's step config, one
// event-driven step (with optional background traffic on the same fabric), relative differences.
#include <cstdint>
#include <memory>
#include <vector>

#include "models/model_parallel_step.hpp"
#include "models/traffic_injector.hpp"
#include "sim/backends/make_backend.hpp"
#include "step_fixtures.hpp"

namespace syncsim::model_parallel_fixtures {

// `model` on `ranks` H100s (rank r on GPU r, 8 per host), `layout`, `m` micro-batches.
inline models::StepConfig layout_config(const char* model, uint32_t ranks,
                                        models::ParallelLayout layout, uint32_t m) {
  models::StepConfig c = step_fixtures::step_config(model, ranks);
  c.layout = layout;
  c.gpus_per_host = 8;
  c.grad_accumulation = m;
  return c;
}

inline models::StepResult event_step(const net::NetworkSpec& spec, Fidelity fidelity,
                                     const models::StepConfig& c,
                                     const std::vector<models::MessageSpec>& background = {}) {
  Simulation sim(c.seed);
  auto backend = make_backend(fidelity, sim, spec);
  std::unique_ptr<models::TrafficInjector> traffic;
  if (!background.empty()) {
    traffic = std::make_unique<models::TrafficInjector>(*backend, background);
  }
  return models::simulate_model_parallel_step(*backend, spec, fidelity, c);
}

// (a - b) / b.
inline double relative(Time a, Time b) { return (a.seconds() - b.seconds()) / b.seconds(); }

}  // namespace syncsim::model_parallel_fixtures

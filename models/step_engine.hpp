#pragma once
// A training step that starts at the simulation's current time on a backend that other work may
// share: one job's consecutive steps, or several jobs' steps on one fabric, all in one event queue.
// simulate_ddp_step and simulate_fsdp_step are one such step begun at time zero and run to the end
// of the queue; the multi-job runner (run/multi_job.hpp) begins each job's next step when its
// previous one ends.
#include <functional>
#include <memory>

#include "models/step_sim.hpp"
#include "sim/backends/fidelity.hpp"
#include "sim/backends/transfer_backend.hpp"
#include "sim/net/network_spec.hpp"

namespace syncsim::models {

class StepEngine {
 public:
  virtual ~StepEngine() = default;
  StepEngine() = default;
  StepEngine(const StepEngine&) = delete;
  StepEngine& operator=(const StepEngine&) = delete;

  // Starts a step at the simulation's current time. `done`, when set, runs in an event at the
  // step's end (its optimizer finished). The engine reads its StepConfig at each begin(), so a
  // caller may change the seed between steps. Only one step runs at a time per engine.
  virtual void begin(std::function<void()> done) = 0;
  // The step begun last, once its events have run; times relative to its begin().
  virtual StepResult result() = 0;
  // Whether the step's collectives run on the shared backend (event-driven engines with live
  // collectives); false when their times come from an idle fabric (closed forms, reused timings).
  virtual bool loads_fabric() const = 0;
};

// The engine for `config`: event-driven DDP or FSDP, or the closed form of a model-parallel layout
// (or the distributed optimizer), which times its collectives on an idle copy of the fabric and
// takes its step time at begin(). `backend`, `spec` and `config` must outlive the engine.
std::unique_ptr<StepEngine> make_step_engine(TransferBackend& backend, const net::NetworkSpec& spec,
                                             Fidelity fidelity, const StepConfig& config);

// Begins one step at the current time with no completion callback and runs `backend`'s queue to
// its end (simulate_ddp_step, simulate_fsdp_step).
StepResult run_step_to_end(StepEngine& engine, TransferBackend& backend);

// The event-driven engines (step_sim.cpp, fsdp.cpp).
std::unique_ptr<StepEngine> make_ddp_step_engine(TransferBackend& backend,
                                                 const net::NetworkSpec& spec, Fidelity fidelity,
                                                 const StepConfig& config);
std::unique_ptr<StepEngine> make_fsdp_step_engine(TransferBackend& backend,
                                                  const net::NetworkSpec& spec, Fidelity fidelity,
                                                  const StepConfig& config);

}  // namespace syncsim::models

#include "models/step_engine.hpp"

#include <optional>
#include <utility>

#include "models/model_parallel_step.hpp"
#include "models/parallelism.hpp"
#include "sim/core/simulation.hpp"

namespace syncsim::models {

namespace {

// A model-parallel layout (or the distributed optimizer): the closed form times its collectives on
// idle copies of the fabric (simulate_parallel_step), so its step neither loads the shared fabric
// nor feels what else runs there. Every step takes the first step's time.
class ClosedFormStepEngine final : public StepEngine {
 public:
  ClosedFormStepEngine(TransferBackend& backend, const net::NetworkSpec& spec, Fidelity fidelity,
                       const StepConfig& config)
      : backend_(backend), spec_(spec), fidelity_(fidelity), config_(config) {}

  bool loads_fabric() const override { return false; }

  void begin(std::function<void()> done) override {
    if (!step_) step_ = simulate_parallel_step(spec_, fidelity_, config_);
    if (done)
      backend_.simulation().queue().schedule_fn(backend_.simulation().now() + step_->step,
                                                std::move(done));
  }

  StepResult result() override { return *step_; }

 private:
  TransferBackend& backend_;
  const net::NetworkSpec& spec_;
  Fidelity fidelity_;
  const StepConfig& config_;
  std::optional<StepResult> step_;
};

}  // namespace

StepResult run_step_to_end(StepEngine& engine, TransferBackend& backend) {
  engine.begin(nullptr);
  backend.simulation().queue().run();
  return engine.result();
}

std::unique_ptr<StepEngine> make_step_engine(TransferBackend& backend, const net::NetworkSpec& spec,
                                             Fidelity fidelity, const StepConfig& config) {
  if (config.layout.model_parallel() || config.layout.distributed_optimizer ||
      is_moe(config.model)) {
    if (config.model_parallel_event_driven && !model_parallel_step_refusal(config)) {
      return make_model_parallel_step_engine(backend, spec, fidelity, config);
    }
    return std::make_unique<ClosedFormStepEngine>(backend, spec, fidelity, config);
  }
  if (config.parallelism == DataParallelism::Fsdp) {
    return make_fsdp_step_engine(backend, spec, fidelity, config);
  }
  return make_ddp_step_engine(backend, spec, fidelity, config);
}

}  // namespace syncsim::models

#include "run/chakra_run.hpp"

#include <algorithm>
#include <numeric>

#include "models/nccl_setup.hpp"
#include "models/step_reaction.hpp"

namespace syncsim::app {

namespace {

// The NCCL setup the replay's collectives run with, on NCCL's channels over its ranks (`channels`).
models::StepConfig chakra_step_config(const Scenario& scenario,
                                      const models::NcclChannels& channels) {
  const ChakraWorkloadSpec& c = *scenario.chakra;
  models::StepConfig step;
  // Rank r on the fabric's r-th GPU, as a DDP workload's ranks are placed by default.
  step.rank_to_gpu.resize(c.ranks);
  std::iota(step.rank_to_gpu.begin(), step.rank_to_gpu.end(), 0u);
  step.gpus_per_host = scenario.fabric.host.gpus;
  step.nics_per_host = scenario.fabric.host.nics;
  step.seed = scenario.seed;
  // collective.algorithm where the scenario names one, else NCCL's ring (the DDP default).
  step.algorithm = scenario.collective.algorithm.value_or(models::CollectiveAlgo::Ring);
  models::apply_nccl_step_setup(step, scenario.collective, channels);
  return step;
}

}  // namespace

Time chakra_reaction(const Scenario& scenario, const net::NetworkSpec& spec) {
  const models::StepConfig step =
      chakra_step_config(scenario, scenario_nccl_channels(scenario, scenario.chakra->ranks));
  return models::step_reaction(step, spec);
}

void run_chakra_workload(const Scenario& scenario, TransferBackend& backend, RunResult& r) {
  const ChakraWorkloadSpec& c = *scenario.chakra;
  r.step_channels = scenario_nccl_channels(scenario, c.ranks);
  const models::StepConfig step = chakra_step_config(scenario, r.step_channels);

  ChakraRun run;
  run.path = c.path;
  run.ranks = c.ranks;
  run.retimed_nodes = c.retimed_nodes;
  run.replay = models::replay_chakra(backend, c.trace, step);

  // The usual step keys: the step is the slowest rank's; its compute and exposed communication
  // stand for the breakdown (the trace has no forward/backward/optimizer phases to name).
  const models::ChakraReplayResult& rep = run.replay;
  models::StepResult st;
  st.engine = "chakra_replay";
  st.step = rep.step;
  const auto slowest = static_cast<std::size_t>(
      std::max_element(rep.rank_finish.begin(), rep.rank_finish.end()) - rep.rank_finish.begin());
  if (!rep.rank_finish.empty()) {
    st.forward = rep.rank_compute[slowest];
    st.exposed_comm = rep.rank_exposed_comm[slowest];
  }
  st.sync = rep.collective_busy;
  st.bytes_per_gpu = c.ranks > 0 ? rep.bytes_sent / c.ranks : 0;
  st.data_parallel = c.ranks;
  st.gpu_memory_bytes = c.gpu.memory_bytes;
  r.step = std::move(st);
  r.chakra = std::move(run);
}

}  // namespace syncsim::app

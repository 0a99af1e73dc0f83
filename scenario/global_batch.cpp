// `workload.global_batch`: the batch real recipes state (Megatron's --global-batch-size,
// torchtitan's global batch, the Llama 3 paper's "batch size"), turned into the micro-batches per
// step that the step model runs: global_batch = micro_batch x grad_accumulation x data-parallel
// replicas, where the replicas are the GPUs over tensor x context x pipeline parallelism
// (context-parallel ranks share their sequences, as in Megatron).
#include <cstdint>
#include <exception>
#include <string>

#include "scenario/scenario.hpp"

#include "scenario/section_readers.hpp"
#include "topologies/fabric_builder.hpp"

namespace syncsim::app::yaml_reader {

namespace {

// One workload at `path`; `gpus` is what data_parallel 0 fills (0: unknown, validate() reports).
void resolve_workload_batch(const Reader& in, WorkloadSpec& w, const std::string& path,
                            uint64_t gpus) {
  if (!w.global_batch) return;
  const models::ParallelLayout& lay = w.step.layout;
  const uint64_t model_parallel = uint64_t{lay.tensor} * lay.context * lay.pipeline;
  uint64_t replicas = w.data_parallel;
  if (replicas == 0) {
    if (gpus == 0 || model_parallel == 0 || gpus % model_parallel != 0) return;  // validate()
    replicas = gpus / model_parallel;
  }
  const auto micro_batch = static_cast<uint64_t>(w.step.compute.micro_batch);
  const uint64_t per_pass = micro_batch * replicas;
  const uint64_t global = *w.global_batch;
  const std::string shape = "micro_batch x data-parallel replicas (" + std::to_string(micro_batch) +
                            " x " + std::to_string(replicas) + " = " + std::to_string(per_pass) +
                            ")";
  if (per_pass == 0 || global % per_pass != 0) {
    in.fail_path(path + ".global_batch",
                 "expected a multiple of " + shape + ", got " + std::to_string(global));
  }
  const auto accumulation = static_cast<uint32_t>(global / per_pass);
  if (in.has(path + ".grad_accumulation") && w.step.grad_accumulation != accumulation) {
    in.warn(path + ".grad_accumulation", std::to_string(w.step.grad_accumulation) +
                                             " is replaced by global_batch / " + shape + " = " +
                                             std::to_string(accumulation));
  }
  w.step.grad_accumulation = accumulation;
}

}  // namespace

void resolve_global_batch(const Reader& in, Scenario& scenario) {
  uint64_t gpus = 0;
  try {
    gpus = topo::fabric_size(scenario.fabric).gpus;
  } catch (const std::exception&) {
    return;  // validate() reports the fabric's own error
  }
  if (scenario.workload) resolve_workload_batch(in, *scenario.workload, "workload", gpus);
  for (std::size_t i = 0; i < scenario.jobs.size(); ++i) {
    JobSpec& job = scenario.jobs[i];
    // A job without data_parallel fills its listed hosts.
    const uint64_t job_gpus = uint64_t{scenario.fabric.host.gpus} * job.hosts.size();
    resolve_workload_batch(in, job.workload, join_path(join_path("jobs", i), "workload"), job_gpus);
  }
}

}  // namespace syncsim::app::yaml_reader

#include "run/multi_job.hpp"

#include <algorithm>
#include <memory>
#include <set>
#include <stdexcept>

#include "models/nccl_setup.hpp"
#include "models/step_engine.hpp"
#include "models/step_reaction.hpp"
#include "run/runner.hpp"
#include "sim/backends/make_backend.hpp"
#include "sim/core/rng.hpp"
#include "sim/core/simulation.hpp"
#include "topologies/placement.hpp"

namespace syncsim::app {

namespace {

uint32_t model_parallel_of(const WorkloadSpec& w) {
  const models::ParallelLayout& l = w.step.layout;
  return l.tensor * l.context * l.pipeline;
}

// One job's step configuration on its GPUs, as run_scenario sets up a single workload's.
models::StepConfig job_step_config(const Scenario& scenario, const net::NetworkSpec& spec,
                                   const JobSpec& job, std::vector<uint32_t> rank_to_gpu,
                                   const FaultRun* faults) {
  models::StepConfig step = job.workload.step;
  step.rank_to_gpu = std::move(rank_to_gpu);
  step.gpus_per_host = scenario.fabric.host.gpus;
  step.seed = scenario.seed;
  step.nics_per_host = scenario.fabric.host.nics;
  set_collnet_trees(step, scenario, spec);
  const auto ranks = static_cast<uint32_t>(step.rank_to_gpu.size());
  models::apply_nccl_step_setup(step, scenario.collective, scenario_nccl_channels(scenario, ranks));
  // Jobs share the fabric: their collectives run live unless the scenario says otherwise.
  step.reuse_bucket_timings = job.workload.reuse_bucket_timings.value_or(false);
  if (faults != nullptr) {
    std::vector<std::string> ignored;  // a straggler GPU may belong to another job
    faults->apply_to_step(step, ignored, false);
  }
  // Model-parallel jobs run event by event on the shared fabric unless their collectives reuse
  // idle-fabric timings or the scenario asks for the closed form.
  step.model_parallel_event_driven =
      job.workload.event_driven_layouts.value_or(!step.reuse_bucket_timings);
  return step;
}

// A job's steps on a backend: each step begins when the previous one ends.
struct JobSteps {
  const JobSpec* job = nullptr;
  std::unique_ptr<models::StepConfig> config;  // engines hold it by reference
  std::unique_ptr<models::StepEngine> engine;
  uint64_t base_seed = 0;
  std::vector<models::StepResult> steps;
  std::vector<Time> begins;
  Time end = Time::zero();

  void begin_step(Simulation& sim) {
    // Step k draws its compute noise from its own seed; step 0 keeps the scenario's.
    config->seed = steps.empty() ? base_seed : mix64(base_seed, steps.size());
    begins.push_back(sim.now());
    engine->begin([this, &sim] {
      steps.push_back(engine->result());
      end = sim.now();
      if (steps.size() < job->steps) begin_step(sim);
    });
  }
};

std::vector<JobSteps> start_jobs(const Scenario& scenario, const net::NetworkSpec& spec,
                                 TransferBackend& backend,
                                 const std::vector<std::vector<uint32_t>>& placement,
                                 const std::vector<std::size_t>& which, const FaultRun* faults) {
  std::vector<JobSteps> jobs(which.size());
  Simulation& sim = backend.simulation();
  for (std::size_t k = 0; k < which.size(); ++k) {
    const JobSpec& spec_job = scenario.jobs[which[k]];
    JobSteps& j = jobs[k];
    j.job = &spec_job;
    j.config = std::make_unique<models::StepConfig>(
        job_step_config(scenario, spec, spec_job, placement[which[k]], faults));
    j.base_seed = scenario.seed;
    j.engine = models::make_step_engine(backend, spec, scenario.fidelity, *j.config);
  }
  for (JobSteps& j : jobs) {
    sim.queue().schedule_fn(j.job->start, [&j, &sim] { j.begin_step(sim); });
  }
  return jobs;
}

double mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
}

}  // namespace

std::vector<std::vector<uint32_t>> place_jobs(const Scenario& scenario,
                                              const net::NetworkSpec& spec) {
  const auto gpus = static_cast<uint32_t>(spec.gpus.size());
  std::vector<bool> taken(gpus, false);
  std::vector<std::vector<uint32_t>> placed;
  for (const JobSpec& job : scenario.jobs) {
    std::vector<uint32_t> candidates;
    if (!job.hosts.empty()) {
      for (uint32_t h : job.hosts) {
        for (uint32_t g = 0; g < gpus; ++g) {
          if (spec.gpus[g].host == h) candidates.push_back(g);
        }
      }
    } else if (model_parallel_of(job.workload) > 1) {
      // Megatron order on consecutive GPUs (topologies/placement.hpp): the free GPUs in order.
      for (uint32_t g = 0; g < gpus; ++g) candidates.push_back(g);
    } else {
      candidates = topo::place_ranks(spec, gpus, job.workload.placement, scenario.seed);
    }
    const uint32_t mp = model_parallel_of(job.workload);
    std::vector<uint32_t> free;
    for (uint32_t g : candidates) {
      if (!taken[g]) free.push_back(g);
    }
    const uint32_t ranks = job.workload.data_parallel == 0
                               ? static_cast<uint32_t>(free.size()) / mp * mp
                               : job.workload.data_parallel * mp;
    if (ranks == 0 || ranks > free.size()) {
      throw std::invalid_argument("job " + job.name + " needs " + std::to_string(ranks) +
                                  " GPUs; " + std::to_string(free.size()) +
                                  " are free where it may run");
    }
    free.resize(ranks);
    for (uint32_t g : free) taken[g] = true;
    placed.push_back(std::move(free));
  }
  return placed;
}

Time jobs_reaction(const Scenario& scenario, const net::NetworkSpec& spec, const FaultRun* faults) {
  const std::vector<std::vector<uint32_t>> placement = place_jobs(scenario, spec);
  Time least = Time::max();
  for (std::size_t i = 0; i < scenario.jobs.size(); ++i) {
    const models::StepConfig step =
        job_step_config(scenario, spec, scenario.jobs[i], placement[i], faults);
    least = std::min(least, models::step_reaction(step, spec));
  }
  return least == Time::max() ? Time::zero() : least;
}

std::vector<JobRun> run_jobs(const Scenario& scenario, const net::NetworkSpec& spec,
                             TransferBackend& backend, std::vector<std::string>& warnings,
                             const FaultRun* faults) {
  const std::vector<std::vector<uint32_t>> placement = place_jobs(scenario, spec);
  std::vector<std::size_t> all(scenario.jobs.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  std::vector<JobSteps> jobs = start_jobs(scenario, spec, backend, placement, all, faults);
  backend.simulation().queue().run();

  if (scenario.fidelity == Fidelity::Analytic) {
    warnings.push_back(
        "jobs: at analytic fidelity every transfer is timed on an idle path, so jobs do not slow "
        "each other; use fidelity flow or packet for their contention");
  }
  std::vector<JobRun> out;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const JobSteps& j = jobs[i];
    JobRun run;
    run.name = j.job->name;
    run.ranks = static_cast<uint32_t>(placement[i].size());
    std::set<uint32_t> hosts;
    for (uint32_t g : placement[i]) hosts.insert(spec.gpus[g].host);
    run.hosts.assign(hosts.begin(), hosts.end());
    run.loads_fabric = j.engine->loads_fabric();
    if (j.steps.size() != j.job->steps) {
      throw std::logic_error("job " + run.name + " did not finish its steps");
    }
    run.engine = j.steps.front().engine;
    run.start_s = j.job->start.seconds();
    run.end_s = j.end.seconds();
    std::vector<double> exposed;
    double mfu_sum = 0;
    for (Time t : j.begins) run.step_starts_s.push_back(t.seconds());
    for (const models::StepResult& s : j.steps) {
      run.step_times_s.push_back(s.step.seconds());
      exposed.push_back(s.exposed_comm.seconds());
      // MFU is inversely proportional to the step time: the mean step's MFU is the steps' model
      // FLOPs over their summed time.
      mfu_sum += s.mfu * s.step.seconds();
    }
    run.step_time_s = mean(run.step_times_s);
    run.exposed_comm_s = mean(exposed);
    run.mfu = mfu_sum / (run.step_time_s * static_cast<double>(j.steps.size()));
    if (!run.loads_fabric) {
      warnings.push_back(
          "jobs." + std::to_string(i) + " (" + run.name + "): " +
          (run.engine == "closed_form"
               ? "its model-parallel step is a closed form timed on an idle fabric"
           : j.config->model_parallel_idle_fabric_timing
               ? "its collectives take idle-fabric durations (workload.collective_timing: "
                 "idle_fabric)"
               : "its collectives reuse idle-fabric timings (workload.reuse_bucket_timings)") +
          ", so it neither loads the shared fabric nor feels the other jobs");
    }
    out.push_back(std::move(run));
  }

  if (scenario.compare_alone) {
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      Simulation sim(scenario.seed);
      std::unique_ptr<TransferBackend> alone = make_backend(scenario.fidelity, sim, spec);
      std::vector<JobSteps> one = start_jobs(scenario, spec, *alone, placement, {i}, faults);
      sim.queue().run();
      std::vector<double> times;
      for (const models::StepResult& s : one.front().steps) times.push_back(s.step.seconds());
      out[i].alone_step_time_s = mean(times);
      out[i].slowdown_vs_alone = out[i].step_time_s / *out[i].alone_step_time_s;
    }
  }
  return out;
}

void add_job_fault_costs(std::vector<FaultOutcome>& faults, const std::vector<JobRun>& jobs) {
  for (std::size_t i = 0; i < faults.size(); ++i) {
    const double from = faults[i].at_s;
    const double to = i + 1 < faults.size() ? faults[i + 1].at_s : 1e300;
    for (const JobRun& j : jobs) {
      FaultOutcome::JobCost c;
      c.job = j.name;
      std::vector<double> before;
      std::vector<double> during;
      for (std::size_t k = 0; k < j.step_times_s.size(); ++k) {
        const double start = j.step_starts_s[k];
        const double end = start + j.step_times_s[k];
        if (end <= from) {
          before.push_back(j.step_times_s[k]);
        } else if (start < to) {
          during.push_back(j.step_times_s[k]);
        }
      }
      c.step_before_s = mean(before);
      c.step_during_s = mean(during);
      c.steps_during = static_cast<uint32_t>(during.size());
      faults[i].jobs.push_back(std::move(c));
    }
  }
}

}  // namespace syncsim::app

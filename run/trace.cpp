#include "run/trace.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace syncsim::app {

namespace {

double us(Time t) { return t.microseconds(); }

nlohmann::json slice(const std::string& name, std::size_t pid, int tid, Time start, Time end,
                     nlohmann::json args = nlohmann::json::object()) {
  return {{"name", name},
          {"ph", "X"},
          {"pid", pid},
          {"tid", tid},
          {"ts", us(start)},
          {"dur", us(end - start)},
          {"args", std::move(args)}};
}

nlohmann::json metadata(const char* what, std::size_t pid, int tid, const std::string& name) {
  return {{"name", what}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}};
}

}  // namespace

nlohmann::json step_trace(const models::StepResult& step, std::size_t max_ranks,
                          const std::vector<FaultOutcome>& faults) {
  constexpr int kCompute = 0;
  constexpr int kComm = 1;
  nlohmann::json events = nlohmann::json::array();
  const std::size_t ranks = std::min(step.rank_backward_end.size(), max_ranks);
  const Time optimizer_start = step.step - step.optimizer;
  for (std::size_t r = 0; r < ranks; ++r) {
    events.push_back(metadata("process_name", r, kCompute, "rank " + std::to_string(r)));
    events.push_back(metadata("thread_name", r, kCompute, "compute"));
    events.push_back(metadata("thread_name", r, kComm, "communication"));
    const Time bwd_start = step.rank_backward_start[r];
    const Time bwd_end = step.rank_backward_end[r];
    events.push_back(slice("forward", r, kCompute, Time::zero(), bwd_start));
    events.push_back(slice("backward", r, kCompute, bwd_start, bwd_end));
    events.push_back(slice("optimizer", r, kCompute, optimizer_start, step.step));
    if (step.parallelism == models::DataParallelism::Fsdp) {
      // FSDP: the all-gather and reduce-scatter streams, and rank 0's compute per unit.
      constexpr int kReduce = 2;
      constexpr int kUnits = 3;
      events.push_back(metadata("thread_name", r, kComm, "all-gather stream"));
      // HSDP's replica all-reduces run on the reduce-scatter stream, behind their reduce-scatters.
      const bool hybrid = step.fsdp_shard_degree < step.data_parallel;
      events.push_back(
          metadata("thread_name", r, kReduce,
                   hybrid ? "reduce-scatter / all-reduce stream" : "reduce-scatter stream"));
      for (const auto& c : step.collectives) {
        const int tid = c.kind == "all_gather" ? kComm : kReduce;
        events.push_back(slice(c.kind + " unit " + std::to_string(c.unit), r, tid, c.start, c.end,
                               {{"bytes", c.bytes}, {"ready_us", us(c.ready)}}));
      }
      if (r == 0) {
        events.push_back(metadata("thread_name", r, kUnits, "compute per unit"));
        for (const auto& t : step.rank0_compute) {
          if (t.end > t.start) events.push_back(slice(t.name, r, kUnits, t.start, t.end));
        }
      }
    }
    if (r == 0 && step.layer_compute) {
      // One block's compute by op class (the per-layer breakdown, unperturbed), drawn from the
      // start of the forward and of the last micro-batch's backward.
      constexpr int kOpClasses = 4;
      events.push_back(metadata("thread_name", r, kOpClasses, "one block by op class"));
      auto draw = [&](const models::BlockOpClasses& c, Time at, const char* direction) {
        const std::pair<const char*, double> parts[] = {{"qkv", c.qkv},
                                                        {"attention", c.attention},
                                                        {"attention_out", c.attention_out},
                                                        {"mlp_up", c.mlp_up},
                                                        {"mlp_down", c.mlp_down},
                                                        {"elementwise", c.elementwise},
                                                        {"recompute", c.recompute}};
        for (const auto& [name, seconds] : parts) {
          if (seconds <= 0) continue;
          const Time end = at + Time::from_seconds(seconds);
          events.push_back(slice(std::string(direction) + " " + name, r, kOpClasses, at, end));
          at = end;
        }
      };
      draw(models::block_forward_classes(*step.layer_compute), Time::zero(), "forward");
      draw(models::block_backward_classes(*step.layer_compute), bwd_start, "backward");
    }
    for (std::size_t b = 0; b < step.buckets.size(); ++b) {
      const auto& bucket = step.buckets[b];
      events.push_back(slice("all_reduce bucket " + std::to_string(b), r, kComm, bucket.start,
                             bucket.end,
                             {{"bytes", bucket.bytes}, {"ready_us", us(bucket.ready)}}));
    }
  }
  std::size_t next_pid = ranks;
  if (!step.pipeline_schedule.empty()) {
    // The pipeline schedule (1F1B or interleaved): a process with a track per pipeline stage, a
    // slice per forward and backward of each micro-batch and chunk (closed form: the stage's
    // point-to-point receives included; event-driven: as they ran).
    const std::size_t pid = next_pid++;
    events.push_back(metadata("process_name", pid, 0, "pipeline schedule (1F1B)"));
    uint32_t stages = 0;
    for (const models::PipelineOperation& op : step.pipeline_schedule) {
      stages = std::max(stages, op.stage + 1);
    }
    for (uint32_t i = 0; i < stages; ++i) {
      events.push_back(
          metadata("thread_name", pid, static_cast<int>(i), "stage " + std::to_string(i)));
    }
    const bool interleaved = step.layout.virtual_pipeline > 1;
    for (const models::PipelineOperation& op : step.pipeline_schedule) {
      std::string name = (op.forward ? "F " : "B ") + std::to_string(op.micro_batch);
      if (interleaved) name += " (chunk " + std::to_string(op.chunk) + ")";
      events.push_back(slice(name, pid, static_cast<int>(op.stage), op.start, op.end,
                             {{"micro_batch", op.micro_batch}, {"chunk", op.chunk}}));
    }
  }
  if (!step.communication.empty()) {
    // The event-driven model-parallel step: a process with a track per communication kind and
    // pipeline stage, each slice as it ran on the shared fabric.
    const std::size_t pid = next_pid++;
    events.push_back(metadata("process_name", pid, 0, "communication by kind"));
    std::vector<std::string> tracks;  // "kind stage i", in order of first appearance
    for (const models::CommunicationSlice& c : step.communication) {
      const std::string track = c.kind + " stage " + std::to_string(c.stage);
      auto it = std::find(tracks.begin(), tracks.end(), track);
      if (it == tracks.end()) {
        tracks.push_back(track);
        it = std::prev(tracks.end());
        events.push_back(metadata("thread_name", pid, static_cast<int>(tracks.size() - 1), track));
      }
      events.push_back(slice(c.kind, pid, static_cast<int>(it - tracks.begin()), c.start, c.end,
                             {{"bytes", c.bytes}, {"stage", c.stage}}));
    }
  }
  if (!faults.empty()) {
    const std::size_t pid = next_pid;  // a process of its own, after the ranks
    events.push_back(metadata("process_name", pid, 0, "faults"));
    events.push_back(metadata("thread_name", pid, 0, "faults"));
    for (const FaultOutcome& f : faults) {
      const std::string name = f.kind + " " + f.target;
      const Time at = Time::from_seconds(f.at_s);
      nlohmann::json args = {{"bytes_lost", f.bytes_lost}, {"flows_rerouted", f.flows_rerouted}};
      events.push_back({{"name", name},
                        {"ph", "i"},
                        {"s", "g"},
                        {"pid", pid},
                        {"tid", 0},
                        {"ts", us(at)},
                        {"args", args}});
      if (f.until_s >= 0) {
        events.push_back(slice(name, pid, 0, at, Time::from_seconds(f.until_s), std::move(args)));
      }
    }
  }
  return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
}

nlohmann::json jobs_trace(const std::vector<JobRun>& jobs) {
  nlohmann::json events = nlohmann::json::array();
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const JobRun& job = jobs[j];
    events.push_back(metadata("process_name", j, 0, "job " + job.name));
    events.push_back(metadata("thread_name", j, 0, "steps"));
    for (std::size_t k = 0; k < job.step_times_s.size(); ++k) {
      const Time start = Time::from_seconds(job.step_starts_s[k]);
      const Time end = start + Time::from_seconds(job.step_times_s[k]);
      events.push_back(slice("step " + std::to_string(k), j, 0, start, end,
                             {{"ranks", job.ranks}, {"engine", job.engine}}));
    }
  }
  return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
}

}  // namespace syncsim::app

// The result keys of a multi-job run (`jobs:`, run/multi_job.hpp): per job its steps, mean step
// time, MFU, exposed communication and slowdown against running alone.
#include <nlohmann/json.hpp>
#include <vector>

#include "run/result_schema.hpp"
#include "run/runner.hpp"

namespace syncsim::app {

namespace {

using json = nlohmann::json;
using P = ResultPresence;

json jobs(const RunResult& r) {
  json out = json::array();
  for (const JobRun& j : r.jobs) {
    json o = {{"name", j.name},
              {"ranks", j.ranks},
              {"hosts", j.hosts},
              {"engine", j.engine},
              {"loads_fabric", j.loads_fabric},
              {"start_s", j.start_s},
              {"end_s", j.end_s},
              {"steps", j.step_times_s.size()},
              {"step_time_s", j.step_time_s},
              {"step_times_s", j.step_times_s},
              {"mfu", j.mfu},
              {"exposed_comm_s", j.exposed_comm_s}};
    o["alone_step_time_s"] = j.alone_step_time_s ? json(*j.alone_step_time_s) : json(nullptr);
    o["slowdown_vs_alone"] = j.slowdown_vs_alone ? json(*j.slowdown_vs_alone) : json(nullptr);
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace

std::span<const ResultKey> jobs_result_keys() {
  static const std::vector<ResultKey> keys = {
      {"jobs", "", "-", "per job of `jobs:`, in order (the members below)", P::Jobs, jobs},
      {"jobs[].name", "", "-", "the job's name", P::Jobs, nullptr},
      {"jobs[].ranks", "", "count", "its ranks (GPUs)", P::Jobs, nullptr},
      {"jobs[].hosts", "", "count", "the hosts its GPUs are on", P::Jobs, nullptr},
      {"jobs[].engine", "", "-", "`event_driven` (DDP, FSDP) or `closed_form` (model parallelism)",
       P::Jobs, nullptr},
      {"jobs[].loads_fabric", "", "-",
       "whether its collectives ran on the shared fabric (false: timed on an idle one)", P::Jobs,
       nullptr},
      {"jobs[].start_s", "", "s", "when its first step began", P::Jobs, nullptr},
      {"jobs[].end_s", "", "s", "when its last step ended", P::Jobs, nullptr},
      {"jobs[].steps", "", "count", "steps run", P::Jobs, nullptr},
      {"jobs[].step_time_s", "", "s", "mean step time", P::Jobs, nullptr},
      {"jobs[].step_times_s", "", "s", "each step's time, in order", P::Jobs, nullptr},
      {"jobs[].mfu", "", "-", "model FLOPs utilization at the mean step time", P::Jobs, nullptr},
      {"jobs[].exposed_comm_s", "", "s", "mean communication time not hidden by compute", P::Jobs,
       nullptr},
      {"jobs[].alone_step_time_s", "", "s",
       "mean step time of the same job alone on the fabric (compare_alone; else null)", P::Jobs,
       nullptr},
      {"jobs[].slowdown_vs_alone", "", "-",
       "step_time_s / alone_step_time_s (compare_alone; else null)", P::Jobs, nullptr},
  };
  return keys;
}

}  // namespace syncsim::app

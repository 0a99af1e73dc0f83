// The result keys of a run with `faults:` (run/fault_run.hpp): each fault occurrence by time, with
// what it cost over its window, per job with `jobs:`.
#include <nlohmann/json.hpp>
#include <vector>

#include "run/result_schema.hpp"
#include "run/runner.hpp"

namespace syncsim::app {

namespace {

using json = nlohmann::json;
using P = ResultPresence;

json faults(const RunResult& r) {
  json out = json::array();
  for (const FaultOutcome& f : r.faults) {
    json o = {{"kind", f.kind},
              {"target", f.target},
              {"at_s", f.at_s},
              {"until_s", f.until_s},
              {"bytes_lost", f.bytes_lost},
              {"packets_lost_link_down", f.packets_lost_link_down},
              {"flows_rerouted", f.flows_rerouted},
              {"flows_unroutable", f.flows_unroutable},
              {"retransmitted_bytes", f.retransmitted_bytes},
              {"lossless_bytes_lost", f.lossless_bytes_lost},
              {"buckets_during", f.buckets_during},
              {"bucket_slowdown_before", f.bucket_slowdown_before},
              {"bucket_slowdown_during", f.bucket_slowdown_during}};
    if (f.kind == "link_degraded") o["fraction"] = f.fraction;
    if (f.kind == "straggler") o["slowdown"] = f.slowdown;
    if (!f.jobs.empty()) {
      json jobs = json::array();
      for (const FaultOutcome::JobCost& c : f.jobs) {
        jobs.push_back({{"job", c.job},
                        {"step_before_s", c.step_before_s},
                        {"step_during_s", c.step_during_s},
                        {"steps_during", c.steps_during}});
      }
      o["jobs"] = std::move(jobs);
    }
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace

std::span<const ResultKey> faults_result_keys() {
  static const std::vector<ResultKey> keys = {
      {"faults", "", "-", "each fault occurrence by time, with its cost over its window (below)",
       P::Faults, faults},
      {"faults[].kind", "", "-", "link_down, link_degraded, switch_down, nic_down, straggler, ...",
       P::Faults, nullptr},
      {"faults[].target", "", "-", "the link, switch or NIC as named; \"gpu R\" for a straggler",
       P::Faults, nullptr},
      {"faults[].at_s", "", "s", "when it struck", P::Faults, nullptr},
      {"faults[].until_s", "", "s", "when it ended (-1: it lasted)", P::Faults, nullptr},
      {"faults[].bytes_lost", "", "B",
       "data dropped in its window (from it to the next fault, the last to the run's end)",
       P::Faults, nullptr},
      {"faults[].packets_lost_link_down", "", "count", "packets lost on dead links in its window",
       P::Faults, nullptr},
      {"faults[].flows_rerouted", "", "count", "flows rerouted in its window", P::Faults, nullptr},
      {"faults[].flows_unroutable", "", "count", "flows left without a route in its window",
       P::Faults, nullptr},
      {"faults[].retransmitted_bytes", "", "B", "bytes resent in its window", P::Faults, nullptr},
      {"faults[].lossless_bytes_lost", "", "B", "lossless-class data lost in its window", P::Faults,
       nullptr},
      {"faults[].buckets_during", "", "count", "DDP buckets running in its window", P::Faults,
       nullptr},
      {"faults[].bucket_slowdown_before", "", "-",
       "DDP buckets finished before it: all-reduce time / idle-fabric time (0: none)", P::Faults,
       nullptr},
      {"faults[].bucket_slowdown_during", "", "-", "the same for the buckets in its window",
       P::Faults, nullptr},
      {"faults[].jobs", "", "-",
       "with `jobs:`: per job, its mean step time before the fault and in its window (below)",
       P::Faults, nullptr},
      {"faults[].jobs[].job", "", "-", "the job's name", P::Faults, nullptr},
      {"faults[].jobs[].step_before_s", "", "s",
       "mean time of its steps that ended before the fault (0: none)", P::Faults, nullptr},
      {"faults[].jobs[].step_during_s", "", "s",
       "mean time of its steps running in the fault's window (0: none)", P::Faults, nullptr},
      {"faults[].jobs[].steps_during", "", "count", "its steps running in the window", P::Faults,
       nullptr},
  };
  return keys;
}

}  // namespace syncsim::app

// The result keys of a replayed Chakra trace (`workload.chakra`): what the replay counted and each
// rank's finish, compute and exposed communication. The step keys (step_time_s, exposed_comm_s,
// sync_s, bytes_per_gpu) are filled from the replay too (run/chakra_run.cpp).
#include <nlohmann/json.hpp>
#include <vector>

#include "run/result_schema.hpp"
#include "run/runner.hpp"

namespace syncsim::app {

namespace {

using json = nlohmann::json;
using P = ResultPresence;

const ChakraRun& chakra(const RunResult& r) { return *r.chakra; }

json seconds(const std::vector<Time>& v) {
  json out = json::array();
  for (Time t : v) out.push_back(t.seconds());
  return out;
}

json groups(const RunResult& r) {
  json out = json::array();
  for (const auto& [name, members] : chakra(r).replay.groups) {
    out.push_back({{"name", name}, {"ranks", members}});
  }
  return out;
}

}  // namespace

std::span<const ResultKey> chakra_result_keys() {
  static const std::vector<ResultKey> keys = {
      {"chakra.path", "", "-", "the trace set replayed (workload.chakra.path)", P::Chakra,
       [](const RunResult& r) -> json { return chakra(r).path; }},
      {"chakra.ranks", "chakra_ranks", "count", "ranks (trace files) replayed", P::Chakra,
       [](const RunResult& r) -> json { return chakra(r).ranks; }},
      {"chakra.compute_nodes", "chakra_compute_nodes", "count",
       "compute nodes run, over all ranks (Chakra replay)", P::Chakra,
       [](const RunResult& r) -> json { return chakra(r).replay.compute_nodes; }},
      {"chakra.retimed_nodes", "chakra_retimed_nodes", "count",
       "compute nodes the compute model re-timed (workload.chakra.retime)", P::Chakra,
       [](const RunResult& r) -> json { return chakra(r).retimed_nodes; }},
      {"chakra.collectives", "chakra_collectives", "count",
       "collectives run, one per process group and occurrence (Chakra replay)", P::Chakra,
       [](const RunResult& r) -> json { return chakra(r).replay.collectives; }},
      {"chakra.point_to_point", "chakra_point_to_point", "count",
       "matched send/receive pairs run (Chakra replay)", P::Chakra,
       [](const RunResult& r) -> json { return chakra(r).replay.point_to_point; }},
      {"chakra.bytes_sent", "chakra_bytes_sent", "B",
       "payload sent by every collective and send, all ranks (Chakra replay)", P::Chakra,
       [](const RunResult& r) -> json { return chakra(r).replay.bytes_sent; }},
      {"chakra.process_groups", "", "-",
       "process groups: name (pg_name; \"\" is every rank) and member ranks (Chakra replay)",
       P::Chakra, groups},
      {"chakra.process_groups[].name", "", "-", "the group's pg_name (\"\": every rank)", P::Chakra,
       nullptr},
      {"chakra.process_groups[].ranks", "", "count", "the group's member ranks", P::Chakra,
       nullptr},
      {"chakra.rank_finish_s", "", "s", "per rank: when its last node finished (Chakra replay)",
       P::Chakra, [](const RunResult& r) -> json { return seconds(chakra(r).replay.rank_finish); }},
      {"chakra.rank_compute_s", "", "s",
       "per rank: time a compute node ran (GPU or CPU; Chakra replay)", P::Chakra,
       [](const RunResult& r) -> json { return seconds(chakra(r).replay.rank_compute); }},
      {"chakra.rank_exposed_comm_s", "", "s",
       "per rank: time communication was in flight while no compute ran (Chakra replay)", P::Chakra,
       [](const RunResult& r) -> json { return seconds(chakra(r).replay.rank_exposed_comm); }},
  };
  return keys;
}

}  // namespace syncsim::app

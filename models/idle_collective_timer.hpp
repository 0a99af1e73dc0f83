#pragma once
// Times the collectives of the closed-form step engines on idle copies of the fabric.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "models/collective_plan.hpp"
#include "models/collective_runner.hpp"
#include "models/step_sim.hpp"
#include "sim/backends/fidelity.hpp"
#include "sim/net/network_spec.hpp"

namespace syncsim::models {

// Times collectives on idle copies of the fabric (the scenario's fidelity), each distinct
// (op, groups, bytes) once. Several groups run the same collective at the same time (e.g. every
// tensor-parallel rank's data-parallel group), sharing the fabric as placed.
//
// Symmetric groups are simulated once (StepConfig::time_symmetric_groups_once), at analytic
// fidelity only, where the rule is exact: there transfers between different endpoint pairs never
// slow each other down (analytic_backend.hpp), so a group's duration depends only on the paths
// between its own GPUs. Two groups have the same paths when one is the other moved by a whole
// number of the fabric's translation period (NetworkSpec::translation_period_hosts: a pod of a fat
// tree, a leaf of a spine-leaf, a group of a rail-optimized fabric), or when each lies inside one
// host (every host's NVLink domain is alike). Equal-cost paths have the same link classes on the
// fabrics the topology builders make, so the ECMP choice does not matter either. So:
//   - a call is first moved down by the period as a whole (a pipeline stage's data-parallel groups
//     are the stage before's, one pod on): calls that are translations of each other share one
//     timing;
//   - then, unless host staging couples groups that share a host (roce_host_staged, tcp), each
//     group is keyed on its own translation, and only one group of each class is simulated.
// Flow and packet fidelity simulate every group as placed: there ECMP collisions between groups
// depend on where they sit. Route overrides switch the rule off.
class IdleCollectiveTimer {
 public:
  IdleCollectiveTimer(const net::NetworkSpec& spec, Fidelity fidelity, const StepConfig& config);
  struct Timing {
    Time duration = Time::zero();
    int64_t bytes_per_gpu = 0;                     // payload each GPU of group 0 sent, on average
    NcclProtocol protocol = NcclProtocol::Simple;  // what it ran (StepProtocols)
  };
  // One collective as the step runs it: its plan under the protocol NCCL picks for it
  // (StepProtocols) and that protocol's run options.
  struct Collective {
    NcclProtocol protocol = NcclProtocol::Simple;
    CollectivePlan plan;
    CollectiveRunOptions run;
  };
  // `groups`: lists of GPUs (all the same size). Groups of one rank take no time.
  const Timing& time(CollectiveOp op, CollectiveAlgo algo,
                     const std::vector<std::vector<uint32_t>>& groups, int64_t bytes);
  // The collective for `ranks` ranks (its plan kept alive for runners that reference it).
  const Collective& plan(CollectiveOp op, CollectiveAlgo algo, uint32_t ranks, int64_t bytes);
  // Groups simulated so far (a group timed once for its whole symmetry class counts once).
  uint64_t simulated_groups() const { return simulated_groups_; }

  // Two passes for threads (StepConfig::threads): while recording, time() notes the simulations a
  // call needs and returns a zero timing for it; run_recorded() runs every noted simulation at
  // once on `threads` threads, after which time() answers each call as it would have one call at
  // a time: the simulations are private and their batches formed in the same order, so results
  // are identical for any thread count.
  void start_recording() { recording_ = true; }
  void run_recorded(unsigned threads);

 private:
  using Groups = std::vector<std::vector<uint32_t>>;
  // Runs `groups` together on one idle fabric: each group's duration and bytes per GPU.
  std::vector<Timing> simulate(CollectiveOp op, CollectiveAlgo algo, const Groups& groups,
                               int64_t bytes);
  // The same for a plan already made; touches nothing of the timer's (run_recorded's threads).
  std::vector<Timing> run_groups(const Collective& collective, const Groups& groups) const;
  // A simulation noted while recording: its groups, and where its timings go (one group per
  // class: group_keys, in order; else the whole call: call_key).
  struct RecordedRun {
    CollectiveOp op;
    CollectiveAlgo algo;
    Groups groups;
    int64_t bytes;
    std::vector<std::string> group_keys;
    std::string call_key;
  };
  // The GPUs of `gpus` moved down by the largest multiple of the translation period that keeps
  // them on the fabric (every GPU inside one host: moved to host 0).
  std::vector<uint32_t> canonical(const std::vector<uint32_t>& gpus, bool whole_hosts_only) const;
  bool symmetry_applies() const;
  bool groups_couple_through_hosts() const;

  const net::NetworkSpec& spec_;
  Fidelity fidelity_;
  const StepConfig& config_;
  std::map<std::string, Collective> plans_;
  std::map<std::string, Timing> timings_;        // by the call's key
  std::map<std::string, Timing> group_timings_;  // by one canonical group's key
  uint64_t simulated_groups_ = 0;
  bool host_major_ = false;  // GPU g is local GPU g % n of host g / n
  bool recording_ = false;
  Timing recorded_placeholder_;  // what time() answers while recording
  std::vector<RecordedRun> recorded_runs_;
  std::set<std::string> recorded_calls_;   // calls noted (their key)
  std::set<std::string> recorded_groups_;  // canonical groups noted (their key)
  std::map<std::string, std::vector<Timing>> recorded_call_timings_;  // run, not yet taken
};

}  // namespace syncsim::models

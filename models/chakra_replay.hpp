#pragma once
// Replays a Chakra execution trace (models/chakra_graph.hpp) on a simulated fabric, event by event:
//  - a node is ready when every node it depends on (ctrl_deps and data_deps) has finished;
//  - compute nodes take their duration; a rank runs one GPU compute node at a time and, beside
//    it, one CPU node (is_cpu_op) at a time, ready nodes waiting in the order they became ready
//    (ASTRA-sim's HardwareResource, astra-sim/workload/HardwareResource.cc, admits one kernel and
//    one host op in flight per NPU);
//  - a collective starts when every member of its process group has reached it, the k-th
//    collective a member reaches in a group matching the k-th of every other member, and runs its
//    plan (models/collective_plan.hpp) through a CollectiveRunner on the backend, so the
//    scenario's fidelity times it and concurrent collectives share the fabric;
//  - a send and the receive that matches it (same source, destination and comm_tag, in order)
//    become one point-to-point transfer (a SendRecv plan) once both are posted.
// Communication nodes are not serialised per rank: collectives of different groups may overlap.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "models/chakra_graph.hpp"
#include "models/gpu.hpp"
#include "models/step_sim.hpp"
#include "sim/backends/transfer_backend.hpp"

namespace syncsim::models {

struct ChakraReplayResult {
  Time step = Time::zero();       // the last rank's finish
  std::vector<Time> rank_finish;  // per rank: when its last node finished
  // Per rank: time some compute node (GPU or CPU) was running, and time communication was in
  // flight (from a rank posting it to its end, waiting for peers included) while no compute ran.
  std::vector<Time> rank_compute;
  std::vector<Time> rank_exposed_comm;
  std::size_t compute_nodes = 0;        // over all ranks
  std::size_t collectives = 0;          // collective instances (one per group and occurrence)
  std::size_t point_to_point = 0;       // matched send/receive pairs
  Time collective_busy = Time::zero();  // summed duration of the collective instances
  int64_t bytes_sent = 0;               // payload over every transfer of every collective and pair
  // Process groups: pg_name -> member ranks (from the nodes that name it), for the report.
  std::vector<std::pair<std::string, std::vector<uint32_t>>> groups;
};

// The ranks of each process group: the ranks whose trace names it (pg_name) on a collective; the
// empty name is every rank. Chakra traces carry no membership table (ASTRA-sim reads one from a
// separate --comm-group-configuration file), so a group is whoever takes part in it.
std::vector<std::pair<std::string, std::vector<uint32_t>>> chakra_groups(const ChakraTrace& trace);

// Checks what can be checked before running: each group's members reach the same sequence of
// collectives (operation and size), every send has its receive. Throws std::invalid_argument
// naming the files and nodes that disagree.
void check_chakra_trace(const ChakraTrace& trace);

// Re-times compute nodes with the compute model: a node with num_ops (FLOPs) takes
// max(num_ops / (peak x max_gemm_efficiency), tensor_size / HBM bandwidth) + one kernel launch,
// the roofline of models/gpu.hpp's gemm_seconds without its shape term (a Chakra node records no
// GEMM shape). Nodes without num_ops keep the trace's duration. Returns how many were re-timed.
std::size_t retime_chakra_compute(ChakraTrace& trace, const GpuSpec& gpu, DType dtype);

// Runs the trace on `backend` (simulation at time zero). rank r runs on GPU
// config.rank_to_gpu[r]; collectives use config's NCCL setup (algorithm, channels, and per
// collective the protocol NCCL picks with its chunk and run options: apply_nccl_step_setup,
// StepProtocols), all-to-all the pairwise plan with Simple. Throws
// std::runtime_error when the replay stalls (a dependency cycle, a collective some member never
// reaches), naming a node that never ran.
ChakraReplayResult replay_chakra(TransferBackend& backend, const ChakraTrace& trace,
                                 const StepConfig& config);

}  // namespace syncsim::models

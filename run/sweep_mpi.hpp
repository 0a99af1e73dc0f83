#pragma once
// MPI distribution of sweep points (Open MPI when CMake found it; see sweep_mpi.cpp).
//
// Rank 0 coordinates: each worker rank asks for a point index, runs it, and sends back the row as
// serialized JSON with its next request; rank 0 keeps rows by index and prints them in point order.
// Rank 0 runs no points itself. A build without MPI detects an MPI launcher from its environment
// (OMPI_COMM_WORLD_SIZE, PMI_SIZE) so the sweep can warn and run serially on rank 0 only.
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace syncsim::app {

bool mpi_compiled_in();
// Size and rank as the launcher's environment says (1 and 0 when not launched by one).
int launcher_world_size();
int launcher_world_rank();
// Ranks of this job on this machine as the launcher's environment says (OMPI_COMM_WORLD_LOCAL_SIZE,
// MPI_LOCALNRANKS); 1 when not launched by one.
int launcher_local_size();

class MpiWorld {
 public:
  // Calls MPI_Init when MPI is compiled in and the process was started by an MPI launcher with more
  // than one rank; otherwise returns null.
  static std::unique_ptr<MpiWorld> init_if_launched();
  ~MpiWorld();  // MPI_Finalize
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  // Rank 0: hands out indices 0..n-1 on request until all are done; returns the rows by index.
  std::vector<std::string> coordinate(std::size_t n,
                                      const std::function<void(std::size_t)>& on_done);
  // Ranks > 0: asks for indices and runs `run_point` on each until told to stop.
  void work(const std::function<std::string(std::size_t)>& run_point);
  // Every rank: returns after all ranks have called it.
  void barrier();
  // Every rank: the smallest `value` any rank passed (MPI_Allreduce), so all ranks decide alike.
  double min_over_ranks(double value);
  [[noreturn]] void abort(int code);

 private:
  MpiWorld(int rank, int size) : rank_(rank), size_(size) {}
  int rank_;
  int size_;
};

}  // namespace syncsim::app

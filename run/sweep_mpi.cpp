// MPI distribution of sweep points. Compiled with SYNCSIM_HAVE_MPI when CMake found MPI (the
// definition is set on this file only); without it MpiWorld is never created.
#include "run/sweep_mpi.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#ifdef SYNCSIM_HAVE_MPI
// mpi.h's handle macros (MPI_COMM_WORLD, MPI_CHAR, ...) expand to C casts.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
#define OMPI_SKIP_MPICXX 1  // the C API is enough; the deprecated C++ bindings warn
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace syncsim::app {

namespace {

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  try {
    return std::stoi(v);
  } catch (const std::exception&) {
    return fallback;
  }
}

}  // namespace

int launcher_world_size() {
  const int ompi = env_int("OMPI_COMM_WORLD_SIZE", 0);
  return ompi > 0 ? ompi : env_int("PMI_SIZE", 1);
}

int launcher_world_rank() {
  const int ompi = env_int("OMPI_COMM_WORLD_RANK", -1);
  return ompi >= 0 ? ompi : env_int("PMI_RANK", 0);
}

int launcher_local_size() {
  const int ompi = env_int("OMPI_COMM_WORLD_LOCAL_SIZE", 0);
  return ompi > 0 ? ompi : std::max(1, env_int("MPI_LOCALNRANKS", 1));
}

#ifdef SYNCSIM_HAVE_MPI

namespace {

constexpr int kTagRequest = 1;  // worker -> rank 0: the finished row (empty on the first request)
constexpr int kTagWork = 2;     // rank 0 -> worker: an index, or -1 to stop

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(std::string("MPI call failed: ") + what);
}

}  // namespace

bool mpi_compiled_in() { return true; }

std::unique_ptr<MpiWorld> MpiWorld::init_if_launched() {
  if (launcher_world_size() <= 1) return nullptr;
  check(MPI_Init(nullptr, nullptr), "MPI_Init");
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return std::unique_ptr<MpiWorld>(new MpiWorld(rank, size));
}

MpiWorld::~MpiWorld() { MPI_Finalize(); }

std::vector<std::string> MpiWorld::coordinate(std::size_t n,
                                              const std::function<void(std::size_t)>& on_done) {
  std::vector<std::string> rows(n);
  std::size_t next = 0;
  std::size_t done = 0;
  int stopped = 0;
  // Which index each worker is running (-1: none yet).
  std::vector<int64_t> running(static_cast<std::size_t>(size_), -1);
  while (stopped < size_ - 1) {
    MPI_Status status;
    check(MPI_Probe(MPI_ANY_SOURCE, kTagRequest, MPI_COMM_WORLD, &status), "MPI_Probe");
    int count = 0;
    MPI_Get_count(&status, MPI_CHAR, &count);
    std::string row(static_cast<std::size_t>(count), '\0');
    check(MPI_Recv(row.data(), count, MPI_CHAR, status.MPI_SOURCE, kTagRequest, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE),
          "MPI_Recv");
    const auto src = static_cast<std::size_t>(status.MPI_SOURCE);
    if (running[src] >= 0) {
      rows[static_cast<std::size_t>(running[src])] = std::move(row);
      ++done;
      if (on_done) on_done(done);
    }
    int64_t reply = -1;
    if (next < n) reply = static_cast<int64_t>(next++);
    running[src] = reply;
    check(MPI_Send(&reply, 1, MPI_INT64_T, status.MPI_SOURCE, kTagWork, MPI_COMM_WORLD),
          "MPI_Send");
    if (reply < 0) ++stopped;
  }
  return rows;
}

void MpiWorld::work(const std::function<std::string(std::size_t)>& run_point) {
  std::string row;
  for (;;) {
    check(MPI_Send(row.data(), static_cast<int>(row.size()), MPI_CHAR, 0, kTagRequest,
                   MPI_COMM_WORLD),
          "MPI_Send");
    int64_t index = -1;
    check(MPI_Recv(&index, 1, MPI_INT64_T, 0, kTagWork, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
          "MPI_Recv");
    if (index < 0) return;
    row = run_point(static_cast<std::size_t>(index));
  }
}

void MpiWorld::barrier() { MPI_Barrier(MPI_COMM_WORLD); }

double MpiWorld::min_over_ranks(double value) {
  double result = value;
  MPI_Allreduce(&value, &result, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  return result;
}

void MpiWorld::abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

#else  // no MPI: the world is never created.

bool mpi_compiled_in() { return false; }

std::unique_ptr<MpiWorld> MpiWorld::init_if_launched() { return nullptr; }

MpiWorld::~MpiWorld() = default;

std::vector<std::string> MpiWorld::coordinate(std::size_t,
                                              const std::function<void(std::size_t)>&) {
  throw std::logic_error("MpiWorld without MPI");
}

void MpiWorld::work(const std::function<std::string(std::size_t)>&) {
  throw std::logic_error("MpiWorld without MPI");
}

void MpiWorld::barrier() {}

double MpiWorld::min_over_ranks(double value) { return value; }

void MpiWorld::abort(int code) { std::_Exit(code); }

#endif

}  // namespace syncsim::app

#ifdef SYNCSIM_HAVE_MPI
#pragma GCC diagnostic pop
#endif

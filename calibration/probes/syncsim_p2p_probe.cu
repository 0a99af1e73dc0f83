// syncsim-p2p-probe: point-to-point latency and bandwidth between GPUs of different nodes through
// NCCL send/recv (GPUDirect RDMA when the NICs and driver allow it), launched under MPI:
//
//   mpirun -np 2 --host nodeA,nodeB syncsim-p2p-probe [--out FILE] [--table FILE.json]
//          [--repeats N] [--iters N] [--min-bytes B] [--max-bytes B]
//
// One rank per node drives one GPU (its local rank on the node). Like nccl-tests' sendrecv_perf,
// every iteration rank r sends S bytes to r+1 and receives S bytes from r-1 (both directions at
// once with 2 ranks); `iters` iterations are timed with CUDA events after warm-up, N times per
// size. Rank 0 prints one line per size (mean time, algbw, spread) and writes:
//   - --out (default p2p-profile.yaml): a calibration profile with, per size, a probe value
//     `nccl_send_recv_<ranks>r_<bytes>B` in us (mean, stddev, min, median, max), and a fitted
//     send_recv line for <ranks> ranks (alpha-beta with size regimes, its spread and sample count):
//     `syncsim collective --op send_recv --ranks 2 --calibration FILE` then uses it;
//   - --table (optional): the means as the JSON table `syncsim calibrate import --json` prints, for
//     `syncsim calibrate fit` / `calibrate report`.
// Whether NCCL used GPUDirect RDMA shows in NCCL_DEBUG=INFO's "NET/IB ... GDRDMA" lines; the probe
// does not force it (NCCL_NET_GDR_LEVEL, NCCL_IB_HCA are the user's to set).
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "calibration/alpha_beta_fit.hpp"
#include "calibration/profile.hpp"

namespace cal = syncsim::calibration;

namespace {

#define P2P_CHECK(what, ok, detail)                                             \
  do {                                                                          \
    if (!(ok)) {                                                                \
      std::fprintf(stderr, "syncsim-p2p-probe: %s failed: %s\n", what, detail); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                             \
    }                                                                           \
  } while (0)
#define P2P_CUDA(call)                                           \
  do {                                                           \
    const cudaError_t e_ = (call);                               \
    P2P_CHECK(#call, e_ == cudaSuccess, cudaGetErrorString(e_)); \
  } while (0)
#define P2P_NCCL(call)                                           \
  do {                                                           \
    const ncclResult_t r_ = (call);                              \
    P2P_CHECK(#call, r_ == ncclSuccess, ncclGetErrorString(r_)); \
  } while (0)

struct Options {
  std::string out = "p2p-profile.yaml";
  std::string table;
  int repeats = 5;
  int iters = 20;
  long long min_bytes = 8;
  long long max_bytes = 1LL << 30;
};

std::string version_string(int v, int major_div, int minor_div, int minor_mod) {
  return std::to_string(v / major_div) + "." + std::to_string(v / minor_div % minor_mod);
}

// The kernel driver's version from /proc/driver/nvidia/version ("... Kernel Module  570.86.15
// ...").
std::string kernel_driver_version() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(in, line)) return "";
  const std::string marker = "Kernel Module";
  const auto at = line.find(marker);
  const auto start = at == std::string::npos ? at : line.find_first_not_of(' ', at + marker.size());
  if (start == std::string::npos) return "";
  return line.substr(start, line.find(' ', start) - start);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  Options o;
  std::string command = "mpirun -np " + std::to_string(nranks) + " syncsim-p2p-probe";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    command += " " + a;
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        if (rank == 0) std::fprintf(stderr, "syncsim-p2p-probe: %s: expected a value\n", a.c_str());
        MPI_Finalize();
        std::exit(2);
      }
      command += std::string(" ") + argv[i + 1];
      return argv[++i];
    };
    if (a == "--out") {
      o.out = next();
    } else if (a == "--table") {
      o.table = next();
    } else if (a == "--repeats") {
      o.repeats = std::max(2, std::atoi(next().c_str()));
    } else if (a == "--iters") {
      o.iters = std::max(1, std::atoi(next().c_str()));
    } else if (a == "--min-bytes") {
      o.min_bytes = std::max(4LL, std::atoll(next().c_str()));
    } else if (a == "--max-bytes") {
      o.max_bytes = std::atoll(next().c_str());
    } else {
      if (rank == 0) {
        std::fprintf(
            stderr,
            "usage: mpirun -np 2 --host A,B syncsim-p2p-probe [--out FILE] [--table FILE.json] "
            "[--repeats N] [--iters N] [--min-bytes B] [--max-bytes B]\n");
      }
      MPI_Finalize();
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  if (nranks < 2 || o.max_bytes < o.min_bytes) {
    if (rank == 0)
      std::fprintf(stderr,
                   "syncsim-p2p-probe: expected >= 2 MPI ranks and --min-bytes <= --max-bytes\n");
    MPI_Finalize();
    return 2;
  }

  // One GPU per rank: the rank's index among the ranks of its node.
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int local = 0;
  MPI_Comm_rank(node, &local);
  int gpus = 0;
  P2P_CUDA(cudaGetDeviceCount(&gpus));
  P2P_CHECK("finding a GPU", gpus > 0, "no CUDA device");
  const int device = local % gpus;
  P2P_CUDA(cudaSetDevice(device));
  cudaDeviceProp prop{};
  P2P_CUDA(cudaGetDeviceProperties(&prop, device));
  char host[256] = {};
  gethostname(host, sizeof host - 1);

  ncclUniqueId id;
  if (rank == 0) P2P_NCCL(ncclGetUniqueId(&id));
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t comm;
  P2P_NCCL(ncclCommInitRank(&comm, nranks, id, rank));
  cudaStream_t stream;
  P2P_CUDA(cudaStreamCreate(&stream));
  void* send = nullptr;
  void* recv = nullptr;
  P2P_CUDA(cudaMalloc(&send, static_cast<size_t>(o.max_bytes)));
  P2P_CUDA(cudaMalloc(&recv, static_cast<size_t>(o.max_bytes)));
  P2P_CUDA(cudaMemset(send, 1, static_cast<size_t>(o.max_bytes)));
  const int to = (rank + 1) % nranks;
  const int from = (rank - 1 + nranks) % nranks;

  cal::CalibrationProfile profile;
  std::vector<cal::Measurement> means;
  double line_spread = 0;
  if (rank == 0) {
    std::printf("# syncsim-p2p-probe: %d ranks, rank 0 on %s GPU %d (%s)\n", nranks, host, device,
                prop.name);
    std::printf("# %12s %10s %10s %10s %10s %10s %10s\n", "bytes", "time_us", "algbw_GBps",
                "stddev_us", "min_us", "median_us", "max_us");
  }
  cudaEvent_t start, stop;
  P2P_CUDA(cudaEventCreate(&start));
  P2P_CUDA(cudaEventCreate(&stop));
  for (long long bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= 2) {
    const size_t count = static_cast<size_t>(bytes) / 4;  // floats, as nccl-tests
    auto exchange = [&] {
      P2P_NCCL(ncclGroupStart());
      P2P_NCCL(ncclSend(send, count, ncclFloat, to, comm, stream));
      P2P_NCCL(ncclRecv(recv, count, ncclFloat, from, comm, stream));
      P2P_NCCL(ncclGroupEnd());
    };
    std::vector<double> us;
    for (int r = 0; r < o.repeats; ++r) {
      for (int w = 0; w < 5; ++w) exchange();
      P2P_CUDA(cudaStreamSynchronize(stream));
      MPI_Barrier(MPI_COMM_WORLD);
      P2P_CUDA(cudaEventRecord(start, stream));
      for (int i = 0; i < o.iters; ++i) exchange();
      P2P_CUDA(cudaEventRecord(stop, stream));
      P2P_CUDA(cudaEventSynchronize(stop));
      float ms = 0;
      P2P_CUDA(cudaEventElapsedTime(&ms, start, stop));
      // The slowest rank's time, as nccl-tests reports it.
      double mine = static_cast<double>(ms) * 1e3 / o.iters, slowest = 0;
      MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      us.push_back(slowest);
    }
    if (rank == 0) {
      const std::string name =
          "nccl_send_recv_" + std::to_string(nranks) + "r_" + std::to_string(bytes) + "B";
      const cal::ProbeValue v = cal::summarize(name, "us", us);
      profile.probes.push_back(v);
      if (v.mean > 0) line_spread = std::max(line_spread, v.stddev / v.mean);
      cal::Measurement m;
      m.op = "send_recv";
      m.ranks = nranks;
      m.bytes = bytes;
      m.count = static_cast<int64_t>(count);
      m.type = "float";
      m.redop = "sum";
      m.root = -1;
      m.time_us = v.mean;
      m.algbw_GBps = static_cast<double>(bytes) / 1e3 / v.mean;
      m.busbw_GBps = m.algbw_GBps;  // sendrecv's bus factor is 1
      m.wrong = 0;
      means.push_back(m);
      std::printf("  %12lld %10.2f %10.2f %10.3f %10.2f %10.2f %10.2f\n", bytes, v.mean,
                  m.algbw_GBps, v.stddev, v.min, v.median, v.max);
    }
  }

  if (rank == 0) {
    int runtime = 0, driver = 0, nccl = 0;
    P2P_CUDA(cudaRuntimeGetVersion(&runtime));
    P2P_CUDA(cudaDriverGetVersion(&driver));
    P2P_NCCL(ncclGetVersion(&nccl));
    profile.source = command;
    profile.gpu_name = prop.name;
    profile.gpu_count = nranks;
    const std::string kernel_driver = kernel_driver_version();
    profile.driver_version = kernel_driver.empty()
                                 ? "cuda-driver-api " + version_string(driver, 1000, 10, 100)
                                 : kernel_driver;
    profile.cuda_version = version_string(runtime, 1000, 10, 100);
    profile.nccl_version = std::to_string(nccl / 10000) + "." + std::to_string(nccl / 100 % 100) +
                           "." + std::to_string(nccl % 100);
    profile.spread = line_spread;
    try {
      for (const auto& f : cal::fit_collectives(means)) {
        profile.collectives.push_back(cal::to_profile(f));
        profile.collectives.back().spread = line_spread;
        profile.collectives.back().samples = o.repeats;
        std::printf(
            "# send_recv %d ranks: latency %.2f us, algbw %.2f GB/s, %zu regime(s), max_rel_error "
            "%.3f\n",
            f.ranks, f.latency_us(), f.algbw_GBps(), f.regimes.size(), f.max_rel_error);
      }
    } catch (const cal::FitError& e) {
      std::printf("# send_recv fit: %s (the per-size values are still written)\n", e.what());
    }
    cal::write_profile_file(profile, o.out);
    std::printf("# wrote %s\n", o.out.c_str());
    if (!o.table.empty()) {
      std::ofstream t(o.table);
      t << "[\n";
      for (std::size_t i = 0; i < means.size(); ++i) {
        const auto& m = means[i];
        char buf[512];
        std::snprintf(
            buf, sizeof buf,
            "  {\"op\": \"send_recv\", \"ranks\": %d, \"bytes\": %lld, \"count\": %lld, \"type\": "
            "\"float\", "
            "\"redop\": \"sum\", \"root\": -1, \"placement\": \"out\", \"time_us\": %.6g, "
            "\"algbw_GBps\": %.6g, \"busbw_GBps\": %.6g, \"wrong\": 0}%s\n",
            m.ranks, static_cast<long long>(m.bytes), static_cast<long long>(m.count), m.time_us,
            m.algbw_GBps, m.busbw_GBps, i + 1 < means.size() ? "," : "");
        t << buf;
      }
      t << "]\n";
      std::printf("# wrote %s\n", o.table.c_str());
    }
  }
  P2P_CUDA(cudaEventDestroy(start));
  P2P_CUDA(cudaEventDestroy(stop));
  P2P_CUDA(cudaFree(send));
  P2P_CUDA(cudaFree(recv));
  P2P_CUDA(cudaStreamDestroy(stream));
  ncclCommDestroy(comm);
  MPI_Comm_free(&node);
  MPI_Finalize();
  return 0;
}

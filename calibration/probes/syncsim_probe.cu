// syncsim-probe: measures one GPU node and writes a calibration profile (calibration/profile.hpp).
//
//   syncsim-probe [--out FILE] [--repeats N] [--peak-bf16 TFLOPS] [--peak-fp16 TFLOPS]
//                 [--peak-fp8 TFLOPS] [--quick]
//
// Records the GPU name, the driver version (/proc/driver/nvidia/version, else the driver API
// version), the CUDA runtime and NCCL versions. Measures, each repeated N times (mean, stddev, min,
// median and max recorded per measurement; the profile's spread = max relative stddev):
//   - cuBLAS GEMM throughput (cublasGemmEx, fp32 accumulation) for bf16 and fp16 over transformer
//     shapes (tokens x hidden projections, QKV, MLP up/down) with warm-up and cudaEvent timing,
//     then a GEMM efficiency fit per dtype (alpha_beta_fit.hpp). Without --peak-* the peak is the
//     best measured throughput, so efficiencies are relative to the best observed shape.
//   - fp8 (E4M3 inputs, bf16 output, fp32 accumulation) through cublasLt on compute capability 8.9
//     and newer (Ada, Hopper, Blackwell); skipped, and said so, on older GPUs;
//   - device memory bandwidth (a float4 copy kernel; 2 bytes moved per byte copied);
//   - host<->device bandwidth, pinned and pageable (cudaMemcpy);
//   - peer-to-peer bandwidth and small-copy latency between GPU 0 and 1 when >= 2 GPUs can peer;
//   - kernel launch overhead (back-to-back empty kernels);
//   - with NCCL (SYNCSIM_HAVE_NCCL): an all_reduce / all_gather / reduce_scatter sweep over all
//   GPUs
//     of the node (one process, ncclCommInitAll): each size's time as a probe value with its
//     spread, and per op a fitted alpha-beta line with its spread and sample count.
// The two-node GPUDirect RDMA send/recv probe is a separate MPI program: syncsim_p2p_probe.cu.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#ifdef SYNCSIM_HAVE_NCCL
#include <nccl.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "calibration/alpha_beta_fit.hpp"
#include "calibration/profile.hpp"

namespace cal = syncsim::calibration;

namespace {

#define PROBE_CUDA(call)                                                                       \
  do {                                                                                         \
    cudaError_t err_ = (call);                                                                 \
    if (err_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "syncsim-probe: %s failed: %s\n", #call, cudaGetErrorString(err_)); \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)

#define PROBE_CUBLAS(call)                                                                         \
  do {                                                                                             \
    cublasStatus_t st_ = (call);                                                                   \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                                            \
      std::fprintf(stderr, "syncsim-probe: %s failed: status %d\n", #call, static_cast<int>(st_)); \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

// Milliseconds of `iters` calls of `body`, timed with events on `stream`, after `warmup` calls.
double time_ms(cudaStream_t stream, int warmup, int iters, const std::function<void()>& body) {
  for (int i = 0; i < warmup; ++i) body();
  cudaEvent_t a, b;
  PROBE_CUDA(cudaEventCreate(&a));
  PROBE_CUDA(cudaEventCreate(&b));
  PROBE_CUDA(cudaEventRecord(a, stream));
  for (int i = 0; i < iters; ++i) body();
  PROBE_CUDA(cudaEventRecord(b, stream));
  PROBE_CUDA(cudaEventSynchronize(b));
  float ms = 0;
  PROBE_CUDA(cudaEventElapsedTime(&ms, a, b));
  PROBE_CUDA(cudaEventDestroy(a));
  PROBE_CUDA(cudaEventDestroy(b));
  return static_cast<double>(ms);
}

__global__ void copy_kernel(const float4* __restrict__ in, float4* __restrict__ out, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    out[i] = in[i];
  }
}

__global__ void empty_kernel() {}

struct Probe {
  int repeats = 5;
  bool quick = false;
  cal::CalibrationProfile profile;

  // Every measurement goes into the profile with its spread over the repeated runs.
  cal::ProbeValue record(const std::string& name, const std::string& unit,
                         const std::vector<double>& v) {
    const cal::ProbeValue s = cal::summarize(name, unit, v);
    profile.probes.push_back(s);
    if (s.mean > 0) profile.spread = std::max(profile.spread, s.stddev / s.mean);
    std::printf("  %-34s %12.3f %-6s (stddev %.3f, min %.3f, median %.3f, max %.3f, %d runs)\n",
                name.c_str(), s.mean, unit.c_str(), s.stddev, s.min, s.median, s.max, s.samples);
    return s;
  }

  void device_bandwidth() {
    const size_t bytes = quick ? (size_t{256} << 20) : (size_t{1} << 30);
    const size_t n = bytes / sizeof(float4);
    float4 *in = nullptr, *out = nullptr;
    PROBE_CUDA(cudaMalloc(&in, bytes));
    PROBE_CUDA(cudaMalloc(&out, bytes));
    PROBE_CUDA(cudaMemset(in, 0, bytes));
    int sms = 0;
    PROBE_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    std::vector<double> gbps;
    for (int r = 0; r < repeats; ++r) {
      const double ms = time_ms(nullptr, 2, 10, [&] { copy_kernel<<<sms * 8, 512>>>(in, out, n); });
      gbps.push_back(2.0 * static_cast<double>(bytes) * 10 / (ms * 1e-3) / 1e9);
    }
    PROBE_CUDA(cudaGetLastError());
    record("hbm_copy_bandwidth", "GB/s", gbps);
    PROBE_CUDA(cudaFree(in));
    PROBE_CUDA(cudaFree(out));
  }

  void host_bandwidth() {
    const size_t bytes = quick ? (size_t{64} << 20) : (size_t{256} << 20);
    void* dev = nullptr;
    void* pinned = nullptr;
    PROBE_CUDA(cudaMalloc(&dev, bytes));
    PROBE_CUDA(cudaMallocHost(&pinned, bytes));
    std::vector<char> pageable(bytes, 1);
    std::memset(pinned, 1, bytes);
    struct Case {
      const char* name;
      void* dst;
      const void* src;
      cudaMemcpyKind kind;
    };
    const Case cases[] = {{"h2d_pinned_bandwidth", dev, pinned, cudaMemcpyHostToDevice},
                          {"d2h_pinned_bandwidth", pinned, dev, cudaMemcpyDeviceToHost},
                          {"h2d_pageable_bandwidth", dev, pageable.data(), cudaMemcpyHostToDevice},
                          {"d2h_pageable_bandwidth", pageable.data(), dev, cudaMemcpyDeviceToHost}};
    for (const auto& c : cases) {
      std::vector<double> gbps;
      for (int r = 0; r < repeats; ++r) {
        const double ms =
            time_ms(nullptr, 1, 5, [&] { PROBE_CUDA(cudaMemcpy(c.dst, c.src, bytes, c.kind)); });
        gbps.push_back(static_cast<double>(bytes) * 5 / (ms * 1e-3) / 1e9);
      }
      record(c.name, "GB/s", gbps);
    }
    PROBE_CUDA(cudaFree(dev));
    PROBE_CUDA(cudaFreeHost(pinned));
  }

  void peer_to_peer(int gpus) {
    if (gpus < 2) {
      std::printf("  p2p: skipped (one GPU)\n");
      return;
    }
    int can = 0;
    PROBE_CUDA(cudaDeviceCanAccessPeer(&can, 0, 1));
    if (!can) {
      std::printf("  p2p: skipped (GPU 0 cannot access GPU 1)\n");
      return;
    }
    const size_t bytes = quick ? (size_t{64} << 20) : (size_t{256} << 20);
    void *a = nullptr, *b = nullptr;
    PROBE_CUDA(cudaSetDevice(1));
    PROBE_CUDA(cudaDeviceEnablePeerAccess(0, 0));
    PROBE_CUDA(cudaMalloc(&b, bytes));
    PROBE_CUDA(cudaSetDevice(0));
    PROBE_CUDA(cudaDeviceEnablePeerAccess(1, 0));
    PROBE_CUDA(cudaMalloc(&a, bytes));
    std::vector<double> gbps, lat;
    for (int r = 0; r < repeats; ++r) {
      double ms = time_ms(nullptr, 1, 10,
                          [&] { PROBE_CUDA(cudaMemcpyPeerAsync(b, 1, a, 0, bytes, nullptr)); });
      gbps.push_back(static_cast<double>(bytes) * 10 / (ms * 1e-3) / 1e9);
      ms = time_ms(nullptr, 10, 100,
                   [&] { PROBE_CUDA(cudaMemcpyPeerAsync(b, 1, a, 0, 8, nullptr)); });
      lat.push_back(ms * 1e3 / 100);
    }
    record("p2p_bandwidth_gpu0_gpu1", "GB/s", gbps);
    record("p2p_latency_8B_gpu0_gpu1", "us", lat);
    PROBE_CUDA(cudaFree(a));
    PROBE_CUDA(cudaSetDevice(1));
    PROBE_CUDA(cudaFree(b));
    PROBE_CUDA(cudaSetDevice(0));
  }

  void launch_overhead() {
    std::vector<double> us;
    const int n = 2000;
    for (int r = 0; r < repeats; ++r) {
      const double ms = time_ms(nullptr, 100, n, [] { empty_kernel<<<1, 1>>>(); });
      us.push_back(ms * 1e3 / n);
    }
    PROBE_CUDA(cudaGetLastError());
    record("kernel_launch_overhead", "us", us);
  }

  struct Shape {
    int64_t m, n, k;
  };
  // The transformer's GEMMs: tokens x hidden projections (all multiples of 16, as fp8 needs).
  std::vector<Shape> transformer_shapes() const {
    const std::vector<int64_t> hiddens =
        quick ? std::vector<int64_t>{4096} : std::vector<int64_t>{4096, 8192};
    const std::vector<int64_t> tokens =
        quick ? std::vector<int64_t>{512, 4096} : std::vector<int64_t>{256, 1024, 4096, 16384};
    std::vector<Shape> shapes;
    for (int64_t hd : hiddens) {
      for (int64_t t : tokens) {
        shapes.push_back({t, 3 * hd, hd});  // QKV projection
        shapes.push_back({t, hd, hd});      // attention output
        shapes.push_back({t, 4 * hd, hd});  // MLP up
        shapes.push_back({t, hd, 4 * hd});  // MLP down
      }
    }
    return shapes;
  }

  void fit(const std::vector<cal::GemmSample>& samples, const char* dtype, double given_peak,
           double best) {
    const double peak = given_peak > 0 ? given_peak : best;
    try {
      profile.gemm.push_back(cal::fit_gemm(samples, dtype, peak));
      const auto& g = profile.gemm.back();
      std::printf(
          "  gemm %s fit: peak %.1f TFLOPS%s, e_max %.3f, intensity_half %.1f FLOP/B, "
          "max_rel_error %.3f\n",
          dtype, peak, given_peak > 0 ? "" : " (best measured)", g.e_max, g.intensity_half,
          g.max_rel_error);
    } catch (const cal::FitError& e) {
      std::printf("  gemm %s fit: %s\n", dtype, e.what());
    }
  }

  void gemm(double peak_bf16, double peak_fp16) {
    cublasHandle_t h;
    PROBE_CUBLAS(cublasCreate(&h));
    const std::vector<Shape> shapes = transformer_shapes();
    size_t max_elems = 0;
    for (const auto& s : shapes)
      max_elems = std::max({max_elems, size_t(s.m * s.k), size_t(s.k * s.n), size_t(s.m * s.n)});
    void *A = nullptr, *B = nullptr, *C = nullptr;
    PROBE_CUDA(cudaMalloc(&A, max_elems * 2));
    PROBE_CUDA(cudaMalloc(&B, max_elems * 2));
    PROBE_CUDA(cudaMalloc(&C, max_elems * 2));
    PROBE_CUDA(cudaMemset(A, 0, max_elems * 2));
    PROBE_CUDA(cudaMemset(B, 0, max_elems * 2));
    struct Dtype {
      const char* name;
      cudaDataType_t type;
      double peak;
    };
    const Dtype dtypes[] = {{"bf16", CUDA_R_16BF, peak_bf16}, {"fp16", CUDA_R_16F, peak_fp16}};
    const float alpha = 1.0f, beta = 0.0f;
    for (const auto& d : dtypes) {
      std::vector<cal::GemmSample> samples;
      double best = 0;
      for (const auto& s : shapes) {
        // Row-major C[m,n] = A[m,k] B[k,n] as column-major C^T = B^T A^T.
        auto run = [&] {
          PROBE_CUBLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, int(s.n), int(s.m), int(s.k),
                                    &alpha, B, d.type, int(s.n), A, d.type, int(s.k), &beta, C,
                                    d.type, int(s.n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        };
        std::vector<double> tflops;
        const double flop = 2.0 * double(s.m) * double(s.n) * double(s.k);
        const int iters = std::max(3, int(2e12 / flop));  // about 2 TFLOP of work per timing
        for (int r = 0; r < repeats; ++r) {
          const double ms = time_ms(nullptr, 3, iters, run);
          tflops.push_back(flop * iters / (ms * 1e-3) / 1e12);
        }
        char name[128];
        std::snprintf(name, sizeof name, "gemm_%s_%lldx%lldx%lld", d.name,
                      static_cast<long long>(s.m), static_cast<long long>(s.n),
                      static_cast<long long>(s.k));
        const cal::ProbeValue st = record(name, "TFLOPS", tflops);
        samples.push_back({s.m, s.n, s.k, d.name, st.mean});
        best = std::max(best, st.mean);
      }
      fit(samples, d.name, d.peak, best);
    }
    PROBE_CUDA(cudaFree(A));
    PROBE_CUDA(cudaFree(B));
    PROBE_CUDA(cudaFree(C));
    PROBE_CUBLAS(cublasDestroy(h));
  }

  // fp8 GEMMs through cublasLt: E4M3 A and B, bf16 C/D, fp32 accumulation and scale. cublasLt's
  // fp8 kernels take A transposed and B not ("TN"), so D[m,n] = A^T B with A stored k x m and B
  // k x n, column-major. Only throughput is measured (the inputs are zeros).
  void gemm_fp8(double peak_fp8, int compute_capability) {
#if CUDART_VERSION < 11080
    (void)peak_fp8;
    (void)compute_capability;
    std::printf("  gemm fp8: skipped (built with CUDA %d; fp8 types need CUDA 11.8)\n",
                CUDART_VERSION);
#else
    if (compute_capability < 89) {
      std::printf("  gemm fp8: skipped (compute capability %d.%d; fp8 needs 8.9 or newer)\n",
                  compute_capability / 10, compute_capability % 10);
      return;
    }
    cublasLtHandle_t lt;
    PROBE_CUBLAS(cublasLtCreate(&lt));
    const std::vector<Shape> shapes = transformer_shapes();
    size_t max_elems = 0;
    for (const auto& s : shapes)
      max_elems = std::max({max_elems, size_t(s.m * s.k), size_t(s.k * s.n), size_t(s.m * s.n)});
    size_t workspace_bytes = size_t{32} << 20;
    void *A = nullptr, *B = nullptr, *C = nullptr, *workspace = nullptr;
    PROBE_CUDA(cudaMalloc(&A, max_elems));
    PROBE_CUDA(cudaMalloc(&B, max_elems));
    PROBE_CUDA(cudaMalloc(&C, max_elems * 2));
    PROBE_CUDA(cudaMalloc(&workspace, workspace_bytes));
    PROBE_CUDA(cudaMemset(A, 0, max_elems));
    PROBE_CUDA(cudaMemset(B, 0, max_elems));
    const float alpha = 1.0f, beta = 0.0f;
    std::vector<cal::GemmSample> samples;
    double best = 0;
    for (const auto& s : shapes) {
      cublasLtMatmulDesc_t op;
      PROBE_CUBLAS(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
      const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
      PROBE_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
      PROBE_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
      cublasLtMatrixLayout_t la, lb, lc;
      PROBE_CUBLAS(
          cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, uint64_t(s.k), uint64_t(s.m), s.k));
      PROBE_CUBLAS(
          cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, uint64_t(s.k), uint64_t(s.n), s.k));
      PROBE_CUBLAS(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, uint64_t(s.m), uint64_t(s.n), s.m));
      cublasLtMatmulPreference_t pref;
      PROBE_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
      PROBE_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref,
                                                        CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                        &workspace_bytes, sizeof workspace_bytes));
      cublasLtMatmulHeuristicResult_t heuristic{};
      int found = 0;
      const cublasStatus_t st =
          cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 1, &heuristic, &found);
      char name[128];
      std::snprintf(name, sizeof name, "gemm_fp8_%lldx%lldx%lld", static_cast<long long>(s.m),
                    static_cast<long long>(s.n), static_cast<long long>(s.k));
      if (st != CUBLAS_STATUS_SUCCESS || found == 0) {
        std::printf("  %s: skipped (cublasLt has no fp8 algorithm for it, status %d)\n", name,
                    static_cast<int>(st));
      } else {
        auto run = [&] {
          PROBE_CUBLAS(cublasLtMatmul(lt, op, &alpha, A, la, B, lb, &beta, C, lc, C, lc,
                                      &heuristic.algo, workspace, workspace_bytes, nullptr));
        };
        const double flop = 2.0 * double(s.m) * double(s.n) * double(s.k);
        const int iters = std::max(3, int(4e12 / flop));
        std::vector<double> tflops;
        for (int r = 0; r < repeats; ++r) {
          const double ms = time_ms(nullptr, 3, iters, run);
          tflops.push_back(flop * iters / (ms * 1e-3) / 1e12);
        }
        const cal::ProbeValue v = record(name, "TFLOPS", tflops);
        samples.push_back({s.m, s.n, s.k, "fp8", v.mean});
        best = std::max(best, v.mean);
      }
      PROBE_CUBLAS(cublasLtMatmulPreferenceDestroy(pref));
      PROBE_CUBLAS(cublasLtMatrixLayoutDestroy(la));
      PROBE_CUBLAS(cublasLtMatrixLayoutDestroy(lb));
      PROBE_CUBLAS(cublasLtMatrixLayoutDestroy(lc));
      PROBE_CUBLAS(cublasLtMatmulDescDestroy(op));
    }
    if (!samples.empty()) fit(samples, "fp8", peak_fp8, best);
    PROBE_CUDA(cudaFree(A));
    PROBE_CUDA(cudaFree(B));
    PROBE_CUDA(cudaFree(C));
    PROBE_CUDA(cudaFree(workspace));
    PROBE_CUBLAS(cublasLtDestroy(lt));
#endif
  }

#ifdef SYNCSIM_HAVE_NCCL
  void nccl_sweep(int gpus) {
    int version = 0;
    ncclGetVersion(&version);
    profile.nccl_version = std::to_string(version / 10000) + "." +
                           std::to_string(version / 100 % 100) + "." +
                           std::to_string(version % 100);
    if (gpus < 2) {
      std::printf("  nccl: skipped (one GPU)\n");
      return;
    }
    std::vector<ncclComm_t> comms(static_cast<size_t>(gpus));
    std::vector<int> devs(static_cast<size_t>(gpus));
    for (int i = 0; i < gpus; ++i) devs[size_t(i)] = i;
    if (ncclCommInitAll(comms.data(), gpus, devs.data()) != ncclSuccess) {
      std::printf("  nccl: skipped (ncclCommInitAll failed)\n");
      return;
    }
    const size_t max_bytes = quick ? (size_t{64} << 20) : (size_t{1} << 30);
    std::vector<void*> send(static_cast<size_t>(gpus));
    std::vector<void*> recv(static_cast<size_t>(gpus));
    std::vector<cudaStream_t> streams(static_cast<size_t>(gpus));
    for (int i = 0; i < gpus; ++i) {
      PROBE_CUDA(cudaSetDevice(i));
      PROBE_CUDA(cudaMalloc(&send[size_t(i)], max_bytes));
      PROBE_CUDA(cudaMalloc(&recv[size_t(i)], max_bytes));
      PROBE_CUDA(cudaStreamCreate(&streams[size_t(i)]));
    }
    std::vector<cal::Measurement> ms;
    std::map<std::string, double> line_spread;  // "op/ranks" -> max relative stddev over its sizes
    for (const char* op : {"all_reduce", "all_gather", "reduce_scatter"}) {
      for (size_t bytes = 1024; bytes <= max_bytes; bytes *= 4) {
        const size_t count = bytes / 4;  // floats; AG/RS: per-rank share of the total `bytes`
        const size_t per_rank = count / size_t(gpus);
        if (per_rank == 0) continue;
        auto run = [&] {
          ncclGroupStart();
          for (int i = 0; i < gpus; ++i) {
            const auto u = size_t(i);
            if (std::strcmp(op, "all_reduce") == 0) {
              ncclAllReduce(send[u], recv[u], count, ncclFloat, ncclSum, comms[u], streams[u]);
            } else if (std::strcmp(op, "all_gather") == 0) {
              ncclAllGather(send[u], recv[u], per_rank, ncclFloat, comms[u], streams[u]);
            } else {
              ncclReduceScatter(send[u], recv[u], per_rank, ncclFloat, ncclSum, comms[u],
                                streams[u]);
            }
          }
          ncclGroupEnd();
        };
        const int iters = 20;
        std::vector<double> us;
        for (int r = 0; r < repeats; ++r) {
          PROBE_CUDA(cudaSetDevice(0));
          us.push_back(time_ms(streams[0], 5, iters, run) * 1e3 / iters);
          for (int i = 0; i < gpus; ++i) PROBE_CUDA(cudaStreamSynchronize(streams[size_t(i)]));
        }
        char name[128];
        std::snprintf(name, sizeof name, "nccl_%s_%dr_%zuB", op, gpus, bytes);
        const cal::ProbeValue st = record(name, "us", us);
        const std::string key = std::string(op) + "/" + std::to_string(gpus);
        if (st.mean > 0) line_spread[key] = std::max(line_spread[key], st.stddev / st.mean);
        cal::Measurement m;
        m.op = op;
        m.ranks = gpus;
        m.bytes = int64_t(std::strcmp(op, "all_reduce") == 0 ? bytes : per_rank * 4 * size_t(gpus));
        m.count = int64_t(std::strcmp(op, "all_reduce") == 0 ? count : per_rank);
        m.type = "float";
        m.redop = std::strcmp(op, "all_gather") == 0 ? "none" : "sum";
        m.time_us = st.mean;
        m.algbw_GBps = double(m.bytes) / 1e3 / st.mean;
        ms.push_back(m);
      }
    }
    for (const auto& f : cal::fit_collectives(ms)) {
      profile.collectives.push_back(cal::to_profile(f));
      profile.collectives.back().spread = line_spread[f.op + "/" + std::to_string(f.ranks)];
      profile.collectives.back().samples = repeats;
      std::printf(
          "  nccl %-15s %d ranks: latency %.2f us, algbw %.2f GB/s, %zu regime(s), max_rel_error "
          "%.3f\n",
          f.op.c_str(), f.ranks, f.latency_us(), f.algbw_GBps(), f.regimes.size(), f.max_rel_error);
    }
    for (int i = 0; i < gpus; ++i) {
      PROBE_CUDA(cudaSetDevice(i));
      PROBE_CUDA(cudaFree(send[size_t(i)]));
      PROBE_CUDA(cudaFree(recv[size_t(i)]));
      PROBE_CUDA(cudaStreamDestroy(streams[size_t(i)]));
      ncclCommDestroy(comms[size_t(i)]);
    }
    PROBE_CUDA(cudaSetDevice(0));
  }
#endif
};

std::string cuda_version_string(int v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

// The kernel driver's version ("570.86.15") from /proc/driver/nvidia/version ("NVRM version: NVIDIA
// UNIX x86_64 Kernel Module  570.86.15  ..."); empty where that file does not exist.
std::string kernel_driver_version() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(in, line)) return "";
  const std::string marker = "Kernel Module";
  const auto at = line.find(marker);
  if (at == std::string::npos) return "";
  const auto start = line.find_first_not_of(' ', at + marker.size());
  if (start == std::string::npos) return "";
  return line.substr(start, line.find(' ', start) - start);
}

}  // namespace

int main(int argc, char** argv) {
  std::string out = "calibration-profile.yaml";
  Probe p;
  double peak_bf16 = 0, peak_fp16 = 0, peak_fp8 = 0;
  std::string command = "syncsim-probe";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    command += " " + a;
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "syncsim-probe: %s: expected a value\n", a.c_str());
        std::exit(2);
      }
      command += std::string(" ") + argv[i + 1];
      return argv[++i];
    };
    if (a == "--out") {
      out = next();
    } else if (a == "--repeats") {
      p.repeats = std::max(2, std::atoi(next().c_str()));
    } else if (a == "--peak-bf16") {
      peak_bf16 = std::atof(next().c_str());
    } else if (a == "--peak-fp16") {
      peak_fp16 = std::atof(next().c_str());
    } else if (a == "--peak-fp8") {
      peak_fp8 = std::atof(next().c_str());
    } else if (a == "--quick") {
      p.quick = true;
    } else {
      std::fprintf(stderr,
                   "usage: syncsim-probe [--out FILE] [--repeats N] [--peak-bf16 TFLOPS] "
                   "[--peak-fp16 TFLOPS] "
                   "[--peak-fp8 TFLOPS] [--quick]\n");
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {
    std::fprintf(stderr, "syncsim-probe: no CUDA device found\n");
    return 1;
  }
  cudaDeviceProp prop{};
  PROBE_CUDA(cudaGetDeviceProperties(&prop, 0));
  int driver = 0, runtime = 0;
  PROBE_CUDA(cudaDriverGetVersion(&driver));
  PROBE_CUDA(cudaRuntimeGetVersion(&runtime));
  p.profile.source = command;
  p.profile.gpu_name = prop.name;
  p.profile.gpu_count = gpus;
  // The kernel driver's version; without /proc/driver/nvidia, the CUDA version the driver supports.
  const std::string kernel_driver = kernel_driver_version();
  p.profile.driver_version =
      kernel_driver.empty() ? "cuda-driver-api " + cuda_version_string(driver) : kernel_driver;
  p.profile.cuda_version = cuda_version_string(runtime);
  const int compute_capability = prop.major * 10 + prop.minor;
  std::printf("syncsim-probe: %s (sm_%d) x %d, driver %s (CUDA %s), runtime %s\n", prop.name,
              compute_capability, gpus, p.profile.driver_version.c_str(),
              cuda_version_string(driver).c_str(), p.profile.cuda_version.c_str());
  PROBE_CUDA(cudaSetDevice(0));
  p.launch_overhead();
  p.device_bandwidth();
  p.host_bandwidth();
  p.peer_to_peer(gpus);
  p.gemm(peak_bf16, peak_fp16);
  p.gemm_fp8(peak_fp8, compute_capability);
#ifdef SYNCSIM_HAVE_NCCL
  p.nccl_sweep(gpus);
#else
  std::printf("  nccl: skipped (built without NCCL headers/library)\n");
#endif
  cal::write_profile_file(p.profile, out);
  std::printf("syncsim-probe: wrote %s (spread %.4f)\n", out.c_str(), p.profile.spread);
  return 0;
}

#pragma once
// GPU presets from vendor datasheets and an achieved-efficiency model for training compute, used
// until a calibration profile supplies measured values.
#include <optional>
#include <string>
#include <vector>

namespace syncsim::models {

enum class DType : uint8_t { Bf16, Fp16, Fp8, Tf32 };

struct GpuSpec {
  std::string name;
  double bf16_tflops = 0;  // dense peak, no sparsity
  double fp16_tflops = 0;
  double fp8_tflops = 0;  // 0 where unsupported
  double tf32_tflops = 0;
  double hbm_bytes_per_s = 0;
  double nvlink_bytes_per_s = 0;  // per direction, per GPU, signalling rate (datasheet)
  double memory_bytes = 0;
  // NVLink as NCCL sees it: the generation, links per GPU and NCCL's per-link data bandwidth
  // (src/graph/topo.h: SM80_NVLINK_BW 20.0, SM90_NVLINK_BW 20.6, SM100_NVLINK_BW 40.1 GB/s, against
  // 25 / 25 / 50 GB/s signalling per link and direction). links x that rate is what NCCL's copy
  // kernels get out of a GPU's NVLinks; the fabric's NVLink port defaults to it (scenario loader).
  uint32_t nvlink_generation = 0;
  uint32_t nvlink_links = 0;
  double nccl_nvlink_link_bytes_per_s = 0;
  // NVSwitch generation 3 or later with NVLink SHARP (multimem reductions in the switch): the
  // HGX H100/H200/B200 baseboards. NCCL's NVLS algorithms need it.
  bool nvswitch_sharp = false;
  uint32_t compute_capability = 0;  // 80 Ampere, 90 Hopper, 100 Blackwell: NCCL's tables
  uint32_t sm_count = 0;            // streaming multiprocessors (datasheet / whitepaper)
  // PCIe generation of the GPU-NIC path (x16), which NCCL's search rates (nccl_channels.hpp).
  uint32_t pcie_generation = 0;
  // Fraction of the dense peak the best-shaped GEMM reaches: the Maximum Achievable Matmul FLOPS
  // (MAMF) of stas00/ml-engineering's comparison table (compute/accelerator/README.md, BF16, a
  // sweep of shapes for the fastest): A100 SXM 271.2 of 312 TFLOPS (0.869), H100 SXM 794.5 of 989
  // (0.803), B200 about 1745 of 2250 (0.776). Each preset sets its own (gpu.cpp); a calibration
  // profile's measurement replaces it. The shape model of gemm_seconds takes it from there.
  double max_gemm_efficiency = 0.803;
  double kernel_launch_s = 4e-6;  // per kernel, CUDA launch + tail
  // From a calibration profile's GEMM fit: when > 0, a GEMM's efficiency is
  // max_gemm_efficiency * I / (I + gemm_intensity_half), I = 2mnk / ((mk + kn + mn) * bytes per
  // element) (the fitted curve), instead of the wave-quantization model.
  double gemm_intensity_half = 0;
  // From a calibration profile's attention entry (a profiler trace's flash-attention calls with
  // shapes): the achieved rate in TFLOPS of attention in the dtype it runs in (BF16 under FP8
  // training), by FlashAttention's FLOP count. 0: attention runs as two batched GEMMs per head
  // through the GEMM model (step_model.cpp).
  double attention_tflops = 0;
  std::string calibrated_from{};  // the profile's path, empty for datasheet presets
};

// a100 (SXM4 80GB), h100 (SXM5), h200 (SXM), b200 (HGX), gb200 (one GPU of an NVL72 rack):
// NVIDIA datasheets.

// links x NCCL's per-link rate: the NVLink bandwidth per GPU and direction NCCL's copies reach.
double nccl_nvlink_bytes_per_s(const GpuSpec& gpu);
std::optional<GpuSpec> gpu_preset(const std::string& name);
std::vector<std::string> gpu_preset_names();

double peak_flops(const GpuSpec& gpu, DType dtype);

// Time of one GEMM (m x k) * (k x n) on this GPU: a roofline of compute at max_gemm_efficiency and
// memory traffic of the three matrices, whichever is slower, plus one launch. The compute side
// loses efficiency on shapes that do not fill the GPU, as cuBLAS's tiled kernels do:
// - wave quantization: 128 x 128 output tiles over the SMs, the last wave partly idle;
// - split-K: when the tiles do not fill the SMs and k is deep, k is split into chunks of at least
//   1024 so that tiles x splits work units run at once (cuBLAS's split-K / stream-K kernels);
// - k depth: each work unit's pipeline fill and epilogue cost about one more 128-deep k step,
//   k / (k + 128) of the peak.
// Checked against XLA's measured sm_90 BF16 table (tests/models/test_gemm_model.cpp): 15 % mean
// |error| over 25 shapes from 256 to 4096, within 10 % where m, n >= 2048 and k >= 1024. A
// calibration profile's fit (gemm_intensity_half) replaces the shape terms.
double gemm_seconds(const GpuSpec& gpu, DType dtype, double m, double n, double k);

}  // namespace syncsim::models

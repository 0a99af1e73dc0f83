#include "models/gpu.hpp"

#include <algorithm>
#include <cmath>

namespace syncsim::models {

namespace {

std::vector<GpuSpec> presets() {
  // Dense TFLOP/s; HBM and NVLink in bytes/s (NVLink per direction = half the datasheet's total).
  // NVLink links per GPU: A100 12 x NVLink3, H100/H200 18 x NVLink4, B200 18 x NVLink5 (NVIDIA
  // datasheets: 600 GB/s, 900 GB/s, 1.8 TB/s bidirectional). SM counts: A100 108, H100/H200 SXM5
  // 132 (Hopper whitepaper), B200 148 (Blackwell datasheet). NCCL's per-link rates: see gpu.hpp.
  // PCIe: A100 Gen4, H100/H200 Gen5 (datasheets); B200 Gen5 on the GPU-NIC path, as the
  // ConnectX-7 NICs of HGX B200 systems are PCIe Gen5 x16 devices.
  // GEMM ceilings: the MAMF table (gpu.hpp). H200 (the same GH100 at the same clocks) takes
  // H100's fraction and GB200 B200's: no MAMF of their own is published there.
  return {
      GpuSpec{.name = "a100",
              .bf16_tflops = 312,
              .fp16_tflops = 312,
              .fp8_tflops = 0,
              .tf32_tflops = 156,
              .hbm_bytes_per_s = 2.039e12,
              .nvlink_bytes_per_s = 300e9,
              .memory_bytes = 80e9,
              .nvlink_generation = 3,
              .nvlink_links = 12,
              .nccl_nvlink_link_bytes_per_s = 20.0e9,
              .nvswitch_sharp = false,
              .compute_capability = 80,
              .sm_count = 108,
              .pcie_generation = 4,
              .max_gemm_efficiency = 271.2 / 312},
      GpuSpec{.name = "h100",
              .bf16_tflops = 989,
              .fp16_tflops = 989,
              .fp8_tflops = 1979,
              .tf32_tflops = 494,
              .hbm_bytes_per_s = 3.35e12,
              .nvlink_bytes_per_s = 450e9,
              .memory_bytes = 80e9,
              .nvlink_generation = 4,
              .nvlink_links = 18,
              .nccl_nvlink_link_bytes_per_s = 20.6e9,
              .nvswitch_sharp = true,
              .compute_capability = 90,
              .sm_count = 132,
              .pcie_generation = 5,
              .max_gemm_efficiency = 794.5 / 989},
      GpuSpec{.name = "h200",
              .bf16_tflops = 989,
              .fp16_tflops = 989,
              .fp8_tflops = 1979,
              .tf32_tflops = 494,
              .hbm_bytes_per_s = 4.8e12,
              .nvlink_bytes_per_s = 450e9,
              .memory_bytes = 141e9,
              .nvlink_generation = 4,
              .nvlink_links = 18,
              .nccl_nvlink_link_bytes_per_s = 20.6e9,
              .nvswitch_sharp = true,
              .compute_capability = 90,
              .sm_count = 132,
              .pcie_generation = 5,
              .max_gemm_efficiency = 794.5 / 989},
      GpuSpec{.name = "b200",
              .bf16_tflops = 2250,
              .fp16_tflops = 2250,
              .fp8_tflops = 4500,
              .tf32_tflops = 1100,
              .hbm_bytes_per_s = 8e12,
              .nvlink_bytes_per_s = 900e9,
              .memory_bytes = 180e9,
              .nvlink_generation = 5,
              .nvlink_links = 18,
              .nccl_nvlink_link_bytes_per_s = 40.1e9,
              .nvswitch_sharp = true,
              .compute_capability = 100,
              .sm_count = 148,
              .pcie_generation = 5,
              .max_gemm_efficiency = 1745.0 / 2250},
      // One GPU of a GB200 NVL72 rack (NVIDIA GB200 NVL72 datasheet, per rack / 72, dense =
      // sparse / 2: BF16 2.5, FP8 5, TF32 1.25 PFLOP/s; HBM3e 576 TB/s and 13.4 TB). Its 72 GPUs
      // share one NVLink domain through the NVLink switch trays: model a rack as one host of 72
      // GPUs (scenarios/gb200-nvl72.yaml). SM count as B200's; NICs (ConnectX-7) on PCIe Gen5.
      GpuSpec{.name = "gb200",
              .bf16_tflops = 2500,
              .fp16_tflops = 2500,
              .fp8_tflops = 5000,
              .tf32_tflops = 1250,
              .hbm_bytes_per_s = 8e12,
              .nvlink_bytes_per_s = 900e9,
              .memory_bytes = 186e9,
              .nvlink_generation = 5,
              .nvlink_links = 18,
              .nccl_nvlink_link_bytes_per_s = 40.1e9,
              .nvswitch_sharp = true,
              .compute_capability = 100,
              .sm_count = 148,
              .pcie_generation = 5,
              .max_gemm_efficiency = 1745.0 / 2250},
  };
}

constexpr double kTile = 128.0;
// Split-K chunks no shallower than this (gemm_seconds).
constexpr double kMinSplitDepth = 1024.0;
// Presets without an SM count (a calibrated GPU keeps its preset's): H100 SXM's.
constexpr double kDefaultSms = 132.0;

}  // namespace

std::optional<GpuSpec> gpu_preset(const std::string& name) {
  for (auto& g : presets()) {
    if (g.name == name) return g;
  }
  return std::nullopt;
}

std::vector<std::string> gpu_preset_names() {
  std::vector<std::string> names;
  for (const auto& g : presets()) names.push_back(g.name);
  return names;
}

double nccl_nvlink_bytes_per_s(const GpuSpec& gpu) {
  return gpu.nvlink_links * gpu.nccl_nvlink_link_bytes_per_s;
}

double peak_flops(const GpuSpec& gpu, DType dtype) {
  switch (dtype) {
    case DType::Bf16:
      return gpu.bf16_tflops * 1e12;
    case DType::Fp16:
      return gpu.fp16_tflops * 1e12;
    case DType::Fp8:
      return gpu.fp8_tflops * 1e12;
    case DType::Tf32:
      return gpu.tf32_tflops * 1e12;
  }
  return 0;
}

double gemm_seconds(const GpuSpec& gpu, DType dtype, double m, double n, double k) {
  const double flops = 2.0 * m * n * k;
  const double tiles = std::ceil(m / kTile) * std::ceil(n / kTile);
  const double sms = gpu.sm_count > 0 ? gpu.sm_count : kDefaultSms;
  const double splits =
      std::max(1.0, std::min(std::floor(sms / tiles), std::floor(k / kMinSplitDepth)));
  const double units = tiles * splits;
  const double waves = std::ceil(units / sms);
  const double wave_efficiency = units / (waves * sms);
  const double unit_depth = k / splits;
  const double depth_efficiency = unit_depth / (unit_depth + kTile);
  const double element_bytes = dtype == DType::Fp8 ? 1.0 : dtype == DType::Tf32 ? 4.0 : 2.0;
  double efficiency = gpu.max_gemm_efficiency * wave_efficiency * depth_efficiency;
  if (gpu.gemm_intensity_half > 0) {
    const double intensity = flops / ((m * k + k * n + m * n) * element_bytes);
    efficiency = gpu.max_gemm_efficiency * intensity / (intensity + gpu.gemm_intensity_half);
  }
  const double compute = flops / (peak_flops(gpu, dtype) * efficiency);
  const double memory = (m * k + k * n + m * n) * element_bytes / gpu.hbm_bytes_per_s;
  return std::max(compute, memory) + gpu.kernel_launch_s;
}

}  // namespace syncsim::models

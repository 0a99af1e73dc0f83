#include "models/attention_kernels.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace syncsim::models {

namespace {

// H100 80GB SXM5, head dimension 128, BF16, TFLOPS at 512, 1k, 2k, 4k, 8k and 16k tokens
// (FlashAttention-3 paper, Figures 5 and 6; see attention_kernels.hpp).
using Row = std::array<double, 6>;
struct KernelTable {
  Row forward_causal;
  Row forward_full;
  Row backward_full;
};
constexpr KernelTable kFlash2{
    {191, 260, 298, 319, 333, 335}, {309, 350, 362, 368, 370, 370}, {214, 260, 291, 310, 318, 322}};
constexpr KernelTable kCudnn{
    {315, 410, 484, 518, 529, 539}, {497, 574, 617, 609, 600, 595}, {305, 408, 465, 499, 518, 516}};
constexpr KernelTable kFlash3{
    {292, 423, 521, 579, 602, 616}, {467, 565, 625, 638, 646, 648}, {316, 424, 501, 542, 559, 561}};
constexpr double kTableGpuPeakTflops = 989;  // H100 SXM5 BF16 dense
constexpr double kFirstLength = 512;

double interpolate(const Row& row, double keys) {
  const double x = std::clamp(std::log2(std::max(keys, 1.0) / kFirstLength), 0.0,
                              static_cast<double>(row.size() - 1));
  const auto lower = static_cast<std::size_t>(std::floor(x));
  const std::size_t upper = std::min(lower + 1, row.size() - 1);
  const double f = x - static_cast<double>(lower);
  return row[lower] + f * (row[upper] - row[lower]);
}

}  // namespace

std::string_view attention_kernel_name(AttentionKernel k) {
  switch (k) {
    case AttentionKernel::Cudnn:
      return "cudnn";
    case AttentionKernel::Flash2:
      return "flash2";
    case AttentionKernel::Flash3:
      return "flash3";
    case AttentionKernel::Unfused:
      return "unfused";
  }
  return "unfused";
}

double attention_flops_per_s(const GpuSpec& gpu, AttentionKernel kernel, bool backward,
                             double keys) {
  const KernelTable& table = kernel == AttentionKernel::Flash2   ? kFlash2
                             : kernel == AttentionKernel::Flash3 ? kFlash3
                                                                 : kCudnn;
  const double forward = interpolate(table.forward_causal, keys);
  const double tflops = backward ? interpolate(table.backward_full, keys) * forward /
                                       interpolate(table.forward_full, keys)
                                 : forward;
  return tflops / kTableGpuPeakTflops * gpu.bf16_tflops * 1e12;
}

}  // namespace syncsim::models

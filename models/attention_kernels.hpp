#pragma once
// Fused attention kernels at their published rates: the time of one causal attention call from
// FlashAttention's FLOP count and the rate a kernel reaches at that sequence length.
#include <cstdint>
#include <string_view>

#include "models/gpu.hpp"

namespace syncsim::models {

// Which attention kernel a framework runs.
// - cudnn: cuDNN's fused flash attention, what Transformer Engine's DotProductAttention runs on
//   Hopper and Blackwell (Megatron-Core / NeMo).
// - flash2: FlashAttention-2, what PyTorch's scaled_dot_product_attention dispatches to on CUDA
//   (its flash backend; torchtitan's Llama).
// - flash3: FlashAttention-3, Hopper only.
// - unfused: the scores and weighted values as two batched GEMMs with the s x s scores in HBM
//   (models/step_model.cpp's GEMM path), for frameworks without a fused kernel.
enum class AttentionKernel : uint8_t { Cudnn, Flash2, Flash3, Unfused };
std::string_view attention_kernel_name(AttentionKernel k);

// Achieved rate in FLOP/s of one fused attention call, forward or backward, with a causal mask,
// head dimension 128, BF16, over `keys` keys (the sequence length). Counted as FlashAttention's
// benchmark counts it: 4 b h s_q s_k d forward, halved under the causal mask, and 2.5 times the
// forward's count backward.
//
// Source: Shah et al. 2024, FlashAttention-3 (arXiv 2407.08608), Figures 5 and 6, measured on an
// H100 80GB SXM5 at 512 to 16k tokens (batch x sequence = 16k, 16 heads of 128): forward with the
// causal mask for FlashAttention-2, cuDNN and FlashAttention-3; backward without it (the paper
// shows no causal backward, so the causal backward is the non-causal rate times the forward's
// causal / non-causal ratio at the same length, an estimate). Between the measured lengths the
// rate is interpolated in log2(length); beyond them it is held.
//
// Other GPUs: each kernel reaches the same fraction of the GPU's BF16 peak as it does on H100
// (FlashAttention-2's paper reports 50-73 % of the A100's peak forward, which is where Hopper's
// native kernels sit; no Blackwell table is published there). An estimate: expect +-20 %.
double attention_flops_per_s(const GpuSpec& gpu, AttentionKernel kernel, bool backward,
                             double keys);

}  // namespace syncsim::models

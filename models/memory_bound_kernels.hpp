#pragma once
// The memory-bound kernels of a transformer block and of the output head (norms, rotary
// embedding, the MLP's activation, residual adds, FP8 casts, the loss), counted op by op in bytes
// through HBM and in kernel launches, for the three ways frameworks run them.
#include <cstdint>
#include <string_view>

#include "models/gpu.hpp"
#include "models/transformer.hpp"

namespace syncsim::models {

// How a framework runs the pointwise work between the GEMMs and attention.
// - fused: Megatron-Core with Transformer Engine (NeMo): RMSNorm fused into the next linear
//   layer's input (TE's LayerNormLinear), fused rotary embedding, fused SwiGLU (bias_swiglu),
//   fused residual add, FP8 casts fused with the transposes TE needs (cast_transpose); fused
//   QKV and gate/up projections; fused vocabulary-parallel cross entropy.
// - compiled: torch.compile (Inductor) over a PyTorch model: each chain of pointwise ops between
//   two GEMMs is one kernel that reads its inputs and writes its outputs once.
// - eager: PyTorch eager, op by op, as torchtitan's Llama runs without compile (its default,
//   `compile = false`): RMSNorm in FP32 as eight kernels, rotary embedding through complex FP32
//   tensors, GQA's keys and values repeated to every head before attention, the loss in FP32,
//   separate Q, K, V and gate, up projections.
enum class KernelFusion : uint8_t { Fused, Compiled, Eager };
std::string_view kernel_fusion_name(KernelFusion f);

struct MemoryBoundWork {
  double bytes = 0;                          // through HBM, read + written
  double kernels = 0;                        // launches
  double seconds(const GpuSpec& gpu) const;  // bytes at the HBM rate plus a launch each
  MemoryBoundWork& operator+=(const MemoryBoundWork& o) {
    bytes += o.bytes;
    kernels += o.kernels;
    return *this;
  }
};

struct MemoryBoundPass {
  MemoryBoundWork forward;
  MemoryBoundWork backward;
};

// One block on one GPU per micro-batch of `tokens` tokens (b x s / CP), its linear layers split
// `tensor` ways (heads and the MLP's width); norms and residual adds run on every tensor-parallel
// rank's full tokens unless sequence parallelism divides them by `tensor`. `fp8` adds the casts
// of the linear layers' inputs and output gradients.
//
// Bytes per element, forward / backward (BF16 activations, 2 bytes; FP32 intermediates, 4):
//   fused: norm 4 / 6, rotary 4 / 4 over q and k, SwiGLU 6 / 10 per MLP column (GELU 4 / 6),
//     residual add 6 / 6, FP8 cast-transpose 4 / 4 of each linear input that is not a norm's
//     output (the attention output, the activation) and of each linear output gradient;
//   compiled: norm and the residual add before it as one kernel 8 / 12, the rest as fused;
//   eager: norm 36 (to FP32, square, mean, add, rsqrt, multiply, back to BF16, weight), rotary
//     20 per tensor (to FP32, complex multiply, back), SwiGLU 10 (silu, multiply), residual 6,
//     GQA's repeat of keys and values (2 per element of the repeated tensors) and the copy of
//     attention's output into token order (4). Eager backward is counted as twice the forward:
//     each op's backward reads its saved inputs and the incoming gradient and writes one
//     gradient per input. These counts follow the frameworks' code, not a measurement.
MemoryBoundPass block_memory_bound(const TransformerShape& model, KernelFusion fusion, bool fp8,
                                   double tokens, double tensor, bool sequence_parallel);

// The output head's pointwise work on one GPU per micro-batch: the final norm and the cross
// entropy over tokens x vocab / tensor logits (fused: read the BF16 logits once forward, read them
// and write their gradient backward; compiled the same with one more read; eager: upcast to FP32,
// log-softmax and its backward, 14 / 22 bytes per logit).
MemoryBoundPass head_memory_bound(const TransformerShape& model, KernelFusion fusion, double tokens,
                                  double tensor, bool sequence_parallel);

}  // namespace syncsim::models

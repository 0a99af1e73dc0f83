#include "models/memory_bound_kernels.hpp"

namespace syncsim::models {

double MemoryBoundWork::seconds(const GpuSpec& gpu) const {
  return bytes / gpu.hbm_bytes_per_s + kernels * gpu.kernel_launch_s;
}

std::string_view kernel_fusion_name(KernelFusion f) {
  switch (f) {
    case KernelFusion::Fused:
      return "fused";
    case KernelFusion::Compiled:
      return "compiled";
    case KernelFusion::Eager:
      return "eager";
  }
  return "fused";
}

MemoryBoundPass block_memory_bound(const TransformerShape& m, KernelFusion fusion, bool fp8,
                                   double tokens, double tensor, bool sequence_parallel) {
  const double t = tensor < 1 ? 1.0 : tensor;
  const double h = m.hidden;
  const double kv = static_cast<double>(m.kv_heads) * (h / m.heads);
  // Elements each op touches on this GPU.
  const double residual = tokens * h / (sequence_parallel ? t : 1.0);  // norms, residual adds
  const double rotary = tokens * (h + kv) / t;                         // queries and keys
  const double mlp = tokens * m.ffn / t;                               // the activation's output
  const bool swiglu = m.mlp == MlpKind::SwiGlu;
  const double attention_out = tokens * h / t;

  MemoryBoundPass p;
  switch (fusion) {
    case KernelFusion::Fused:
    case KernelFusion::Compiled: {
      const bool compiled = fusion == KernelFusion::Compiled;
      // Two norms, each with the residual add before it fused in when compiled; otherwise the
      // two residual adds as kernels of their own.
      const double norm_forward = compiled ? 8 : 4;
      const double norm_backward = compiled ? 12 : 6;
      p.forward += {2 * norm_forward * residual, 2};
      p.backward += {2 * norm_backward * residual, 2};
      if (!compiled) {
        p.forward += {2 * 6 * residual, 2};
        p.backward += {2 * 6 * residual, 2};
      }
      p.forward += {4 * rotary, 2};
      p.backward += {4 * rotary, 2};
      p.forward += {(swiglu ? 6 : 4) * mlp, 1};
      p.backward += {(swiglu ? 10 : 6) * mlp, 1};
      if (compiled && kv < h) {
        // The repeated keys and values scaled_dot_product_attention is given.
        p.forward += {2 * 2 * tokens * h / t, 2};
        p.backward += {2 * 2 * tokens * h / t, 2};
      }
      break;
    }
    case KernelFusion::Eager: {
      MemoryBoundWork forward;
      forward += {2 * 36 * residual, 16};  // two RMSNorms, eight kernels each
      forward += {20 * rotary, 6};         // three kernels for each of q and k
      forward += {(swiglu ? 10 : 4) * mlp, swiglu ? 2.0 : 1.0};
      forward += {2 * 6 * residual, 2};
      if (kv < h) forward += {2 * 2 * tokens * h / t, 2};  // repeat_kv of keys and values
      forward += {4 * attention_out, 1};                   // attention output to token order
      p.forward = forward;
      p.backward = {2 * forward.bytes, 2 * forward.kernels};
      break;
    }
  }
  if (fp8) {
    // Cast-transposes: the attention output and the activation (forward); the four linear
    // layers' output gradients (backward). A norm's output is cast inside the norm's kernel.
    const double qkv_out = tokens * (h + 2 * kv) / t;
    const double mlp_up_out = tokens * (swiglu ? 2.0 : 1.0) * m.ffn / t;
    const double per = fusion == KernelFusion::Eager ? 8 : 4;  // eager: amax, scale, cast
    const double launches = fusion == KernelFusion::Eager ? 3 : 1;
    p.forward += {per * (attention_out + mlp), 2 * launches};
    p.backward += {per * (qkv_out + residual + mlp_up_out + residual), 4 * launches};
  }
  return p;
}

MemoryBoundPass head_memory_bound(const TransformerShape& m, KernelFusion fusion, double tokens,
                                  double tensor, bool sequence_parallel) {
  const double t = tensor < 1 ? 1.0 : tensor;
  const double residual = tokens * m.hidden / (sequence_parallel ? t : 1.0);
  const double logits = tokens * m.vocab / t;
  MemoryBoundPass p;
  switch (fusion) {
    case KernelFusion::Fused:
      p.forward = {4 * residual + 2 * logits, 2};
      p.backward = {6 * residual + 4 * logits, 2};
      break;
    case KernelFusion::Compiled:
      p.forward = {4 * residual + 4 * logits, 2};
      p.backward = {6 * residual + 6 * logits, 2};
      break;
    case KernelFusion::Eager:
      p.forward = {36 * residual + 14 * logits, 11};
      p.backward = {72 * residual + 22 * logits, 19};
      break;
  }
  return p;
}

}  // namespace syncsim::models

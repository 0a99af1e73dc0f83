#include "models/transformer.hpp"

#include <algorithm>

namespace syncsim::models {

namespace {

TransformerShape gpt3(const char* name, uint32_t layers, uint32_t hidden, uint32_t heads) {
  return TransformerShape{.name = name,
                          .layers = layers,
                          .hidden = hidden,
                          .ffn = 4 * hidden,
                          .heads = heads,
                          .kv_heads = heads,
                          .vocab = 50257,
                          .sequence = 2048,
                          .tied_embeddings = true,
                          .learned_positions = true,
                          .biases = true,
                          .mlp = MlpKind::Gelu};
}

TransformerShape llama(const char* name, uint32_t layers, uint32_t hidden, uint32_t ffn,
                       uint32_t heads, uint32_t kv_heads, uint32_t vocab, uint32_t sequence) {
  return TransformerShape{.name = name,
                          .layers = layers,
                          .hidden = hidden,
                          .ffn = ffn,
                          .heads = heads,
                          .kv_heads = kv_heads,
                          .vocab = vocab,
                          .sequence = sequence,
                          .tied_embeddings = false,
                          .learned_positions = false,
                          .biases = false,
                          .mlp = MlpKind::SwiGlu};
}

// DeepSeek-V3 (arXiv:2412.19437, section 4.2; deepseek-ai/DeepSeek-V3 config.json): 61 layers,
// hidden 7168, 128 heads of MLA (q/kv compression 1536/512, per head 128 + 64 RoPE query/key and
// 128 value dimensions), the first 3 layers dense (FFN 18432), then 1 shared + 256 routed experts
// of width 2048, top-8; vocabulary 129280, untied; pre-trained at 4K tokens. 671B parameters, 37B
// activated (the multi-token-prediction module apart).
TransformerShape deepseek_v3() {
  TransformerShape s = llama("deepseek-v3", 61, 7168, 18432, 128, 128, 129280, 4096);
  s.experts = 256;
  s.experts_per_token = 8;
  s.shared_experts = 1;
  s.moe_ffn = 2048;
  s.dense_layers = 3;
  s.q_lora_rank = 1536;
  s.kv_lora_rank = 512;
  s.qk_nope_head_dim = 128;
  s.qk_rope_head_dim = 64;
  s.v_head_dim = 128;
  return s;
}

// Mixtral 8x7B (arXiv:2401.04088, Table 1): Mistral 7B's shape (32 layers, dim 4096, 32 heads
// with 8 KV heads, vocabulary 32000, context 32768) with every MLP (SwiGLU, hidden 14336) replaced
// by 8 experts, top-2. 46.7B parameters, 12.9B active (model card).
TransformerShape mixtral_8x7b() {
  TransformerShape s = llama("mixtral-8x7b", 32, 4096, 14336, 32, 8, 32000, 32768);
  s.experts = 8;
  s.experts_per_token = 2;
  s.moe_ffn = 14336;
  return s;
}

std::vector<TransformerShape> presets() {
  return {
      gpt3("gpt3-1.3b", 24, 2048, 16),
      gpt3("gpt3-2.7b", 32, 2560, 32),
      gpt3("gpt3-6.7b", 32, 4096, 32),
      gpt3("gpt3-13b", 40, 5120, 40),
      gpt3("gpt3-175b", 96, 12288, 96),
      llama("llama2-7b", 32, 4096, 11008, 32, 32, 32000, 4096),
      llama("llama2-13b", 40, 5120, 13824, 40, 40, 32000, 4096),
      llama("llama2-70b", 80, 8192, 28672, 64, 8, 32000, 4096),
      llama("llama3-8b", 32, 4096, 14336, 32, 8, 128256, 8192),
      llama("llama3-70b", 80, 8192, 28672, 64, 8, 128256, 8192),
      llama("llama3-405b", 126, 16384, 53248, 128, 8, 128256, 8192),
      deepseek_v3(),
      mixtral_8x7b(),
  };
}

}  // namespace

std::optional<TransformerShape> transformer_preset(const std::string& name) {
  for (auto& s : presets()) {
    if (s.name == name) return s;
  }
  return std::nullopt;
}

std::vector<std::string> transformer_preset_names() {
  std::vector<std::string> names;
  for (const auto& s : presets()) names.push_back(s.name);
  return names;
}

bool is_moe(const TransformerShape& s) { return s.experts > 0; }

bool is_mla(const TransformerShape& s) { return s.kv_lora_rank > 0; }

bool is_moe_layer(const TransformerShape& s, uint32_t layer) {
  return is_moe(s) && layer >= s.dense_layers;
}

uint32_t moe_layer_count(const TransformerShape& s) {
  return is_moe(s) ? s.layers - std::min(s.layers, s.dense_layers) : 0;
}

double qk_head_dim(const TransformerShape& s) {
  if (is_mla(s)) return static_cast<double>(s.qk_nope_head_dim) + s.qk_rope_head_dim;
  return static_cast<double>(s.hidden) / s.heads;
}

double v_head_dim(const TransformerShape& s) {
  if (is_mla(s)) return s.v_head_dim;
  return static_cast<double>(s.hidden) / s.heads;
}

int64_t attention_parameters(const TransformerShape& s) {
  const int64_t h = s.hidden;
  if (is_mla(s)) {
    const int64_t heads = s.heads;
    const int64_t qk = int64_t{s.qk_nope_head_dim} + s.qk_rope_head_dim;
    const int64_t q_rank = s.q_lora_rank;
    const int64_t kv_rank = s.kv_lora_rank;
    // Queries: down-projection, its norm and up-projection (or one h x heads*qk matrix without a
    // query bottleneck). Keys and values: a down-projection to the latent and the shared RoPE key,
    // the latent's norm, an up-projection to every head's no-RoPE key and value. Output projection.
    const int64_t q = q_rank > 0 ? h * q_rank + q_rank + q_rank * heads * qk : h * heads * qk;
    const int64_t kv = h * (kv_rank + s.qk_rope_head_dim) + kv_rank +
                       kv_rank * heads * (int64_t{s.qk_nope_head_dim} + s.v_head_dim);
    const int64_t out = heads * s.v_head_dim * h;
    return q + kv + out;
  }
  const int64_t head_dim = h / s.heads;
  const int64_t kv = static_cast<int64_t>(s.kv_heads) * head_dim;
  int64_t attention = h * h * 2 + h * kv * 2;
  if (s.biases) attention += h + 2 * kv + h;
  return attention;
}

int64_t mlp_parameters(const TransformerShape& s, int64_t width) {
  const int64_t h = s.hidden;
  int64_t mlp = s.mlp == MlpKind::SwiGlu ? 3 * h * width : 2 * h * width;
  if (s.biases) mlp += s.mlp == MlpKind::SwiGlu ? 2 * width + h : width + h;
  return mlp;
}

namespace {
int64_t norm_parameters(const TransformerShape& s) {
  const int64_t h = s.hidden;
  return s.biases ? 4 * h : 2 * h;  // LayerNorm has a bias next to its gain
}
}  // namespace

int64_t layer_parameters(const TransformerShape& s) {
  return attention_parameters(s) + mlp_parameters(s, s.ffn) + norm_parameters(s);
}

int64_t expert_parameters(const TransformerShape& s) { return mlp_parameters(s, s.moe_ffn); }

int64_t router_parameters(const TransformerShape& s) {
  return static_cast<int64_t>(s.experts) * s.hidden;
}

int64_t moe_layer_parameters(const TransformerShape& s) {
  return attention_parameters(s) + router_parameters(s) +
         (int64_t{s.experts} + s.shared_experts) * expert_parameters(s) + norm_parameters(s);
}

int64_t moe_layer_activated_parameters(const TransformerShape& s) {
  return attention_parameters(s) + router_parameters(s) +
         (int64_t{s.experts_per_token} + s.shared_experts) * expert_parameters(s) +
         norm_parameters(s);
}

int64_t embedding_parameters(const TransformerShape& s) {
  const int64_t h = s.hidden;
  int64_t p = static_cast<int64_t>(s.vocab) * h;
  if (!s.tied_embeddings) p *= 2;
  if (s.learned_positions) p += static_cast<int64_t>(s.sequence) * h;
  p += s.biases ? 2 * h : h;  // final norm
  return p;
}

int64_t total_parameters(const TransformerShape& s) {
  const int64_t moe = moe_layer_count(s);
  const int64_t dense = static_cast<int64_t>(s.layers) - moe;
  int64_t n = dense * layer_parameters(s) + embedding_parameters(s);
  if (moe > 0) n += moe * moe_layer_parameters(s);
  return n;
}

int64_t activated_parameters(const TransformerShape& s) {
  const int64_t moe = moe_layer_count(s);
  if (moe == 0) return total_parameters(s);
  const int64_t dense = static_cast<int64_t>(s.layers) - moe;
  return dense * layer_parameters(s) + moe * moe_layer_activated_parameters(s) +
         embedding_parameters(s);
}

double training_flops_per_token(const TransformerShape& s) {
  const auto n = static_cast<double>(activated_parameters(s));
  if (is_mla(s)) {
    return 6.0 * n + 6.0 * s.layers * static_cast<double>(s.sequence) * s.heads *
                         (qk_head_dim(s) + v_head_dim(s));
  }
  return 6.0 * n + 12.0 * s.layers * static_cast<double>(s.hidden) * s.sequence;
}

}  // namespace syncsim::models

#pragma once
// Decoder-only transformer shapes: parameter counts and training FLOPs computed from the shape.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace syncsim::models {

enum class MlpKind : uint8_t {
  Gelu,    // GPT: h -> ffn -> h, two matrices (with biases)
  SwiGlu,  // Llama: gate and up h -> ffn, down ffn -> h, three matrices (no biases)
};

struct TransformerShape {
  std::string name;
  uint32_t layers = 0;
  uint32_t hidden = 0;
  uint32_t ffn = 0;
  uint32_t heads = 0;
  uint32_t kv_heads = 0;  // grouped-query attention; equal to heads for classic MHA
  uint32_t vocab = 0;
  uint32_t sequence = 0;
  bool tied_embeddings = false;    // output projection shares the input embedding
  bool learned_positions = false;  // GPT: a sequence x hidden position table; Llama: rotary (none)
  bool biases = false;             // GPT: biases on every linear layer and LayerNorm (2 vectors)
  MlpKind mlp = MlpKind::Gelu;
  // Mixture of experts (models/expert_parallel.hpp); experts = 0 is a dense model. Each MoE layer's
  // MLP is `experts` routed experts, of which each token uses `experts_per_token` (top-k), plus
  // `shared_experts` that every token uses; each expert is an MLP of kind `mlp` and width `moe_ffn`
  // (Megatron's --moe-ffn-hidden-size), chosen by a router (an experts x hidden linear layer). The
  // first `dense_layers` layers keep a dense MLP of width `ffn` (DeepSeek-V3's first three).
  uint32_t experts = 0;
  uint32_t experts_per_token = 0;
  uint32_t shared_experts = 0;
  uint32_t moe_ffn = 0;
  uint32_t dense_layers = 0;
  // Multi-head latent attention (DeepSeek-V2/V3), on when kv_lora_rank > 0: queries through a
  // q_lora_rank bottleneck (with its norm), keys and values through a kv_lora_rank one (with its
  // norm) plus a shared qk_rope_head_dim-wide RoPE key; per head qk_nope_head_dim +
  // qk_rope_head_dim query/key and v_head_dim value dimensions. Trained as standard attention with
  // those head dimensions after the up-projections (the absorbed form is for inference).
  uint32_t q_lora_rank = 0;
  uint32_t kv_lora_rank = 0;
  uint32_t qk_nope_head_dim = 0;
  uint32_t qk_rope_head_dim = 0;
  uint32_t v_head_dim = 0;
};

// Known shapes: gpt3-1.3b, gpt3-2.7b, gpt3-6.7b, gpt3-13b, gpt3-175b (Brown et al. 2020,
// Table 2.1); llama2-7b, llama2-13b, llama2-70b (Touvron et al. 2023); llama3-8b, llama3-70b,
// llama3-405b (Meta 2024, "The Llama 3 Herd of Models", Table 3); mixture of experts:
// deepseek-v3 (DeepSeek-AI 2024, arXiv:2412.19437, section 4.2, and its config.json),
// mixtral-8x7b (Jiang et al. 2024, "Mixtral of Experts", arXiv:2401.04088, Table 1).
std::optional<TransformerShape> transformer_preset(const std::string& name);
std::vector<std::string> transformer_preset_names();

bool is_moe(const TransformerShape& s);
bool is_mla(const TransformerShape& s);
// Layer `layer` (0-based, model order) has routed experts.
bool is_moe_layer(const TransformerShape& s, uint32_t layer);
uint32_t moe_layer_count(const TransformerShape& s);
// Per-head query/key and value widths: hidden / heads, or MLA's published dimensions.
double qk_head_dim(const TransformerShape& s);
double v_head_dim(const TransformerShape& s);

// Parameters of one dense transformer block:
//   attention: Q and O are hidden x hidden; K and V are hidden x (kv_heads * head_dim);
//   MLP: 2 (GELU) or 3 (SwiGLU) hidden x ffn matrices;
//   norms: 2 per block, each `hidden` weights (+ `hidden` biases with LayerNorm);
//   biases: one per output feature of every linear layer when `biases`.
int64_t layer_parameters(const TransformerShape& s);
// Attention's share of a block (projections, MLA's norms and biases); an MLP of `width`.
int64_t attention_parameters(const TransformerShape& s);
int64_t mlp_parameters(const TransformerShape& s, int64_t width);
// One routed or shared expert (an MLP of width moe_ffn) and the router (experts x hidden).
int64_t expert_parameters(const TransformerShape& s);
int64_t router_parameters(const TransformerShape& s);
// One MoE block with all its experts, and with only the top-k and shared ones (what a token uses).
int64_t moe_layer_parameters(const TransformerShape& s);
int64_t moe_layer_activated_parameters(const TransformerShape& s);
// Embedding (+ output projection unless tied) + position table + final norm.
int64_t embedding_parameters(const TransformerShape& s);
// Every parameter (all experts), and those one token uses (equal for a dense model).
int64_t total_parameters(const TransformerShape& s);
int64_t activated_parameters(const TransformerShape& s);

// Training FLOPs per token as PaLM's MFU convention counts them (Chowdhery et al. 2022, App. B):
// 6 * N (forward + backward of every weight, embeddings excluded only for the input lookup, which
// is not a matmul) + 12 * layers * hidden * sequence for attention scores and values. For a
// mixture of experts N is the activated parameters (a token runs only its top-k and the shared
// experts), and with MLA the attention term is 6 * layers * sequence * heads * (d_qk + d_v).
double training_flops_per_token(const TransformerShape& s);

}  // namespace syncsim::models

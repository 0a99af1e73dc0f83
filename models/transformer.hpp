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
};

// Known shapes: gpt3-1.3b, gpt3-2.7b, gpt3-6.7b, gpt3-13b, gpt3-175b (Brown et al. 2020,
// Table 2.1); llama2-7b, llama2-13b, llama2-70b (Touvron et al. 2023); llama3-8b, llama3-70b,
// llama3-405b (Meta 2024, "The Llama 3 Herd of Models", Table 3).
std::optional<TransformerShape> transformer_preset(const std::string& name);
std::vector<std::string> transformer_preset_names();

// Parameters of one transformer block:
//   attention: Q and O are hidden x hidden; K and V are hidden x (kv_heads * head_dim);
//   MLP: 2 (GELU) or 3 (SwiGLU) hidden x ffn matrices;
//   norms: 2 per block, each `hidden` weights (+ `hidden` biases with LayerNorm);
//   biases: one per output feature of every linear layer when `biases`.
int64_t layer_parameters(const TransformerShape& s);
// Embedding (+ output projection unless tied) + position table + final norm.
int64_t embedding_parameters(const TransformerShape& s);
int64_t total_parameters(const TransformerShape& s);

// Training FLOPs per token as PaLM's MFU convention counts them (Chowdhery et al. 2022, App. B):
// 6 * N (forward + backward of every weight, embeddings excluded only for the input lookup, which
// is not a matmul) + 12 * layers * hidden * sequence for attention scores and values.
double training_flops_per_token(const TransformerShape& s);

}  // namespace syncsim::models

#include "models/transformer.hpp"

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

int64_t layer_parameters(const TransformerShape& s) {
  const int64_t h = s.hidden;
  const int64_t head_dim = h / s.heads;
  const int64_t kv = static_cast<int64_t>(s.kv_heads) * head_dim;
  const int64_t ffn = s.ffn;
  int64_t attention = h * h * 2 + h * kv * 2;
  int64_t mlp = s.mlp == MlpKind::SwiGlu ? 3 * h * ffn : 2 * h * ffn;
  int64_t norms = 2 * h;
  if (s.biases) {
    attention += h + 2 * kv + h;
    mlp += s.mlp == MlpKind::SwiGlu ? 2 * ffn + h : ffn + h;
    norms += 2 * h;  // LayerNorm has a bias next to its gain
  }
  return attention + mlp + norms;
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
  return static_cast<int64_t>(s.layers) * layer_parameters(s) + embedding_parameters(s);
}

double training_flops_per_token(const TransformerShape& s) {
  const auto n = static_cast<double>(total_parameters(s));
  return 6.0 * n + 12.0 * s.layers * static_cast<double>(s.hidden) * s.sequence;
}

}  // namespace syncsim::models

#include "calibration/recorded_op_shapes.hpp"

#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace syncsim::calibration {

namespace {

using nlohmann::json;

std::string dtype_of(const std::string& torch_type) {
  if (torch_type == "c10::BFloat16") return "bf16";
  if (torch_type == "c10::Half") return "fp16";
  if (torch_type == "float") return "fp32";
  if (torch_type.starts_with("c10::Float8_")) return "fp8";
  return "";
}

std::vector<int64_t> dims_of(const json& d) {
  std::vector<int64_t> out;
  if (!d.is_array()) return out;
  for (const auto& x : d) {
    if (!x.is_number_integer()) return {};
    out.push_back(x.get<int64_t>());
  }
  return out;
}

int64_t product(const std::vector<int64_t>& v, std::size_t count) {
  int64_t p = 1;
  for (std::size_t i = 0; i < count && i < v.size(); ++i) p *= v[i];
  return p;
}

std::string input_type(const json& args, std::size_t i) {
  const auto t = args.find("Input type");
  if (t == args.end() || !t->is_array() || i >= t->size() || !(*t)[i].is_string()) return "";
  return dtype_of((*t)[i].get<std::string>());
}

}  // namespace

// The matmul an aten op recorded in its Input Dims (torch.profiler record_shapes=True).
std::optional<MatmulShape> matmul_shape(const std::string& op, const json& args) {
  const auto dims_it = args.find("Input Dims");
  if (dims_it == args.end() || !dims_it->is_array()) return std::nullopt;
  const json& dims = *dims_it;
  auto operand = [&](std::size_t i) {
    return i < dims.size() ? dims_of(dims[i]) : std::vector<int64_t>{};
  };
  MatmulShape s;
  std::vector<int64_t> a, b;
  std::size_t first = 0;
  if (op == "aten::mm" || op == "aten::_scaled_mm" || op == "aten::matmul" || op == "aten::bmm") {
    a = operand(0);
    b = operand(1);
  } else if (op == "aten::addmm" || op == "aten::baddbmm") {
    a = operand(1);
    b = operand(2);
    first = 1;
  } else if (op == "aten::linear") {
    a = operand(0);
    const std::vector<int64_t> w = operand(1);  // [out_features, in_features]
    if (a.empty() || w.size() != 2 || a.back() != w[1]) return std::nullopt;
    s.m = product(a, a.size() - 1);
    s.k = a.back();
    s.n = w[0];
    s.dtype = input_type(args, 0);
    if (s.m <= 0 || s.n <= 0 || s.k <= 0) return std::nullopt;
    return s;
  } else {
    return std::nullopt;
  }
  if (a.size() < 2 || b.size() < 2) return std::nullopt;
  if (b.size() == 2) {
    s.m = product(a, a.size() - 1);  // leading dims fold into rows (matmul of a 3-D input)
    s.k = a.back();
    s.n = b[1];
    if (b[0] != s.k) return std::nullopt;
  } else {
    if (a.size() != b.size()) return std::nullopt;
    s.batch = product(a, a.size() - 2);
    s.m = a[a.size() - 2];
    s.k = a.back();
    s.n = b.back();
    if (b[b.size() - 2] != s.k) return std::nullopt;
  }
  s.dtype = input_type(args, first);
  if (s.batch <= 0 || s.m <= 0 || s.n <= 0 || s.k <= 0) return std::nullopt;
  return s;
}

namespace {

// Attention ops: the query's operand index, whether it is [batch, heads, seq, dim] (SDPA) or
// [batch, seq, heads, dim] (flash-attn's and ATen's _flash_attention_*), backward, and the index of
// is_causal in the op's schema (aten/src/ATen/native/native_functions.yaml; flash-attn's
// flash_attn_interface.py), read from "Concrete Inputs".
struct AttentionOp {
  std::string_view name;
  std::size_t query = 0;
  bool heads_first = true;
  bool backward = false;
  std::size_t causal_arg = 0;
};

constexpr AttentionOp kAttentionOps[] = {
    {"aten::_scaled_dot_product_flash_attention", 0, true, false, 4},
    {"aten::_scaled_dot_product_flash_attention_backward", 1, true, true, 11},
    {"aten::_scaled_dot_product_cudnn_attention", 0, true, false, 6},
    {"aten::_scaled_dot_product_cudnn_attention_backward", 1, true, true, 14},
    {"aten::_scaled_dot_product_efficient_attention", 0, true, false, 6},
    {"aten::_scaled_dot_product_efficient_attention_backward", 1, true, true, 11},
    {"aten::scaled_dot_product_attention", 0, true, false, 5},
    {"aten::_flash_attention_forward", 0, false, false, 8},
    {"aten::_flash_attention_backward", 1, false, true, 11},
    {"flash_attn::_flash_attn_forward", 0, false, false, 5},
    {"flash_attn::_flash_attn_backward", 1, false, true, 11},
};

}  // namespace

std::optional<AttentionShape> attention_shape(const std::string& op, const json& args) {
  const AttentionOp* spec = nullptr;
  for (const auto& a : kAttentionOps) {
    if (a.name == op) spec = &a;
  }
  if (spec == nullptr) return std::nullopt;
  const auto dims_it = args.find("Input Dims");
  if (dims_it == args.end() || !dims_it->is_array() || dims_it->size() <= spec->query + 1)
    return std::nullopt;
  const std::vector<int64_t> q = dims_of((*dims_it)[spec->query]);
  const std::vector<int64_t> k = dims_of((*dims_it)[spec->query + 1]);
  if (q.size() != 4 || k.size() != 4) return std::nullopt;
  AttentionShape s;
  s.batch = q[0];
  s.heads = spec->heads_first ? q[1] : q[2];
  s.queries = spec->heads_first ? q[2] : q[1];
  s.keys = spec->heads_first ? k[2] : k[1];
  s.head_dim = q[3];
  s.backward = spec->backward;
  s.dtype = input_type(args, spec->query);
  const auto concrete = args.find("Concrete Inputs");
  if (concrete != args.end() && concrete->is_array() && spec->causal_arg < concrete->size()) {
    const json& c = (*concrete)[spec->causal_arg];
    s.causal = c.is_string() && c.get<std::string>() == "True";
  }
  if (s.batch <= 0 || s.heads <= 0 || s.queries <= 0 || s.keys <= 0 || s.head_dim <= 0)
    return std::nullopt;
  return s;
}

double MatmulShape::flops() const {
  return 2.0 * static_cast<double>(batch) * static_cast<double>(m) * static_cast<double>(n) *
         static_cast<double>(k);
}

double AttentionShape::flops() const {
  double f = 4.0 * static_cast<double>(batch) * static_cast<double>(heads) *
             static_cast<double>(queries) * static_cast<double>(keys) *
             static_cast<double>(head_dim);
  if (causal) f /= 2;
  return backward ? 2.5 * f : f;
}

}  // namespace syncsim::calibration

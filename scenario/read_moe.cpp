// Mixture of experts in `workload:`: the model's MoE keys (experts, experts_per_token,
// shared_experts, moe_ffn_hidden, dense_layers) and the layout's expert_parallel and
// capacity_factor (models/expert_parallel.hpp).
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "models/expert_parallel.hpp"
#include "scenario/section_readers.hpp"

namespace syncsim::app::yaml_reader {

void read_moe_model(const Reader& in, const MapView& mm, models::TransformerShape& model) {
  const std::pair<std::string_view, uint32_t*> counts[] = {
      {"experts", &model.experts},
      {"experts_per_token", &model.experts_per_token},
      {"shared_experts", &model.shared_experts},
      {"moe_ffn_hidden", &model.moe_ffn},
      {"dense_layers", &model.dense_layers}};
  for (const auto& [key, field] : counts) {
    if (const YAML::Node* v = mm.find(key)) {
      const bool positive = key == "experts_per_token" || key == "moe_ffn_hidden";
      *field = in.read_u32(*v, mm.path_of(key), positive ? 1 : 0);
    }
  }
  auto fail_at = [&](std::string_view key, const std::string& message) {
    const YAML::Node* v = mm.find(key);
    in.fail(mm.path_of(key), v ? *v : mm.node(), message);
  };
  if (!models::is_moe(model)) {
    for (std::string_view key :
         {"experts_per_token", "shared_experts", "moe_ffn_hidden", "dense_layers"}) {
      if (mm.find(key) != nullptr) {
        fail_at(key, "expected model.experts > 0 (a mixture-of-experts model) for " +
                         std::string(key) + ", got a dense model");
      }
    }
    return;
  }
  // A model made MoE here (a dense preset or a custom map) must say how its experts route.
  for (std::string_view key : {"experts_per_token", "moe_ffn_hidden"}) {
    const bool unset =
        key == "experts_per_token" ? model.experts_per_token == 0 : model.moe_ffn == 0;
    if (unset)
      in.fail_at(mm.path(), mm.node(), mm.path_of(key), "missing key (needed with experts)");
  }
  if (model.experts_per_token > model.experts) {
    fail_at("experts_per_token", "expected at most the " + std::to_string(model.experts) +
                                     " routed experts, got " +
                                     std::to_string(model.experts_per_token));
  }
  if (model.dense_layers >= model.layers) {
    fail_at("dense_layers", "expected fewer than the model's " + std::to_string(model.layers) +
                                " layers, got " + std::to_string(model.dense_layers));
  }
}

void read_expert_parallel(const Reader& in, const MapView& m, models::StepConfig& c) {
  if (const YAML::Node* v = m.find("expert_parallel")) {
    c.layout.expert = in.read_u32(*v, m.path_of("expert_parallel"), 1);
  }
  if (const YAML::Node* v = m.find("capacity_factor")) {
    const double f = in.read_number(*v, m.path_of("capacity_factor"));
    if (!(f > 0)) in.fail(m.path_of("capacity_factor"), *v, "expected a capacity factor > 0");
    if (!models::is_moe(c.model)) {
      in.fail(m.path_of("capacity_factor"), *v,
              "expected a mixture-of-experts model (workload.model.experts > 0) for a capacity "
              "factor, got the dense model " +
                  c.model.name);
    }
    c.capacity_factor = f;
  }
  if (models::is_moe(c.model) && c.parallelism == models::DataParallelism::Fsdp) {
    const YAML::Node* v = m.find("parallelism");
    in.fail(m.path_of("parallelism"), v ? *v : m.node(),
            "expected parallelism: ddp for a mixture-of-experts model (FSDP with experts is not "
            "modelled), got fsdp");
  }
  // What the layout alone decides; EP dividing DP x CP is checked once the ranks are known
  // (validate.cpp).
  if (const YAML::Node* v = m.find("expert_parallel")) {
    try {
      models::check_expert_layout(c.model, c.layout, c.layout.expert);
    } catch (const std::invalid_argument& e) {
      in.fail(m.path_of("expert_parallel"), *v, e.what());
    }
  }
}

}  // namespace syncsim::app::yaml_reader

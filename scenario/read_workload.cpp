// `workload:` a training step: model, GPU, parallelism (DDP, FSDP, tensor/pipeline/context),
// perturbations and calibration profiles.
#include <exception>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "calibration/profile.hpp"
#include "models/parallelism.hpp"
#include "scenario/section_readers.hpp"

namespace syncsim::app::yaml_reader {

namespace {

// `workload.calibration: FILE`: a profile from `syncsim calibrate fit --out` or syncsim-probe. Its
// GEMM fit for the workload's dtype replaces the GPU's peak and efficiency curve; its HBM copy
// probe replaces the HBM bandwidth; its measured kernel overhead (`compute.kernel_launch_us`, from
// a profiler trace) replaces the per-kernel launch time, and its flash-attention rate
// (`compute.attention`) times attention instead of the GEMM model. A relative path is taken from
// the scenario file's folder.
void apply_calibration(const Reader& in, const YAML::Node& node, const std::string& path,
                       models::StepConfig& c) {
  std::string file = in.read_string(node, path);
  if (!file.empty() && file.front() != '/' && in.source().find('/') != std::string::npos) {
    file = in.source().substr(0, in.source().rfind('/') + 1) + file;
  }
  calibration::CalibrationProfile profile;
  try {
    profile = calibration::read_profile_file(file);
  } catch (const std::exception& e) {
    in.fail(path, node, std::string("expected a readable calibration profile, got: ") + e.what());
  }
  const char* dtype = c.compute.dtype == models::DType::Fp8    ? "fp8"
                      : c.compute.dtype == models::DType::Fp16 ? "fp16"
                                                               : "bf16";
  bool used = false;
  for (const calibration::GemmFit& g : profile.gemm) {
    if (g.dtype != dtype) continue;
    double& peak = c.compute.dtype == models::DType::Fp8    ? c.gpu.fp8_tflops
                   : c.compute.dtype == models::DType::Fp16 ? c.gpu.fp16_tflops
                                                            : c.gpu.bf16_tflops;
    if (g.peak_tflops > 0) peak = g.peak_tflops;
    c.gpu.max_gemm_efficiency = g.e_max;
    c.gpu.gemm_intensity_half = g.intensity_half;
    used = true;
  }
  for (const calibration::ProbeValue& p : profile.probes) {
    if (p.name == "hbm_copy_bandwidth" && p.unit == "GB/s" && p.mean > 0) {
      c.gpu.hbm_bytes_per_s = p.mean * 1e9;
      used = true;
    }
  }
  if (profile.kernel_launch_us > 0) {
    c.gpu.kernel_launch_s = profile.kernel_launch_us * 1e-6;
    used = true;
  }
  // Attention runs in BF16 under FP8 training (step_model.cpp), so its rate is the BF16 entry's.
  const char* attention_dtype = c.compute.dtype == models::DType::Fp8 ? "bf16" : dtype;
  for (const calibration::AttentionProfile& a : profile.attention) {
    if (a.dtype != attention_dtype || a.peak_tflops <= 0 || a.efficiency <= 0) continue;
    c.gpu.attention_tflops = a.peak_tflops * a.efficiency;
    used = true;
  }
  if (!used) {
    in.fail(path, node,
            std::string("expected a profile with a ") + dtype +
                " GEMM fit, an hbm_copy_bandwidth probe, compute.kernel_launch_us or a " +
                attention_dtype + " compute.attention entry, got none in " + file);
  }
  c.gpu.calibrated_from = file;
  // The profile's fits replace the preset's numbers, so a profile from another GPU silently turns
  // the scenario's GPU into that one.
  if (!profile.gpu_name.empty() && !profile_names_gpu(profile.gpu_name, c.gpu.name)) {
    in.warn(path, "the profile " + file + " was measured on " + profile.gpu_name +
                      ", the scenario's workload.gpu is " + c.gpu.name +
                      ": its GEMM and HBM numbers belong to other hardware");
  }
}

// `workload.parallelism: ddp | fsdp`, `workload.fsdp: {...}` and the model-parallel degrees.
void read_parallelism(const Reader& in, const MapView& m, models::StepConfig& c) {
  if (const YAML::Node* v = m.find("parallelism")) {
    c.parallelism = in.read_enum(
        *v, m.path_of("parallelism"),
        std::vector<std::pair<std::string_view, models::DataParallelism>>{
            {"ddp", models::DataParallelism::Ddp}, {"fsdp", models::DataParallelism::Fsdp}});
  }
  if (const YAML::Node* v = m.find("fsdp")) {
    const MapView f(in, *v, m.path_of("fsdp"), {"layers_per_unit", "streams", "shard_degree"});
    if (c.parallelism != models::DataParallelism::Fsdp) {
      in.fail(m.path_of("fsdp"), *v, "an fsdp block needs workload.parallelism: fsdp, got ddp");
    }
    if (const YAML::Node* n = f.find("layers_per_unit")) {
      c.fsdp.layers_per_unit = in.read_u32(*n, f.path_of("layers_per_unit"), 1);
      if (c.fsdp.layers_per_unit > c.model.layers) {
        in.fail(f.path_of("layers_per_unit"), *n,
                "expected at most the model's " + std::to_string(c.model.layers) + " layers");
      }
    }
    if (const YAML::Node* n = f.find("shard_degree")) {
      c.fsdp.shard_degree = in.read_u32(*n, f.path_of("shard_degree"), 1);
    }
    if (const YAML::Node* n = f.find("streams")) {
      c.fsdp.separate_streams = in.read_enum(
          *n, f.path_of("streams"),
          std::vector<std::pair<std::string_view, bool>>{{"separate", true}, {"shared", false}});
    }
  }
  const std::pair<std::string_view, uint32_t*> degrees[] = {
      {"tensor_parallel", &c.layout.tensor},
      {"pipeline_parallel", &c.layout.pipeline},
      {"context_parallel", &c.layout.context}};
  for (const auto& [key, field] : degrees) {
    if (const YAML::Node* v = m.find(key)) *field = in.read_u32(*v, m.path_of(key), 1);
  }
  if (const YAML::Node* v = m.find("sequence_parallel")) {
    c.layout.sequence_parallel = in.read_bool(*v, m.path_of("sequence_parallel"));
  }
  if (const YAML::Node* v = m.find("tp_comm_overlap")) {
    c.layout.tp_comm_overlap = in.read_bool(*v, m.path_of("tp_comm_overlap"));
  }
  if (const YAML::Node* v = m.find("distributed_optimizer")) {
    c.layout.distributed_optimizer = in.read_bool(*v, m.path_of("distributed_optimizer"));
  }
  if (const YAML::Node* v = m.find("virtual_pipeline")) {
    c.layout.virtual_pipeline = in.read_u32(*v, m.path_of("virtual_pipeline"), 1);
  }
  const std::pair<std::string_view, bool*> split_flags[] = {
      {"account_for_embedding_in_pipeline_split", &c.layout.embedding_in_pipeline_split},
      {"account_for_loss_in_pipeline_split", &c.layout.loss_in_pipeline_split}};
  for (const auto& [key, field] : split_flags) {
    if (const YAML::Node* v = m.find(key)) *field = in.read_bool(*v, m.path_of(key));
  }
  auto check = [&](std::string_view key, bool ok, const std::string& expected) {
    if (const YAML::Node* v = m.find(key); v && !ok) in.fail(m.path_of(key), *v, expected);
  };
  const auto& mm = c.model;
  const uint32_t t = c.layout.tensor;
  check("tensor_parallel",
        mm.heads % t == 0 && mm.ffn % t == 0 && mm.hidden % t == 0 && mm.vocab >= t,
        "expected a tensor-parallel degree dividing the heads (" + std::to_string(mm.heads) +
            "), hidden and FFN sizes, got " + std::to_string(t));
  check("virtual_pipeline", c.layout.virtual_pipeline == 1 || c.layout.pipeline > 1,
        "virtual pipeline stages need pipeline_parallel > 1, got pipeline_parallel " +
            std::to_string(c.layout.pipeline));
  try {
    (void)models::pipeline_stage_layers(c.layout, mm.layers);
  } catch (const std::invalid_argument& e) {
    // Reported at the key that set the split: the virtual stages, a split flag or the degree.
    for (std::string_view key : {"virtual_pipeline", "account_for_loss_in_pipeline_split",
                                 "account_for_embedding_in_pipeline_split", "pipeline_parallel"}) {
      check(key, false, e.what());
    }
    in.fail_path(m.path_of("pipeline_parallel"), e.what());
  }
  check("context_parallel", mm.sequence % (2 * c.layout.context) == 0 || c.layout.context == 1,
        "expected a context-parallel degree c with the sequence (" + std::to_string(mm.sequence) +
            ") divisible by 2c (load-balanced causal chunks), got " +
            std::to_string(c.layout.context));
  check("sequence_parallel", !c.layout.sequence_parallel || t > 1,
        "sequence parallelism needs tensor_parallel > 1");
  // Megatron: "Tensor parallel communication/GEMM overlap can happen only when sequence
  // parallelism is enabled".
  check("tp_comm_overlap", !c.layout.tp_comm_overlap || c.layout.sequence_parallel,
        "tp_comm_overlap needs sequence_parallel: true (Megatron overlaps only the "
        "sequence-parallel all-gathers and reduce-scatters)");
  check("distributed_optimizer",
        !c.layout.distributed_optimizer || c.parallelism == models::DataParallelism::Ddp,
        "distributed_optimizer shards the optimizer of DDP (Megatron's); FSDP already shards "
        "parameters, gradients and optimizer state: expected parallelism: ddp");
}

}  // namespace

// `workload:` a DDP training step. Presets by name, or a map starting from a preset (or from
// nothing) with fields overridden.
WorkloadSpec read_workload(const Reader& in, const YAML::Node& node, const std::string& path) {
  const MapView m(in, node, path,
                  {"model",
                   "gpu",
                   "data_parallel",
                   "micro_batch",
                   "grad_accumulation",
                   "global_batch",
                   "recompute",
                   "dtype",
                   "ddp",
                   "optimizer",
                   "algorithm",
                   "channels",
                   "perturbations",
                   "reuse_bucket_timings",
                   "calibration",
                   "parallelism",
                   "fsdp",
                   "tensor_parallel",
                   "pipeline_parallel",
                   "context_parallel",
                   "sequence_parallel",
                   "virtual_pipeline",
                   "tp_comm_overlap",
                   "distributed_optimizer",
                   "account_for_embedding_in_pipeline_split",
                   "account_for_loss_in_pipeline_split",
                   "expert_parallel",
                   "capacity_factor",
                   "placement",
                   "bucket_timing",
                   "step_engine",
                   "lockstep_replicas",
                   "collective_timing",
                   "kernels",
                   "attention_kernel"});
  WorkloadSpec w;
  models::StepConfig& c = w.step;

  const YAML::Node& model = m.require("model");
  const std::string model_path = m.path_of("model");
  if (model.IsMap()) {
    const MapView mm(in, model, model_path,
                     {"preset", "layers", "hidden", "ffn", "heads", "kv_heads", "vocab", "sequence",
                      "tied_embeddings", "mlp", "experts", "experts_per_token", "shared_experts",
                      "moe_ffn_hidden", "dense_layers"});
    if (const YAML::Node* v = mm.find("preset")) {
      const std::string name = in.read_string(*v, mm.path_of("preset"));
      const auto preset = models::transformer_preset(name);
      if (!preset) {
        in.fail(mm.path_of("preset"), *v,
                "expected a model preset (" + one_of_names(models::transformer_preset_names()) +
                    "), got " + quoted(name));
      }
      c.model = *preset;
    } else {
      c.model = models::TransformerShape{.name = "custom", .mlp = models::MlpKind::SwiGlu};
    }
    // A preset's attention shape: multi-head (kv_heads == heads, GPT-3, Llama 2 7B/13B) or
    // grouped-query (a fixed number of KV heads shared by groups of query heads: Llama 3's 8).
    const bool preset_multi_head = c.model.kv_heads == c.model.heads;
    const uint32_t preset_kv_heads = c.model.kv_heads;
    const std::pair<std::string_view, uint32_t*> counts[] = {
        {"layers", &c.model.layers},    {"hidden", &c.model.hidden},     {"ffn", &c.model.ffn},
        {"heads", &c.model.heads},      {"kv_heads", &c.model.kv_heads}, {"vocab", &c.model.vocab},
        {"sequence", &c.model.sequence}};
    for (const auto& [key, field] : counts) {
      if (const YAML::Node* v = mm.find(key)) *field = in.read_u32(*v, mm.path_of(key), 1);
    }
    // `heads` without `kv_heads`: kv_heads follows heads on a multi-head preset (it stays
    // multi-head); a grouped-query preset keeps its KV-head count, which must then divide heads.
    const bool kv_given = mm.find("kv_heads") != nullptr;
    if (c.model.kv_heads == 0 || (!kv_given && preset_multi_head)) c.model.kv_heads = c.model.heads;
    if (const YAML::Node* v = mm.find("tied_embeddings")) {
      c.model.tied_embeddings = in.read_bool(*v, mm.path_of("tied_embeddings"));
    }
    if (const YAML::Node* v = mm.find("mlp")) {
      c.model.mlp =
          in.read_enum(*v, mm.path_of("mlp"),
                       std::vector<std::pair<std::string_view, models::MlpKind>>{
                           {"gelu", models::MlpKind::Gelu}, {"swiglu", models::MlpKind::SwiGlu}});
    }
    for (const char* key : {"layers", "hidden", "ffn", "heads", "vocab", "sequence"}) {
      if (mm.find(key) == nullptr && !mm.find("preset")) {
        in.fail_at(model_path, model, mm.path_of(key), "missing key (needed without a preset)");
      }
    }
    read_moe_model(in, mm, c.model);
    const YAML::Node* heads_node = mm.find("heads");
    const YAML::Node* kv_node = mm.find("kv_heads");
    const YAML::Node* hidden_node = mm.find("hidden");
    if (c.model.hidden % c.model.heads != 0) {
      const bool at_hidden = hidden_node != nullptr && heads_node == nullptr;
      in.fail(at_hidden ? mm.path_of("hidden") : mm.path_of("heads"),
              at_hidden ? *hidden_node : (heads_node ? *heads_node : model),
              "expected heads dividing hidden (" + std::to_string(c.model.hidden) +
                  "), got heads " + std::to_string(c.model.heads));
    }
    if (c.model.kv_heads > c.model.heads || c.model.heads % c.model.kv_heads != 0) {
      const std::string from = kv_given
                                   ? std::string{}
                                   : " (kv_heads " + std::to_string(preset_kv_heads) +
                                         " kept from the grouped-query preset: set kv_heads too)";
      in.fail(kv_given ? mm.path_of("kv_heads") : mm.path_of("heads"),
              kv_given ? *kv_node : (heads_node ? *heads_node : model),
              "expected heads divisible by kv_heads, got heads " + std::to_string(c.model.heads) +
                  " and kv_heads " + std::to_string(c.model.kv_heads) + from);
    }
  } else {
    const std::string name = in.read_string(model, model_path);
    const auto preset = models::transformer_preset(name);
    if (!preset) {
      in.fail(model_path, model,
              "expected a model preset (" + one_of_names(models::transformer_preset_names()) +
                  ") or a map of fields, got " + quoted(name));
    }
    c.model = *preset;
  }

  std::string gpu_name = "h100";
  const YAML::Node* gpu_node = m.find("gpu");
  if (gpu_node != nullptr) gpu_name = in.read_string(*gpu_node, m.path_of("gpu"));
  const auto gpu = models::gpu_preset(gpu_name);
  if (!gpu) {
    in.fail(m.path_of("gpu"), gpu_node ? *gpu_node : node,
            "expected a GPU preset (" + one_of_names(models::gpu_preset_names()) + "), got " +
                quoted(gpu_name));
  }
  c.gpu = *gpu;

  if (const YAML::Node* v = m.find("data_parallel")) {
    w.data_parallel = in.read_u32(*v, m.path_of("data_parallel"), 1);
  }
  if (const YAML::Node* v = m.find("micro_batch")) {
    c.compute.micro_batch = static_cast<int64_t>(in.read_u32(*v, m.path_of("micro_batch"), 1));
  }
  if (const YAML::Node* v = m.find("grad_accumulation")) {
    c.grad_accumulation = in.read_u32(*v, m.path_of("grad_accumulation"), 1);
  }
  if (const YAML::Node* v = m.find("global_batch")) {
    w.global_batch = in.read_u32(*v, m.path_of("global_batch"), 1);
  }
  if (const YAML::Node* v = m.find("recompute")) {
    c.compute.recompute = in.read_enum(*v, m.path_of("recompute"),
                                       std::vector<std::pair<std::string_view, models::Recompute>>{
                                           {"none", models::Recompute::None},
                                           {"selective", models::Recompute::Selective},
                                           {"full", models::Recompute::Full}});
  }
  if (const YAML::Node* v = m.find("dtype")) {
    c.compute.dtype = in.read_enum(
        *v, m.path_of("dtype"),
        std::vector<std::pair<std::string_view, models::DType>>{{"bf16", models::DType::Bf16},
                                                                {"fp16", models::DType::Fp16},
                                                                {"fp8", models::DType::Fp8}});
    if (models::peak_flops(c.gpu, c.compute.dtype) <= 0) {
      in.fail(m.path_of("dtype"), *v, "expected a dtype this GPU supports, got one it does not");
    }
  }
  if (const YAML::Node* v = m.find("kernels")) {
    c.compute.kernels = in.read_enum(*v, m.path_of("kernels"),
                                     std::vector<std::pair<std::string_view, models::KernelFusion>>{
                                         {"fused", models::KernelFusion::Fused},
                                         {"compiled", models::KernelFusion::Compiled},
                                         {"eager", models::KernelFusion::Eager}});
  }
  if (const YAML::Node* v = m.find("attention_kernel")) {
    c.compute.attention_kernel =
        in.read_enum(*v, m.path_of("attention_kernel"),
                     std::vector<std::pair<std::string_view, models::AttentionKernel>>{
                         {"cudnn", models::AttentionKernel::Cudnn},
                         {"flash2", models::AttentionKernel::Flash2},
                         {"flash3", models::AttentionKernel::Flash3},
                         {"unfused", models::AttentionKernel::Unfused}});
    if (c.compute.attention_kernel == models::AttentionKernel::Flash3 &&
        c.gpu.compute_capability != 90) {
      in.fail(m.path_of("attention_kernel"), *v,
              "expected a kernel this GPU runs (FlashAttention-3 is for Hopper, compute "
              "capability 9.0), got flash3 on " +
                  c.gpu.name);
    }
  }
  if (const YAML::Node* v = m.find("ddp")) {
    const MapView d(in, *v, m.path_of("ddp"), {"bucket_cap_mb", "first_bucket_mb", "bucket_order"});
    // ready: PyTorch's buckets after rebuild_buckets() (every step after the first); parameters:
    // the first iteration's, in reverse model.parameters() order.
    if (const YAML::Node* b = d.find("bucket_order")) {
      c.ddp.parameter_order = in.read_enum(
          *b, d.path_of("bucket_order"),
          std::vector<std::pair<std::string_view, bool>>{{"ready", false}, {"parameters", true}});
    }
    // PyTorch's names and units: MB here means MiB (bucket_cap_mb=25 is 25 * 1024 * 1024 bytes).
    if (const YAML::Node* b = d.find("bucket_cap_mb")) {
      const double mb = in.read_number(*b, d.path_of("bucket_cap_mb"));
      if (!(mb > 0)) in.fail(d.path_of("bucket_cap_mb"), *b, "expected a positive size in MiB");
      c.ddp.bucket_cap = Bytes{static_cast<int64_t>(mb * 1024 * 1024)};
    }
    if (const YAML::Node* b = d.find("first_bucket_mb")) {
      const double mb = in.read_number(*b, d.path_of("first_bucket_mb"));
      if (!(mb > 0)) in.fail(d.path_of("first_bucket_mb"), *b, "expected a positive size in MiB");
      c.ddp.first_bucket = Bytes{static_cast<int64_t>(mb * 1024 * 1024)};
    }
  }
  if (const YAML::Node* v = m.find("optimizer")) {
    const std::string p = m.path_of("optimizer");
    if (!(v->IsScalar() && v->Scalar() == "auto")) c.optimizer = in.read_time(*v, p);
  }
  if (const YAML::Node* v = m.find("algorithm")) {
    const std::string text = in.read_string(*v, m.path_of("algorithm"));
    try {
      c.algorithm = models::parse_collective_algo(text);
    } catch (const std::invalid_argument& e) {
      in.fail(m.path_of("algorithm"), *v, e.what());
    }
  }
  // `channels` is collective.channels' alias (read_root).
  c.gpus_per_host = 1;
  if (const YAML::Node* v = m.find("perturbations")) {
    const MapView pm(in, *v, m.path_of("perturbations"), {"compute_noise_cv", "straggler"});
    if (const YAML::Node* n = pm.find("compute_noise_cv")) {
      const double cv = in.read_number(*n, pm.path_of("compute_noise_cv"));
      if (cv < 0 || cv > 1) {
        in.fail(pm.path_of("compute_noise_cv"), *n, "expected a value in [0, 1]");
      }
      c.perturbations.compute_noise_cv = cv;
    }
    if (const YAML::Node* n = pm.find("straggler")) {
      const MapView sm(in, *n, pm.path_of("straggler"), {"rank", "slowdown"});
      c.perturbations.straggler = in.read_u32(sm.require("rank"), sm.path_of("rank"));
      const double slow = in.read_number(sm.require("slowdown"), sm.path_of("slowdown"));
      if (slow < 0) {
        in.fail(sm.path_of("slowdown"), sm.require("slowdown"), "expected a slowdown >= 0");
      }
      c.perturbations.straggler_slowdown = slow;
    }
  }
  if (const YAML::Node* v = m.find("placement")) {
    try {
      w.placement = topo::parse_placement(in.read_string(*v, m.path_of("placement")));
    } catch (const std::invalid_argument& e) {
      in.fail(m.path_of("placement"), *v, e.what());
    }
  }
  if (const YAML::Node* v = m.find("reuse_bucket_timings")) {
    w.reuse_bucket_timings = in.read_bool(*v, m.path_of("reuse_bucket_timings"));
  }
  if (const YAML::Node* v = m.find("bucket_timing")) {
    try {
      c.bucket_timing = models::parse_bucket_timing(in.read_string(*v, m.path_of("bucket_timing")));
    } catch (const std::invalid_argument& e) {
      in.fail(m.path_of("bucket_timing"), *v, e.what());
    }
  }
  if (const YAML::Node* v = m.find("step_engine")) {
    const std::string engine = in.read_string(*v, m.path_of("step_engine"));
    if (engine == "event_driven") {
      w.event_driven_layouts = true;
    } else if (engine == "closed_form") {
      w.event_driven_layouts = false;
    } else if (engine != "auto") {
      in.fail(m.path_of("step_engine"), *v, "expected auto, event_driven or closed_form");
    }
  }
  if (const YAML::Node* v = m.find("collective_timing")) {
    const std::string timing = in.read_string(*v, m.path_of("collective_timing"));
    if (timing == "idle_fabric") {
      c.model_parallel_idle_fabric_timing = true;
    } else if (timing != "live") {
      in.fail(m.path_of("collective_timing"), *v, "expected live or idle_fabric");
    }
  }
  if (const YAML::Node* v = m.find("lockstep_replicas")) {
    c.model_parallel_lockstep = in.read_bool(*v, m.path_of("lockstep_replicas"));
  }
  if (const YAML::Node* v = m.find("calibration")) {
    apply_calibration(in, *v, m.path_of("calibration"), c);
  }
  read_parallelism(in, m, c);
  read_expert_parallel(in, m, c);
  return w;
}

}  // namespace syncsim::app::yaml_reader

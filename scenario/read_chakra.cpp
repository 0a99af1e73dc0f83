// `workload: {chakra: {path, ranks, retime, gpu, dtype}}`: a Chakra execution trace set, read and
// checked at load so that a missing file or an unsupported node is a scenario error (exit 2).
#include <exception>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "chakra/chakra_files.hpp"
#include "models/chakra_replay.hpp"
#include "scenario/section_readers.hpp"

namespace syncsim::app::yaml_reader {

ChakraWorkloadSpec read_chakra_workload(const Reader& in, const YAML::Node& node,
                                        const std::string& path) {
  // The trace is the whole workload: model, parallelism and bucket keys have no meaning beside it.
  const MapView w(in, node, path, {"chakra"}, " (a Chakra trace is the whole workload)");
  const YAML::Node& c = w.require("chakra");
  const MapView m(in, c, w.path_of("chakra"), {"path", "ranks", "retime", "gpu", "dtype"});
  ChakraWorkloadSpec spec;
  spec.path = in.read_string(m.require("path"), m.path_of("path"));
  // A relative path is taken from the scenario file's folder, as workload.calibration's is.
  if (!spec.path.empty() && spec.path.front() != '/' &&
      in.source().find('/') != std::string::npos) {
    spec.path = in.source().substr(0, in.source().rfind('/') + 1) + spec.path;
  }
  spec.ranks = in.read_u32(m.require("ranks"), m.path_of("ranks"), 1);
  if (const YAML::Node* v = m.find("retime")) spec.retime = in.read_bool(*v, m.path_of("retime"));
  std::string gpu_name = "h100";
  const YAML::Node* gpu_node = m.find("gpu");
  if (gpu_node != nullptr) gpu_name = in.read_string(*gpu_node, m.path_of("gpu"));
  const auto gpu = models::gpu_preset(gpu_name);
  if (!gpu) {
    in.fail(m.path_of("gpu"), gpu_node ? *gpu_node : c,
            "expected a GPU preset (" + one_of_names(models::gpu_preset_names()) + "), got " +
                quoted(gpu_name));
  }
  spec.gpu = *gpu;
  if (const YAML::Node* v = m.find("dtype")) {
    spec.dtype = in.read_enum(
        *v, m.path_of("dtype"),
        std::vector<std::pair<std::string_view, models::DType>>{{"bf16", models::DType::Bf16},
                                                                {"fp16", models::DType::Fp16},
                                                                {"fp8", models::DType::Fp8}});
    if (models::peak_flops(spec.gpu, spec.dtype) <= 0) {
      in.fail(m.path_of("dtype"), *v, "expected a dtype this GPU supports, got one it does not");
    }
  }
  const YAML::Node& path_node = m.require("path");
  try {
    spec.trace = chakra::read_trace(spec.path, spec.ranks);
    models::check_chakra_trace(spec.trace);
  } catch (const std::exception& e) {
    in.fail(m.path_of("path"), path_node,
            std::string("expected a Chakra trace set syncsim can "
                        "replay, got: ") +
                e.what());
  }
  if (spec.retime) {
    spec.retimed_nodes = models::retime_chakra_compute(spec.trace, spec.gpu, spec.dtype);
    std::size_t compute = 0;
    for (const auto& r : spec.trace.ranks) {
      for (const auto& n : r.nodes) compute += n.kind == models::ChakraNodeKind::Compute ? 1 : 0;
    }
    if (spec.retimed_nodes < compute) {
      in.warn(m.path_of("retime"),
              std::to_string(compute - spec.retimed_nodes) + " of " + std::to_string(compute) +
                  " compute nodes have no num_ops attribute (or run on the CPU) and keep the "
                  "trace's duration");
    }
  }
  return spec;
}

}  // namespace syncsim::app::yaml_reader

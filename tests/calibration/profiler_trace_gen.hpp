#pragma once
// Writes PyTorch profiler traces in Kineto's Chrome-trace JSON (what torch.profiler's
// export_chrome_trace writes; event layout as in facebookresearch/HolisticTraceAnalysis
// tests/data/call_stack/backward_thread.json): cpu_op and user_annotation events on CPU threads,
// cudaLaunchKernel runtime events with a correlation id, kernels on pid = device, tid = stream with
// the same correlation in args, and the ac2g flow pair between them. Times are microseconds from a
// large absolute base, as Kineto's are.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace syncsim::test {

struct TraceGen {
  int64_t pid = 3914;
  int64_t main_tid = 3914;       // the training loop's thread
  int64_t autograd_tid = 24922;  // autograd's device thread (backward launches)
  int64_t device = 0;
  double base_us = 1666149715000000.0;
  std::string gpu_name = "NVIDIA H100 80GB HBM3";
  int64_t next_correlation = 100000;
  nlohmann::json events = nlohmann::json::array();

  // A CPU-side event: cat "cpu_op" or "user_annotation", t relative to base.
  void cpu_event(const std::string& cat, const std::string& name, int64_t tid, double t, double dur,
                 nlohmann::json args = nlohmann::json::object()) {
    args["External id"] = next_correlation++;
    events.push_back({{"ph", "X"},
                      {"cat", cat},
                      {"name", name},
                      {"pid", pid},
                      {"tid", tid},
                      {"ts", base_us + t},
                      {"dur", dur},
                      {"args", args}});
  }
  void annotation(const std::string& name, int64_t tid, double t, double dur) {
    cpu_event("user_annotation", name, tid, t, dur);
  }
  void op(const std::string& name, int64_t tid, double t, double dur,
          const nlohmann::json& dims = nullptr, const nlohmann::json& types = nullptr,
          const nlohmann::json& concrete = nullptr) {
    nlohmann::json args = nlohmann::json::object();
    if (!dims.is_null()) args["Input Dims"] = dims;
    if (!types.is_null()) args["Input type"] = types;
    if (!concrete.is_null()) args["Concrete Inputs"] = concrete;
    cpu_event("cpu_op", name, tid, t, dur, args);
  }

  // How a kernel is tied to its launch.
  enum class Link { CorrelationAndFlow, FlowOnly, None };

  // cudaLaunchKernel at `launch_t` on `tid` and the kernel at [start, start + dur) on `stream`.
  void kernel(const std::string& name, int64_t stream, double start, double dur, int64_t tid,
              double launch_t, Link link = Link::CorrelationAndFlow,
              const std::string& cat = "kernel") {
    const int64_t corr = next_correlation++;
    nlohmann::json kargs = {{"queued", 0},
                            {"device", device},
                            {"context", 1},
                            {"stream", stream},
                            {"grid", {132, 1, 1}},
                            {"block", {384, 1, 1}},
                            {"registers per thread", 168}};
    if (link == Link::CorrelationAndFlow) kargs["correlation"] = corr;
    events.push_back({{"ph", "X"},
                      {"cat", cat},
                      {"name", name},
                      {"pid", device},
                      {"tid", stream},
                      {"ts", base_us + start},
                      {"dur", dur},
                      {"args", kargs}});
    if (link == Link::None) return;
    events.push_back({{"ph", "X"},
                      {"cat", "cuda_runtime"},
                      {"name", "cudaLaunchKernel"},
                      {"pid", pid},
                      {"tid", tid},
                      {"ts", base_us + launch_t},
                      {"dur", 4.0},
                      {"args", {{"cbid", 211}, {"correlation", corr}}}});
    events.push_back({{"ph", "s"},
                      {"id", corr},
                      {"pid", pid},
                      {"tid", tid},
                      {"ts", base_us + launch_t},
                      {"cat", "ac2g"},
                      {"name", "ac2g"}});
    events.push_back({{"ph", "f"},
                      {"id", corr},
                      {"pid", device},
                      {"tid", stream},
                      {"ts", base_us + start},
                      {"cat", "ac2g"},
                      {"name", "ac2g"},
                      {"bp", "e"}});
  }

  // aten::mm (m x k) * (k x n) on the CPU at t (10 us) launching one GEMM kernel at gpu_start.
  void mm(int64_t m, int64_t n, int64_t k, const std::string& torch_type, int64_t tid, double t,
          double gpu_start, double dur, const std::string& kernel_name,
          Link link = Link::CorrelationAndFlow, int64_t stream = 7) {
    op("aten::mm", tid, t, 10.0, {{m, k}, {k, n}}, {torch_type, torch_type});
    kernel(kernel_name, stream, gpu_start, dur, tid, t + 5.0, link);
  }

  std::string text() const {
    nlohmann::json root = {{"schemaVersion", 1},
                           {"deviceProperties",
                            {{{"id", device},
                              {"name", gpu_name},
                              {"computeMajor", 9},
                              {"computeMinor", 0},
                              {"numSms", 132}}}},
                           {"traceEvents", events},
                           {"traceName", "synthetic.pt.trace.json"}};
    return root.dump();
  }
};

}  // namespace syncsim::test

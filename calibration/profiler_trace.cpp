#include "calibration/profiler_trace.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <sstream>
#include <unordered_map>
#include <utility>

#include <nlohmann/json.hpp>

namespace syncsim::calibration {

namespace {

using nlohmann::json;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool contains(std::string_view s, std::string_view what) {
  return s.find(what) != std::string_view::npos;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// "adam" as a word start: FusedAdam, adam_, _adam; not "hadamard".
bool names_adam(std::string_view name) {
  for (std::size_t at = name.find("dam"); at != std::string_view::npos;
       at = name.find("dam", at + 1)) {
    if (at == 0) continue;
    const char a = name[at - 1];
    if (a == 'A') return true;
    if (a == 'a' && (at == 1 || std::isalpha(static_cast<unsigned char>(name[at - 2])) == 0))
      return true;
  }
  return false;
}

std::string describe(const json& j) {
  if (j.is_null()) return "nothing";
  if (j.is_string()) return "\"" + j.get<std::string>() + "\"";
  if (j.is_array()) return "a list";
  if (j.is_object()) return "an object";
  return j.dump();
}

// A time in microseconds: a number, or a number written as a string (some exporters do).
std::optional<double> number(const json& j) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    try {
      std::size_t used = 0;
      const std::string s = j.get<std::string>();
      const double v = std::stod(s, &used);
      if (used == s.size()) return v;
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::optional<int64_t> integer(const json& j) {
  if (j.is_number_integer()) return j.get<int64_t>();
  if (j.is_string()) {
    try {
      std::size_t used = 0;
      const std::string s = j.get<std::string>();
      const long long v = std::stoll(s, &used);
      if (used == s.size()) return static_cast<int64_t>(v);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

// One CPU-side event of one thread: a cpu_op or a user annotation.
struct CpuEvent {
  std::string name;
  double start = 0, end = 0;
  bool annotation = false;
  const json* args = nullptr;
  int64_t parent = -1;  // index in the thread's sorted list
  int64_t global = -1;  // index over every thread, for TraceKernel::shape_op
};

struct Thread {
  std::vector<CpuEvent> events;
};

struct Where {
  std::string thread;
  double ts = 0;
};

std::string thread_key(const json& e) {
  const auto pid = e.find("pid");
  const auto tid = e.find("tid");
  return (pid == e.end() ? std::string("?") : pid->dump()) + "|" +
         (tid == e.end() ? std::string("?") : tid->dump());
}

bool is_autograd_op(std::string_view name) {
  if (starts_with(name, "autograd::engine::evaluate_function")) return true;
  // SomethingBackward0, SomethingBackward1: autograd nodes.
  std::size_t end = name.size();
  while (end > 0 && std::isdigit(static_cast<unsigned char>(name[end - 1])) != 0) --end;
  return end < name.size() && end >= 8 && name.substr(end - 8, 8) == "Backward";
}

struct PhaseSpan {
  double start = 0, end = 0;
  Phase phase = Phase::Forward;
};

}  // namespace

std::string_view kernel_class_name(KernelClass c) {
  switch (c) {
    case KernelClass::Gemm:
      return "gemm";
    case KernelClass::Attention:
      return "attention";
    case KernelClass::Nccl:
      return "nccl";
    case KernelClass::Elementwise:
      return "elementwise";
    case KernelClass::Optimizer:
      return "optimizer";
    case KernelClass::Memory:
      return "memory";
    case KernelClass::Other:
      return "other";
  }
  return "other";
}

std::string_view phase_name(Phase p) {
  switch (p) {
    case Phase::Forward:
      return "forward";
    case Phase::Backward:
      return "backward";
    case Phase::Optimizer:
      return "optimizer";
  }
  return "forward";
}

KernelClass classify_kernel(std::string_view name) {
  const std::string n = lower(name);
  if (contains(n, "nccl")) return KernelClass::Nccl;
  if (contains(n, "flash_fwd") || contains(n, "flash_bwd") || contains(n, "flash_attn") ||
      contains(n, "fmha") ||
      (contains(n, "cudnn") &&
       (contains(n, "sdpa") || contains(n, "attn") || contains(n, "attention")))) {
    return KernelClass::Attention;
  }
  if (contains(n, "multi_tensor_apply") || names_adam(name)) return KernelClass::Optimizer;
  if (contains(n, "gemm") || contains(n, "nvjet") || contains(n, "gemv") ||
      contains(n, "splitkreduce") || (contains(n, "triton_tem_") && contains(n, "mm"))) {
    return KernelClass::Gemm;
  }
  if (contains(n, "elementwise") || contains(n, "layer_norm") || contains(n, "layernorm") ||
      contains(n, "rms_norm") || contains(n, "rmsnorm") || contains(n, "vectorized_") ||
      contains(n, "triton_") || contains(n, "softmax") || contains(n, "reduce_kernel")) {
    return KernelClass::Elementwise;
  }
  return KernelClass::Other;
}

std::optional<Phase> annotation_phase(std::string_view name) {
  const std::string n = lower(name);
  if (starts_with(name, "Optimizer.step#") ||
      (contains(n, "optimizer") && !contains(n, "zero_grad"))) {
    return Phase::Optimizer;
  }
  if (contains(n, "backward")) return Phase::Backward;
  if (contains(n, "forward")) return Phase::Forward;
  return std::nullopt;
}

ProfilerTrace parse_profiler_trace(const std::string& text, const std::string& file) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& e) {
    std::string what = e.what();
    if (const auto at = what.find("] "); at != std::string::npos) what = what.substr(at + 2);
    throw TraceError(file + ": expected a JSON trace (torch.profiler export_chrome_trace), found " +
                     what);
  }
  const json* events = nullptr;
  if (root.is_array()) {
    events = &root;
  } else if (root.is_object() && root.contains("traceEvents") && root["traceEvents"].is_array()) {
    events = &root["traceEvents"];
  } else {
    throw TraceError(file + ": expected an object with a traceEvents list, found " +
                     (root.is_object() ? std::string("an object without one") : describe(root)));
  }

  ProfilerTrace trace;
  trace.file = file;
  std::map<std::string, Thread> threads;
  std::unordered_map<int64_t, Where> launch_by_correlation;
  std::unordered_map<int64_t, Where> flow_start;               // ac2g "s": id -> launch
  std::map<std::pair<std::string, double>, int64_t> flow_end;  // ac2g "f": (thread, ts) -> id
  struct RawKernel {
    TraceKernel k;
    std::optional<int64_t> correlation;
    std::string thread;  // pid|tid of the kernel event, for the flow that ends on it
  };
  std::vector<RawKernel> raw;
  std::vector<std::pair<TraceStep, std::string>> steps;  // with the annotating thread
  std::vector<PhaseSpan> phase_spans;

  for (std::size_t i = 0; i < events->size(); ++i) {
    const json& e = (*events)[i];
    const std::string where = file + ": traceEvents[" + std::to_string(i) + "]";
    if (!e.is_object())
      throw TraceError(where + ": expected an event object, found " + describe(e));
    const auto ph_it = e.find("ph");
    if (ph_it == e.end() || !ph_it->is_string()) continue;
    const std::string ph = ph_it->get<std::string>();
    const std::string cat = e.contains("cat") && e["cat"].is_string()
                                ? lower(e["cat"].get<std::string>())
                                : std::string();
    if ((ph == "s" || ph == "f") && cat == "ac2g") {
      const auto id = e.contains("id") ? integer(e["id"]) : std::nullopt;
      const auto ts = e.contains("ts") ? number(e["ts"]) : std::nullopt;
      if (!id || !ts) continue;  // an arrow without ends: nothing to link
      if (ph == "s") {
        flow_start[*id] = Where{thread_key(e), *ts};
      } else {
        flow_end[{thread_key(e), *ts}] = *id;
      }
      continue;
    }
    if (ph != "X") continue;
    const bool kernel = cat == "kernel";
    const bool memory =
        cat == "gpu_memcpy" || cat == "gpu_memset" || cat == "memcpy" || cat == "memset";
    const bool runtime = cat == "cuda_runtime" || cat == "runtime" || cat == "cuda_driver";
    const bool op = cat == "cpu_op" || cat == "operator";
    const bool annotation = cat == "user_annotation";
    if (!kernel && !memory && !runtime && !op && !annotation) continue;
    const auto ts = e.contains("ts") ? number(e["ts"]) : std::nullopt;
    if (!ts) {
      throw TraceError(where + ": expected a number ts (microseconds), found " +
                       describe(e.value("ts", json())));
    }
    const auto dur = e.contains("dur") ? number(e["dur"]) : std::nullopt;
    if (!dur || *dur < 0) {
      throw TraceError(where + ": expected a number dur >= 0 (microseconds), found " +
                       describe(e.value("dur", json())));
    }
    const auto name_it = e.find("name");
    if (name_it == e.end() || !name_it->is_string()) {
      throw TraceError(where + ": expected a name string, found " +
                       describe(e.value("name", json())));
    }
    const std::string name = name_it->get<std::string>();
    static const json kNoArgs = json::object();
    const json& args = e.contains("args") && e["args"].is_object() ? e["args"] : kNoArgs;
    if (kernel || memory) {
      RawKernel r;
      r.k.name = name;
      r.k.kind = memory ? KernelClass::Memory : classify_kernel(name);
      r.k.start_us = *ts;
      r.k.duration_us = *dur;
      const auto device = args.contains("device") ? integer(args["device"]) : std::nullopt;
      const auto pid = e.contains("pid") ? integer(e["pid"]) : std::nullopt;
      r.k.device = device ? *device : pid.value_or(0);
      const auto stream = args.contains("stream") ? integer(args["stream"]) : std::nullopt;
      const auto tid = e.contains("tid") ? integer(e["tid"]) : std::nullopt;
      r.k.stream = stream ? *stream : tid.value_or(0);
      if (args.contains("correlation")) r.correlation = integer(args["correlation"]);
      r.thread = thread_key(e);
      raw.push_back(std::move(r));
    } else if (runtime) {
      if (const auto c = args.contains("correlation") ? integer(args["correlation"]) : std::nullopt)
        launch_by_correlation[*c] = Where{thread_key(e), *ts};
    } else {
      threads[thread_key(e)].events.push_back(
          CpuEvent{name, *ts, *ts + *dur, annotation, &args, -1, -1});
      if (annotation && starts_with(name, "ProfilerStep#")) {
        steps.emplace_back(TraceStep{name, *ts, *ts + *dur}, thread_key(e));
      } else if (annotation) {
        if (const auto p = annotation_phase(name)) phase_spans.push_back({*ts, *ts + *dur, *p});
      }
    }
  }
  if (raw.empty()) {
    throw TraceError(
        file +
        ": expected GPU kernels (events with \"cat\": \"kernel\"), found none (was the "
        "profiler run with ProfilerActivity.CUDA?)");
  }

  // The device with the most kernels; a trace is normally one rank's, on one device.
  std::map<int64_t, int64_t> per_device;
  for (const auto& r : raw) ++per_device[r.k.device];
  trace.device = std::max_element(per_device.begin(), per_device.end(), [](auto& a, auto& b) {
                   return a.second < b.second;
                 })->first;
  if (per_device.size() > 1) {
    trace.warnings.push_back("kernels on " + std::to_string(per_device.size()) +
                             " devices; device " + std::to_string(trace.device) +
                             " (the one with the most kernels) is analysed");
  }
  if (root.is_object() && root.contains("deviceProperties") &&
      root["deviceProperties"].is_array()) {
    for (const auto& d : root["deviceProperties"]) {
      if (!d.is_object() || !d.contains("name") || !d["name"].is_string()) continue;
      const auto id = d.contains("id") ? integer(d["id"]) : std::nullopt;
      if (id.value_or(trace.device) == trace.device && trace.gpu_name.empty())
        trace.gpu_name = d["name"].get<std::string>();
    }
  }

  // Nesting per thread: sorted by start (longest first on ties), parent = the enclosing event.
  int64_t global = 0;
  for (auto& [key, t] : threads) {
    auto& ev = t.events;
    std::sort(ev.begin(), ev.end(), [](const CpuEvent& a, const CpuEvent& b) {
      return a.start != b.start ? a.start < b.start : a.end > b.end;
    });
    std::vector<int64_t> stack;
    for (std::size_t i = 0; i < ev.size(); ++i) {
      while (!stack.empty() && ev[static_cast<std::size_t>(stack.back())].end < ev[i].start)
        stack.pop_back();
      ev[i].parent = stack.empty() ? -1 : stack.back();
      ev[i].global = global++;
      stack.push_back(static_cast<int64_t>(i));
    }
  }
  // The innermost event of `thread` around time t (-1: none).
  auto innermost = [&](const Thread& t, double ts) -> int64_t {
    const auto& ev = t.events;
    auto it = std::upper_bound(ev.begin(), ev.end(), ts,
                               [](double x, const CpuEvent& c) { return x < c.start; });
    if (it == ev.begin()) return -1;
    auto i = static_cast<int64_t>(std::distance(ev.begin(), it)) - 1;
    while (i >= 0 && ev[static_cast<std::size_t>(i)].end < ts)
      i = ev[static_cast<std::size_t>(i)].parent;
    return i;
  };

  std::sort(steps.begin(), steps.end(),
            [](const auto& a, const auto& b) { return a.first.start_us < b.first.start_us; });
  const std::string step_thread = steps.empty() ? std::string() : steps.front().second;
  std::sort(raw.begin(), raw.end(),
            [](const RawKernel& a, const RawKernel& b) { return a.k.start_us < b.k.start_us; });

  bool saw_autograd = false;
  for (auto& r : raw) {
    if (r.k.device != trace.device) continue;
    TraceKernel& k = r.k;
    std::optional<Where> launch;
    if (r.correlation) {
      if (const auto it = launch_by_correlation.find(*r.correlation);
          it != launch_by_correlation.end())
        launch = it->second;
    }
    if (!launch) {
      if (const auto f = flow_end.find({r.thread, k.start_us}); f != flow_end.end()) {
        if (const auto s = flow_start.find(f->second); s != flow_start.end()) launch = s->second;
      }
    }
    std::optional<Phase> phase;
    if (launch) {
      ++trace.linked_launches;
      k.launch_us = launch->ts;
      const auto th = threads.find(launch->thread);
      if (th != threads.end()) {
        const auto& ev = th->second.events;
        for (int64_t i = innermost(th->second, launch->ts); i >= 0;
             i = ev[static_cast<std::size_t>(i)].parent) {
          const CpuEvent& c = ev[static_cast<std::size_t>(i)];
          if (!c.annotation && k.launch_op.empty()) k.launch_op = c.name;
          if (k.shape_op < 0 && !c.annotation) {
            if (auto m = matmul_shape(c.name, *c.args)) {
              k.matmul = std::move(m);
              k.shape_op = c.global;
            } else if (auto a = attention_shape(c.name, *c.args)) {
              k.attention = std::move(a);
              k.shape_op = c.global;
            }
          }
          if (!phase && !c.annotation && is_autograd_op(c.name)) {
            phase = Phase::Backward;
            saw_autograd = true;
          }
        }
      }
      if (!phase && !step_thread.empty() && launch->thread != step_thread) {
        // torch.autograd runs backward on its own thread per device (the engine's device
        // threads), so a launch from another thread than the training loop's is backward's.
        phase = Phase::Backward;
        saw_autograd = true;
      }
    }
    // A forward/backward/optimizer annotation around the launch (any thread: backward's launches
    // come from the autograd thread, the annotation from the training loop's) wins.
    const double t = k.launch_us.value_or(k.start_us);
    const PhaseSpan* best = nullptr;
    for (const auto& s : phase_spans) {
      if (s.start <= t && t <= s.end &&
          (best == nullptr || s.end - s.start < best->end - best->start))
        best = &s;
    }
    if (best != nullptr) phase = best->phase;
    if (!phase && k.kind == KernelClass::Optimizer) phase = Phase::Optimizer;
    k.phase = phase.value_or(Phase::Forward);
    trace.kernels.push_back(std::move(k));
  }

  // Steps: the ProfilerStep annotation around each kernel's launch, or, without a launch, the
  // step whose start last precedes the kernel.
  if (steps.empty()) {
    TraceStep whole{"(whole trace)", trace.kernels.front().start_us,
                    trace.kernels.front().end_us()};
    for (const auto& k : trace.kernels) {
      whole.start_us = std::min(whole.start_us, k.launch_us.value_or(k.start_us));
      whole.end_us = std::max(whole.end_us, k.end_us());
    }
    trace.steps.push_back(whole);
    for (auto& k : trace.kernels) k.step = 0;
    trace.warnings.push_back(
        "no ProfilerStep# annotations (torch.profiler's schedule and prof.step() write them): the "
        "whole trace is one step");
  } else {
    for (const auto& s : steps) trace.steps.push_back(s.first);
    for (auto& k : trace.kernels) {
      for (std::size_t i = 0; i < trace.steps.size(); ++i) {
        const TraceStep& s = trace.steps[i];
        const bool in =
            k.launch_us ? (s.start_us <= *k.launch_us && *k.launch_us <= s.end_us)
                        : (s.start_us <= k.start_us && (i + 1 == trace.steps.size() ||
                                                        k.start_us < trace.steps[i + 1].start_us));
        if (in) k.step = static_cast<int>(i);
      }
    }
  }

  const bool forward_backward_annotated =
      std::any_of(phase_spans.begin(), phase_spans.end(),
                  [](const PhaseSpan& p) { return p.phase != Phase::Optimizer; });
  if (forward_backward_annotated) {
    trace.phase_rule = "annotations";
  } else if (trace.linked_launches > 0) {
    trace.phase_rule = "autograd";
    if (!saw_autograd) {
      trace.warnings.push_back(
          "no kernel was launched from an autograd op or thread: every non-optimizer kernel "
          "counts as forward");
    }
  } else {
    // Without launches, only the order is left: from a step's first optimizer kernel on, its
    // compute is the optimizer's; the rest cannot be split into forward and backward.
    trace.phase_rule = "kernel order";
    std::vector<double> first_optimizer(trace.steps.size(), -1);
    for (const auto& k : trace.kernels) {
      if (k.step >= 0 && k.kind == KernelClass::Optimizer &&
          first_optimizer[static_cast<std::size_t>(k.step)] < 0)
        first_optimizer[static_cast<std::size_t>(k.step)] = k.start_us;
    }
    for (auto& k : trace.kernels) {
      if (k.step < 0 || k.kind == KernelClass::Nccl) continue;
      const double f = first_optimizer[static_cast<std::size_t>(k.step)];
      if (f >= 0 && k.start_us >= f) k.phase = Phase::Optimizer;
    }
    trace.warnings.push_back(
        "no kernel could be linked to its launch (no correlation args, runtime events or ac2g "
        "flows): forward and backward are not told apart (all in forward), and no GEMM has a "
        "shape");
  }
  return trace;
}

ProfilerTrace read_profiler_trace(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TraceError(path + ": expected a readable trace file, found none");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_profiler_trace(ss.str(), path);
}

}  // namespace syncsim::calibration

#include "cli/bench.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"
#include "sim/core/simulation.hpp"

namespace syncsim::app {

double peak_rss_mib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0.0;
}

namespace {

// What a case's child process hands back through its pipe.
struct CaseFigures {
  double wall_s = 1e300;
  uint64_t packet_hops = 0;
  uint64_t events = 0;
  double peak_rss_mib = 0;
  double step_s = 0;
  double sim_time_s = 0;
  uint32_t partitions = 1;
  double speedup_bound = 1;
  char error[512] = {};
};

CaseFigures run_case(const std::string& file, const std::vector<std::string>& overrides,
                     int repetitions, uint32_t threads) {
  CaseFigures best;
  LoadOptions options;
  for (const std::string& o : overrides) options.overrides.push_back(parse_override(o));
  for (int i = 0; i < repetitions; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const Scenario s = load_scenario_file(file, options);
    RunOptions run_options;
    run_options.threads = threads;
    const RunResult r = run_scenario(s, run_options);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (wall < best.wall_s) {
      best.wall_s = wall;
      best.packet_hops = r.counters.packet_hops;
      best.events = r.events;
      best.step_s = r.step ? r.step->step.seconds() : 0.0;
      best.sim_time_s = r.sim_time_s;
      best.partitions = r.partitions;
      // The bound for the most threads the run's partitions could take up to `threads`.
      best.speedup_bound = 1;
      for (const RunResult::ThreadScaling& t : r.thread_scaling) {
        if (t.threads <= threads) best.speedup_bound = t.speedup_bound;
      }
    }
  }
  best.peak_rss_mib = peak_rss_mib();
  return best;
}

}  // namespace

ScenarioBenchResult bench_scenario(const std::string& file,
                                   const std::vector<std::string>& overrides, int repetitions,
                                   uint32_t threads) {
  // Each case runs in a child process of its own, so that its peak RSS is its own and not the
  // high-water mark of the cases before it (the allocator keeps what they freed).
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("bench: cannot create a pipe");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("bench: cannot fork");
  if (pid == 0) {
    close(fds[0]);
    CaseFigures figures;
    try {
      figures = run_case(file, overrides, repetitions, threads);
    } catch (const std::exception& e) {
      std::snprintf(figures.error, sizeof figures.error, "%s", e.what());
    }
    const ssize_t written = write(fds[1], &figures, sizeof figures);
    _exit(written == static_cast<ssize_t>(sizeof figures) ? 0 : 1);
  }
  close(fds[1]);
  CaseFigures figures;
  std::size_t got = 0;
  auto* bytes = reinterpret_cast<char*>(&figures);
  while (got < sizeof figures) {
    const ssize_t n = read(fds[0], bytes + got, sizeof figures - got);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got != sizeof figures)
    throw std::runtime_error("bench: the case " + file + " did not finish");
  if (figures.error[0] != '\0') throw std::runtime_error(figures.error);
  ScenarioBenchResult best;
  best.file = file;
  best.overrides = overrides;
  best.wall_s = figures.wall_s;
  best.packet_hops = figures.packet_hops;
  best.events = figures.events;
  best.packet_hops_per_s = static_cast<double>(best.packet_hops) / best.wall_s;
  best.events_per_s = static_cast<double>(best.events) / best.wall_s;
  best.peak_rss_mib = figures.peak_rss_mib;
  best.step_s = figures.step_s;
  best.sim_time_s = figures.sim_time_s;
  best.partitions = figures.partitions;
  best.speedup_bound = figures.speedup_bound;
  return best;
}

std::vector<BenchTarget> bench_targets(const std::vector<NamedBenchResult>& cases) {
  auto find = [&](const std::string& name) -> const ScenarioBenchResult* {
    for (const NamedBenchResult& c : cases) {
      if (c.name == name) return &c.result;
    }
    return nullptr;
  };
  std::vector<BenchTarget> targets;
  if (const auto* r = find("ring-next-leaf-128 ack_every=1")) {
    targets.push_back({"ring-next-leaf-128 ack_every=1 packet hops/s", r->packet_hops_per_s, 10e6});
  }
  if (const auto* r = find("ring-next-leaf-1024 ack_every=1")) {
    targets.push_back({"ring-next-leaf-1024 ack_every=1 packet hops/s", r->packet_hops_per_s, 5e6});
  }
  if (const auto* r = find("ring-next-leaf-128")) {
    targets.push_back({"ring-next-leaf-128 wall s", r->wall_s, 0.25, false});
  }
  if (const auto* r = find("ring-next-leaf-1024")) {
    targets.push_back({"ring-next-leaf-1024 wall s", r->wall_s, 0.8, false});
  }
  if (!cases.empty()) {
    double most = 0;
    for (const NamedBenchResult& c : cases) most = std::max(most, c.result.peak_rss_mib);
    targets.push_back({"largest peak RSS MiB", most, 100, false});
  }
  const auto* plain = find("ring-next-leaf-128");
  const auto* lossless = find("ring-next-leaf-128-dcqcn");
  if (plain != nullptr && lossless != nullptr && plain->packet_hops_per_s > 0) {
    targets.push_back({"ring-next-leaf-128-dcqcn hops/s over ring-next-leaf-128's",
                       lossless->packet_hops_per_s / plain->packet_hops_per_s, 0.7});
  }
  return targets;
}

}  // namespace syncsim::app

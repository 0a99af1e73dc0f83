#include "run/fault_run.hpp"

#include <algorithm>
#include <sstream>
#include <utility>

#include "scenario/scenario_loader.hpp"
#include "sim/net/port_names.hpp"

namespace syncsim::app {

namespace {

const char* kind_name(FaultKind k) {
  switch (k) {
    case FaultKind::LinkDown:
      return "link_down";
    case FaultKind::LinkUp:
      return "link_up";
    case FaultKind::LinkDegraded:
      return "link_degraded";
    case FaultKind::SwitchDown:
      return "switch_down";
    case FaultKind::SwitchUp:
      return "switch_up";
    case FaultKind::NicDown:
      return "nic_down";
    case FaultKind::NicUp:
      return "nic_up";
    case FaultKind::Straggler:
      return "straggler";
    case FaultKind::PfcStorm:
      return "pfc_storm";
  }
  return "?";
}

net::NodeId node_named(const net::NetworkSpec& spec, const std::string& name, net::NodeKind kind) {
  for (net::NodeId n = 0; n < spec.nodes.size(); ++n) {
    if (spec.nodes[n].name == name && spec.nodes[n].kind == kind) return n;
  }
  return net::kNoNode;
}

// The cables a fault acts on. Throws ScenarioError for a name the fabric lacks (loading checks the
// fabrics it builds; this is for the larger ones).
std::vector<uint32_t> cables_of(const Scenario& s, const net::NetworkSpec& spec, const FaultSpec& f,
                                net::NodeId& node) {
  std::vector<uint32_t> out;
  node = net::kNoNode;
  switch (f.kind) {
    case FaultKind::LinkDown:
    case FaultKind::LinkUp:
    case FaultKind::LinkDegraded: {
      const uint32_t port = net::find_egress_port(spec, f.target);
      if (port == UINT32_MAX) {
        throw ScenarioError(s.source, 0, 0, f.path + ".link",
                            "expected a link \"a->b\" of this fabric, got \"" + f.target +
                                "\"; did you mean \"" + net::closest_egress_port(spec, f.target) +
                                "\"?");
      }
      out.push_back(port / 2);
      return out;
    }
    case FaultKind::Straggler:
      return out;
    default:
      break;
  }
  const bool sw = f.kind == FaultKind::SwitchDown || f.kind == FaultKind::SwitchUp;
  node = node_named(spec, f.target, sw ? net::NodeKind::Switch : net::NodeKind::Nic);
  if (node == net::kNoNode) {
    throw ScenarioError(
        s.source, 0, 0, f.path + (sw ? ".switch" : ".nic"),
        "no " + std::string(sw ? "switch" : "NIC") + " named \"" + f.target + "\" in this fabric");
  }
  for (uint32_t l = 0; l < spec.links.size(); ++l) {
    if (spec.links[l].a == node || spec.links[l].b == node) out.push_back(l);
  }
  return out;
}

}  // namespace

FaultRun::FaultRun(const Scenario& scenario, net::NetworkSpec& spec,
                   std::vector<std::string>& warnings)
    : scenario_(scenario) {
  modelled_ = scenario.fidelity != Fidelity::Analytic;
  bool network_faults = false;
  for (std::size_t e = 0; e < scenario.faults.size(); ++e) {
    const FaultSpec& f = scenario.faults[e];
    net::NodeId node = net::kNoNode;
    const std::vector<uint32_t> cables = cables_of(scenario, spec, f, node);
    for (uint32_t r = 0; r < f.count; ++r) {
      const Time at = f.at + f.period * static_cast<int64_t>(r);
      const bool ends = f.duration.has_value();
      const Time until = ends ? at + *f.duration : Time::max();
      Row row{FaultOutcome{}, at, e};
      row.out.kind = kind_name(f.kind);
      row.out.target = f.kind == FaultKind::Straggler ? "gpu " + std::to_string(f.gpu) : f.target;
      row.out.at_s = at.seconds();
      row.out.until_s = ends ? until.seconds() : -1.0;
      row.out.fraction = f.fraction;
      row.out.slowdown = f.slowdown;
      rows_.push_back(row);
      auto add = [&](Time when, net::NetFaultKind kind, double fraction = 1.0) {
        net::NetFault nf;
        nf.at = when;
        nf.kind = kind;
        nf.links = cables;
        nf.fraction = fraction;
        nf.nic = node;
        nf.priority = f.priority;
        network_.push_back(std::move(nf));
        network_faults = true;
      };
      switch (f.kind) {
        case FaultKind::LinkDown:
        case FaultKind::SwitchDown:
        case FaultKind::NicDown:
          add(at, net::NetFaultKind::LinkDown);
          if (ends) add(until, net::NetFaultKind::LinkUp);
          break;
        case FaultKind::LinkUp:
        case FaultKind::SwitchUp:
        case FaultKind::NicUp:
          add(at, net::NetFaultKind::LinkUp);
          break;
        case FaultKind::LinkDegraded:
          add(at, net::NetFaultKind::LinkRate, f.fraction);
          if (ends) add(until, net::NetFaultKind::LinkRate, 1.0);
          break;
        case FaultKind::PfcStorm:
          add(at, net::NetFaultKind::PfcStormStart);
          add(until, net::NetFaultKind::PfcStormEnd);
          break;
        case FaultKind::Straggler:
          by_gpu_.push_back({f.gpu, at, f.slowdown, until});
          break;
      }
    }
  }
  std::stable_sort(rows_.begin(), rows_.end(),
                   [](const Row& a, const Row& b) { return a.at < b.at; });
  std::stable_sort(network_.begin(), network_.end(),
                   [](const net::NetFault& a, const net::NetFault& b) { return a.at < b.at; });
  if (!modelled_ && network_faults) {
    // The analytic backend times each transfer alone on an idle path: there is no time at which a
    // fault could strike. A degraded link is kept as a static capacity; the rest are left out.
    bool degraded = false;
    for (const net::NetFault& f : network_) {
      if (f.kind != net::NetFaultKind::LinkRate || f.fraction >= 1.0) continue;
      degraded = true;
      for (uint32_t l : f.links) {
        net::LinkParams slow = spec.link_classes[spec.links[l].link_class];
        slow.bandwidth = Bandwidth::bps(std::max<int64_t>(
            1, static_cast<int64_t>(static_cast<double>(slow.bandwidth.bits_per_second()) *
                                    f.fraction)));
        slow.name += " (degraded)";
        spec.link_classes.push_back(slow);
        spec.links[l].link_class = static_cast<uint32_t>(spec.link_classes.size() - 1);
      }
    }
    warnings.push_back(std::string("faults: analytic fidelity does not model faults in time") +
                       (degraded ? "; link_degraded is applied as a static capacity for the "
                                   "whole run, the other network faults are ignored"
                                 : "; the network faults are ignored") +
                       " (use fidelity packet or flow)");
    network_.clear();
  }
}

void FaultRun::start(TransferBackend& backend) {
  if (rows_.empty()) return;
  snapshots_.assign(rows_.size(), std::nullopt);
  EventQueue& q = backend.simulation().queue();
  // Scheduled before the faults, so each measurement at a fault's time comes before the fault.
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    q.schedule_fn(rows_[i].at, [this, i, &backend] { snapshots_[i] = backend.counters(); });
  }
  if (!network_.empty() && modelled_) {
    if (!backend.schedule_faults(network_, net::FaultParams{scenario_.routing_convergence})) {
      modelled_ = false;
    }
  }
}

void FaultRun::apply_to_step(models::StepConfig& step, std::vector<std::string>& warnings,
                             bool warn_unplaced) const {
  for (const models::ComputeSlowdown& s : by_gpu_) {
    bool placed = false;
    for (uint32_t rank = 0; rank < step.rank_to_gpu.size(); ++rank) {
      if (step.rank_to_gpu[rank] != s.rank) continue;
      models::ComputeSlowdown ranked = s;
      ranked.rank = rank;
      step.perturbations.slowdowns.push_back(ranked);
      placed = true;
    }
    if (!placed && warn_unplaced) {
      warnings.push_back("faults: straggler on GPU " + std::to_string(s.rank) +
                         ": no rank of the workload runs there (ignored)");
    }
  }
  if (!network_.empty() && step.reuse_bucket_timings) {
    step.reuse_bucket_timings = false;
    if (scenario_.workload && scenario_.workload->reuse_bucket_timings.value_or(false)) {
      warnings.push_back(
          "faults: workload.reuse_bucket_timings is ignored: with network faults every bucket "
          "all-reduce runs live on the faulty fabric");
    }
  }
  if (!network_.empty() && step.model_parallel_idle_fabric_timing) {
    step.model_parallel_idle_fabric_timing = false;
    warnings.push_back(
        "faults: workload.collective_timing: idle_fabric is ignored: with network faults the "
        "step's collectives run live on the faulty fabric");
  }
}

std::vector<FaultOutcome> FaultRun::finish(const TransferBackend& backend,
                                           const std::optional<models::StepResult>& step,
                                           std::vector<std::string>& warnings) const {
  std::vector<FaultOutcome> out;
  const net::NetworkCounters end = backend.counters();
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    FaultOutcome o = rows_[i].out;
    // A fault past the run's end never happened: it has no snapshot, and costs nothing.
    const bool next_taken = i + 1 < rows_.size() && snapshots_[i + 1].has_value();
    const net::NetworkCounters& b = next_taken ? *snapshots_[i + 1] : end;
    const Time from = rows_[i].at;
    const Time to = i + 1 < rows_.size() ? rows_[i + 1].at : Time::max();
    if (i < snapshots_.size() && snapshots_[i]) {
      const net::NetworkCounters& a = *snapshots_[i];
      o.bytes_lost = b.bytes_dropped - a.bytes_dropped;
      o.packets_lost_link_down =
          b.dropped(net::DropReason::LinkDown) - a.dropped(net::DropReason::LinkDown);
      o.flows_rerouted = b.flows_rerouted - a.flows_rerouted;
      o.flows_unroutable = b.flows_unroutable - a.flows_unroutable;
      o.retransmitted_bytes = b.retransmitted_bytes - a.retransmitted_bytes;
      o.lossless_bytes_lost = b.lossless_bytes_lost - a.lossless_bytes_lost;
    }
    if (step && step->engine == "event_driven" && !step->buckets.empty()) {
      Time live_before = Time::zero(), idle_before = Time::zero();
      Time live_during = Time::zero(), idle_during = Time::zero();
      for (const models::BucketTiming& t : step->buckets) {
        if (t.idle <= Time::zero()) continue;
        if (t.end <= from) {
          live_before += t.end - t.start;
          idle_before += t.idle;
        } else if (t.start < to) {
          live_during += t.end - t.start;
          idle_during += t.idle;
          ++o.buckets_during;
        }
      }
      auto ratio = [](Time live, Time idle) {
        return idle > Time::zero() ? live.seconds() / idle.seconds() : 0.0;
      };
      o.bucket_slowdown_before = ratio(live_before, idle_before);
      o.bucket_slowdown_during = ratio(live_during, idle_during);
    }
    out.push_back(std::move(o));
  }
  if (end.lossless_packets_lost > 0) {
    std::ostringstream w;
    w << "faults: " << end.lossless_packets_lost << " packets (" << end.lossless_bytes_lost
      << " B) of lossless (PFC) classes were lost on links that went down; PFC cannot hold "
         "them back. RC recovery (go-back-N) resends them where fabric.transport.go_back_n."
         "lossless is on; otherwise their messages never complete";
    warnings.push_back(w.str());
  }
  if (end.flows_unroutable > 0) {
    warnings.push_back("faults: " + std::to_string(end.flows_unroutable) +
                       " time(s) a flow was left without any route (a NIC or every path to it "
                       "down); it waited for a route to come back");
  }
  return out;
}

}  // namespace syncsim::app

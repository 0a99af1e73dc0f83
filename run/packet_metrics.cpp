#include "run/packet_metrics.hpp"

#include <algorithm>
#include <span>
#include <sstream>

#include "scenario/configuration_warnings.hpp"
#include "sim/net/dcqcn_pacing.hpp"
#include "sim/net/egress_port.hpp"
#include "sim/net/port_names.hpp"

namespace syncsim::app {

namespace {

void summarize_rates(FlowRateStats& fr) {
  if (fr.flows.empty()) return;
  double sum = 0, sq = 0;
  fr.min_bps = fr.flows.front().bps;
  fr.max_bps = fr.flows.front().bps;
  for (const auto& f : fr.flows) {
    sum += f.bps;
    sq += f.bps * f.bps;
    fr.min_bps = std::min(fr.min_bps, f.bps);
    fr.max_bps = std::max(fr.max_bps, f.bps);
  }
  const auto n = static_cast<double>(fr.flows.size());
  fr.mean_bps = sum / n;
  fr.jain_index = sq > 0 ? sum * sum / (n * sq) : 0.0;
}

}  // namespace

void add_flow_details(const net::NetworkSpec& spec, const net::Network& network, net::FlowId f,
                      FlowRateStats::Flow& out) {
  const std::span<const net::PortId> route = network.route_span(f);
  for (std::size_t h = 0; h + 1 < route.size(); ++h) {
    out.path.push_back(spec.nodes[network.routing().ports()[route[h]].peer].name);
  }
  if (const net::DcqcnFlowStats* d = network.dcqcn_flow_stats(f)) {
    out.cnps = d->cnps;
    out.rate_cuts = d->rate_cuts;
    out.min_rate_bps = d->min_rate_bps;
  }
}

std::string port_name(const net::NetworkSpec& spec, const net::Network& network, net::PortId p) {
  const net::PortInfo& info = network.routing().ports()[p];
  return spec.nodes[info.owner].name + "->" + spec.nodes[info.peer].name;
}

void collect_packet_metrics(const net::NetworkSpec& spec, const Simulation& sim,
                            const net::Network& network, RunResult& r) {
  if (const net::DeadlockReport* d = network.deadlock(); d != nullptr && d->detected) {
    r.deadlock.detected = true;
    r.deadlock.at_s = d->formed_at.seconds();
    r.deadlock.detected_at_s = d->detected_at.seconds();
    r.deadlock.priority = d->priority;
    for (net::PortId p : d->ports) r.deadlock.ports.push_back(port_name(spec, network, p));
    std::ostringstream w;
    w << "PFC deadlock on priority " << static_cast<unsigned>(d->priority) << ": a cycle of "
      << d->ports.size() << " paused queues since " << d->formed_at.seconds() * 1e6
      << " us; the run was stopped at " << d->detected_at.seconds() * 1e6 << " us";
    r.warnings.push_back(w.str());
  }
  // InfiniBand has no PFC deadlock detector; a credit loop leaves switch queues holding packets
  // with no credits to send them. A run ends when no live event is left, so whatever a queue
  // still holds then never moves: said once, at the end.
  if (spec.link_layer == net::LinkLayer::Infiniband) {
    std::size_t stuck = 0;
    for (net::PortId p = 0; p < network.port_count(); ++p) {
      const net::EgressPort& port = network.port(p);
      const net::IbCreditState& c = port.ib_credits();
      if (!c.enabled || !port.switch_owned()) continue;
      for (uint8_t prio = 0; prio < net::kMaxPriorities; ++prio) {
        if (port.priority_bytes(prio) > 0 && c.blocks[c.vl_of[prio]] < c.mtu_blocks) {
          ++stuck;
          break;
        }
      }
    }
    if (stuck > 0) {
      r.warnings.push_back("InfiniBand credit deadlock: the run ended with " +
                           std::to_string(stuck) +
                           " switch ports holding packets they have no credits to send (a cycle "
                           "of full buffers, e.g. routes that turn back up the tree)");
    }
  }
  const std::vector<std::string> nw = configuration_warnings(network.findings());
  r.warnings.insert(r.warnings.begin(), nw.begin(), nw.end());
  std::vector<std::pair<double, net::PortId>> paused;
  for (net::PortId p = 0; p < network.port_count(); ++p) {
    const double t = network.port(p).paused_time(sim.now()).seconds();
    r.paused_time_s += t;
    if (t > 0) paused.emplace_back(t, p);
  }
  // Longest first; ties by port id, so the list is deterministic.
  std::sort(paused.begin(), paused.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  if (!r.flow_rates.stated_window) {
    for (net::FlowId f = 0; f < network.flow_count(); ++f) {
      const net::FlowRecord& rec = network.flow(f);
      if (!rec.done) {
        // Listed, not left out: what it delivered between its start and the end of the run.
        const double ran_s = (sim.now() - rec.start).seconds();
        r.flow_rates.flows.push_back(
            {spec.nodes[rec.src].name, spec.nodes[rec.dst].name,
             ran_s > 0 ? static_cast<double>(rec.delivered_bytes) * 8.0 / ran_s : 0.0,
             rec.start.seconds(), -1.0, false});
        add_flow_details(spec, network, f, r.flow_rates.flows.back());
        continue;
      }
      if (rec.finish <= rec.start) continue;
      r.flow_rates.flows.push_back(
          {spec.nodes[rec.src].name, spec.nodes[rec.dst].name,
           static_cast<double>(rec.size_bytes) * 8.0 / (rec.finish - rec.start).seconds(),
           rec.start.seconds(), rec.finish.seconds(), true});
      add_flow_details(spec, network, f, r.flow_rates.flows.back());
    }
  }
  summarize_rates(r.flow_rates);
  r.port_counters = port_counter_rows(spec, network, sim.now());
  double busiest = -1;
  for (const PortCounterRow& row : r.port_counters) {
    if (row.owner == "switch" && row.queue_mean_bytes > busiest) {
      busiest = row.queue_mean_bytes;
      r.busiest_queue_port = row.port;
      r.busiest_queue_priority = row.priority;
      r.queue_mean_bytes = row.queue_mean_bytes;
      r.queue_p99_bytes = row.queue_p99_bytes;
    }
  }
  for (net::FlowId f = 0; f < network.flow_count(); ++f) {
    const net::FlowRecord& rec = network.flow(f);
    if (rec.rc_recovery_ps == 0) continue;
    r.rc_recovered.push_back({spec.nodes[rec.src].name, spec.nodes[rec.dst].name,
                              rec.start.seconds(), Time::ps(rec.rc_recovery_ps).seconds(),
                              rec.done ? rec.finish.seconds() : -1.0});
  }
  std::stable_sort(r.rc_recovered.begin(), r.rc_recovered.end(),
                   [](const auto& a, const auto& b) { return a.recovery_s > b.recovery_s; });
  for (std::size_t i = 0; i < paused.size(); ++i) {
    const net::PortInfo& info = network.routing().ports()[paused[i].second];
    r.paused_ports.emplace_back(spec.nodes[info.owner].name + "->" + spec.nodes[info.peer].name,
                                paused[i].first);
  }
}

}  // namespace syncsim::app

#include "run/result_lists.hpp"

#include <algorithm>

#include "run/runner.hpp"

namespace syncsim::app::result_lists {

using json = nlohmann::json;

json flow_rate_window(const RunResult& r) {
  const FlowRateStats& fr = r.flow_rates;
  if (!fr.stated_window) return "each flow's own [start, finish]";
  return {{"start_s", fr.window_start_s}, {"end_s", fr.window_end_s}};
}

json flow_rate_flows(const RunResult& r) {
  json flows = json::array();
  for (const auto& f : r.flow_rates.flows) {
    flows.push_back({{"src", f.src},
                     {"dst", f.dst},
                     {"bps", f.bps},
                     {"start_s", f.start_s},
                     {"finish_s", f.finish_s},
                     {"completed", f.completed},
                     {"path", f.path},
                     {"cnps", f.cnps},
                     {"rate_cuts", f.rate_cuts},
                     {"min_rate_bps", f.min_rate_bps >= 0 ? json(f.min_rate_bps) : json(nullptr)}});
  }
  return flows;
}

json rc_recovered(const RunResult& r) {
  json out = json::array();
  for (std::size_t i = 0; i < r.rc_recovered.size() && i < 10; ++i) {
    const auto& m = r.rc_recovered[i];
    out.push_back({{"src", m.src},
                   {"dst", m.dst},
                   {"start_s", m.start_s},
                   {"recovery_s", m.recovery_s},
                   {"finish_s", m.finish_s}});
  }
  return out;
}

json jain_by_traffic(const RunResult& r) {
  json out = json::array();
  for (const TrafficFairness& g : r.jain_by_traffic) {
    out.push_back({{"entry", g.entry},
                   {"pattern", g.pattern},
                   {"messages", g.messages},
                   {"completed", g.completed},
                   {"jain_index", g.jain_index}});
  }
  return out;
}

json drops(const RunResult& r) {
  json d = json::object();
  d["buffer_full_packets"] = r.packets_dropped_buffer_full;
  for (const auto& [reason, packets] : r.drops) d[reason] = packets;
  return d;
}

json top_paused_ports(const RunResult& r) {
  json top = json::array();
  for (std::size_t i = 0; i < r.paused_ports.size() && i < 5; ++i) {
    top.push_back({{"port", r.paused_ports[i].first}, {"paused_time_s", r.paused_ports[i].second}});
  }
  return top;
}

json buckets(const RunResult& r) {
  json out = json::array();
  for (const auto& b : r.step->buckets) {
    out.push_back({{"bytes", b.bytes},
                   {"protocol", std::string(models::to_string(b.protocol))},
                   {"ready_s", b.ready.seconds()},
                   {"start_s", b.start.seconds()},
                   {"end_s", b.end.seconds()}});
  }
  return out;
}

json collectives(const RunResult& r) {
  json out = json::array();
  for (const auto& c : r.step->collectives) {
    out.push_back({{"kind", c.kind},
                   {"unit", c.unit},
                   {"bytes", c.bytes},
                   {"protocol", std::string(models::to_string(c.protocol))},
                   {"ready_s", c.ready.seconds()},
                   {"start_s", c.start.seconds()},
                   {"end_s", c.end.seconds()},
                   {"count", c.count}});
  }
  return out;
}
json rank_timeline(const RunResult& r) {
  json out = json::array();
  const models::StepResult& s = *r.step;
  const std::size_t n =
      std::min({s.rank_backward_start.size(), s.rank_backward_end.size(), kTimelineRanks});
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back({{"rank", i},
                   {"backward_start_s", s.rank_backward_start[i].seconds()},
                   {"backward_end_s", s.rank_backward_end[i].seconds()}});
  }
  return out;
}

json link_tiers(const RunResult& r) {
  json out = json::array();
  for (const LinkTierUse& t : r.link_tiers) {
    out.push_back({{"tier", t.tier},
                   {"links", t.links},
                   {"bandwidth_bps", t.bandwidth_bps},
                   {"bytes", t.bytes},
                   {"max_port_bytes", t.max_port_bytes},
                   {"mean_utilisation", t.mean_utilisation},
                   {"max_utilisation", t.max_utilisation}});
  }
  return out;
}

}  // namespace syncsim::app::result_lists

#pragma once
// The result keys whose value is a list or an object built from several fields of a RunResult
// (flows, buckets, collectives, drops by reason, link tiers, the per-rank timeline), read by the
// rows of the result schema (run/result_schema.cpp). Each returns the JSON of its key.
#include <nlohmann/json.hpp>

namespace syncsim::app {

struct RunResult;

namespace result_lists {

nlohmann::json flow_rate_window(const RunResult& r);
nlohmann::json flow_rate_flows(const RunResult& r);
// The 10 messages with the longest RC recovery (lossless classes), longest first.
nlohmann::json rc_recovered(const RunResult& r);
nlohmann::json jain_by_traffic(const RunResult& r);
nlohmann::json drops(const RunResult& r);
// The 5 most paused egress ports, most paused first.
nlohmann::json top_paused_ports(const RunResult& r);
// Workload runs only (they read RunResult::step).
nlohmann::json buckets(const RunResult& r);
nlohmann::json collectives(const RunResult& r);
// The first kTimelineRanks ranks' backward pass (forward is [0, backward start]).
inline constexpr std::size_t kTimelineRanks = 8;
nlohmann::json rank_timeline(const RunResult& r);
nlohmann::json link_tiers(const RunResult& r);

}  // namespace result_lists
}  // namespace syncsim::app

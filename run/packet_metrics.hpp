#pragma once
// What a run reads off the packet network when it ends (run/runner.cpp): the deadlock report, the
// configuration findings, pause times per port and per-flow rates with their paths.
#include <string>

#include "run/runner.hpp"
#include "sim/core/simulation.hpp"
#include "sim/net/network.hpp"

namespace syncsim::app {

// The switches flow f crosses and what DCQCN did to it.
void add_flow_details(const net::NetworkSpec& spec, const net::Network& network, net::FlowId f,
                      FlowRateStats::Flow& out);

// "owner->peer" for port p.
std::string port_name(const net::NetworkSpec& spec, const net::Network& network, net::PortId p);

// The packet network's share of a run's result: the deadlock report, the configuration findings
// (as warnings, first), pause times per port and, unless a rate window was stated, per-flow rates.
void collect_packet_metrics(const net::NetworkSpec& spec, const Simulation& sim,
                            const net::Network& network, RunResult& r);

}  // namespace syncsim::app

// Routing after link faults (routing.hpp): the "is this port up" mask and the hop distances
// recomputed over the cables still up, as a converged routing protocol (BGP withdrawing the lost
// prefixes, the ECMP groups shrinking to the next hops that still reach them) leaves them.
#include <deque>

#include "sim/core/check.hpp"
#include "sim/net/routing.hpp"

namespace syncsim::net {

namespace {
constexpr uint8_t kUnreachable = 255;
}  // namespace

void Routing::set_link_up(uint32_t link, bool up) {
  SIM_CHECK(link < spec_.links.size(), "link index out of range");
  if (port_down_.empty()) {
    if (up) return;
    port_down_.assign(ports_.size(), 0);
  }
  port_down_[2 * link] = up ? 0 : 1;
  port_down_[2 * link + 1] = up ? 0 : 1;
}

void Routing::repair() {
  bool any_down = false;
  for (uint8_t d : port_down_) any_down = any_down || d != 0;
  if (!any_down) {
    live_hops_.clear();  // every cable is up again: the builder's tables hold
    port_down_.clear();
    return;
  }
  live_hops_.resize(spec_.components.size());
  std::deque<NodeId> frontier;
  for (std::size_t c = 0; c < spec_.components.size(); ++c) {
    const NetworkSpec::RoutingComponent& comp = spec_.components[c];
    const std::size_t switches = comp.switches.size();
    std::vector<uint8_t>& hops = live_hops_[c];
    hops.assign(comp.attachments.size() * switches, kUnreachable);
    for (std::size_t a = 0; a < comp.attachments.size(); ++a) {
      uint8_t* row = hops.data() + a * switches;
      const NodeId root = comp.attachments[a];
      row[spec_.switch_index[root]] = 0;
      frontier.assign(1, root);
      while (!frontier.empty()) {
        const NodeId at = frontier.front();
        frontier.pop_front();
        const uint8_t d = row[spec_.switch_index[at]];
        if (d + 1 >= kUnreachable) continue;
        for (PortId p : node_ports_[at]) {
          const NodeId peer = ports_[p].peer;
          if (spec_.nodes[peer].kind != NodeKind::Switch || !port_up(p)) continue;
          uint8_t& h = row[spec_.switch_index[peer]];
          if (h != kUnreachable) continue;
          h = static_cast<uint8_t>(d + 1);
          frontier.push_back(peer);
        }
      }
    }
  }
}

}  // namespace syncsim::net

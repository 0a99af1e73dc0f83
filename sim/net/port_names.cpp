#include "sim/net/port_names.hpp"

#include <algorithm>
#include <cstdint>

namespace syncsim::net {

namespace {

// Levenshtein distance with one row of memory.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string egress_port_name(const NetworkSpec& spec, uint32_t port) {
  const LinkSpec& l = spec.links[port / 2];
  const NodeId owner = port % 2 == 0 ? l.a : l.b;
  const NodeId peer = port % 2 == 0 ? l.b : l.a;
  return spec.nodes[owner].name + "->" + spec.nodes[peer].name;
}

std::vector<std::string> egress_port_names(const NetworkSpec& spec) {
  std::vector<std::string> names;
  names.reserve(spec.links.size() * 2);
  for (uint32_t p = 0; p < spec.links.size() * 2; ++p) names.push_back(egress_port_name(spec, p));
  return names;
}

uint32_t find_egress_port(const NetworkSpec& spec, std::string_view name) {
  for (uint32_t p = 0; p < spec.links.size() * 2; ++p) {
    if (egress_port_name(spec, p) == name) return p;
  }
  return UINT32_MAX;
}

std::string closest_egress_port(const NetworkSpec& spec, std::string_view name) {
  std::string best;
  std::size_t best_distance = SIZE_MAX;
  for (uint32_t p = 0; p < spec.links.size() * 2; ++p) {
    std::string candidate = egress_port_name(spec, p);
    const std::size_t d = edit_distance(name, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = std::move(candidate);
    }
  }
  return best;
}

}  // namespace syncsim::net

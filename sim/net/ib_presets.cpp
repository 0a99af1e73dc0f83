// InfiniBand hardware presets (sources: ib_presets.hpp).
#include "sim/net/ib_presets.hpp"

#include <algorithm>

namespace syncsim::net {

namespace {

template <typename T>
std::optional<T> find_preset(const std::vector<T>& presets, std::string_view name) {
  const auto it =
      std::find_if(presets.begin(), presets.end(), [&](const T& p) { return p.name == name; });
  if (it == presets.end()) return std::nullopt;
  return *it;
}

}  // namespace

const std::vector<IbLinkPreset>& ib_link_presets() {
  static const std::vector<IbLinkPreset> presets{
      {"hdr", Bandwidth::gbps(200)},
      {"ndr", Bandwidth::gbps(400)},
      {"xdr", Bandwidth::gbps(800)},
  };
  return presets;
}

std::optional<IbLinkPreset> ib_link_preset(std::string_view name) {
  return find_preset(ib_link_presets(), name);
}

const std::vector<IbHcaPreset>& ib_hca_presets() {
  static const std::vector<IbHcaPreset> presets{
      {"connectx6", "hdr"},
      {"connectx7", "ndr"},
      {"connectx8", "xdr"},
  };
  return presets;
}

std::optional<IbHcaPreset> ib_hca_preset(std::string_view name) {
  return find_preset(ib_hca_presets(), name);
}

const std::vector<IbSwitchPreset>& ib_switch_presets() {
  static const std::vector<IbSwitchPreset> presets{
      {"qm8700", "hdr", 40, Time::ns(130), 1},
      {"qm9700", "ndr", 64, Time::ns(130), 0},
  };
  return presets;
}

std::optional<IbSwitchPreset> ib_switch_preset(std::string_view name) {
  return find_preset(ib_switch_presets(), name);
}

}  // namespace syncsim::net

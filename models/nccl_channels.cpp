#include "models/nccl_channels.hpp"

#include <algorithm>
#include <cmath>
#include <span>
#include <stdexcept>

namespace syncsim::models {

namespace {

// src/graph/search.cc: the per-channel speeds (GB/s) the search tries, fastest first; "intra" on
// one node, "inter" across nodes.
constexpr double kIntraSm80[] = {40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0,
                                 9.0,  7.0,  6.0,  5.0,  4.0,  3.0};
constexpr double kInterSm80[] = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                 7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
constexpr double kIntraSm90[] = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0};
constexpr double kInterSm90[] = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                 15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
constexpr double kIntraSm100[] = {90.0, 80.0, 70.0, 60.0, 50.0, 45.0,
                                  40.0, 30.0, 24.0, 20.0, 19.0, 18.0};
constexpr double kInterSm100[] = {96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0,
                                  20.0, 17.5, 15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};

// The ring graph's maxChannels (src/init.cc: MAXCHANNELS / 2) and MAXCHANNELS (device.h).
constexpr uint32_t kMaxSearchChannels = 32;
constexpr uint32_t kMaxChannels = 64;
// NCCL_MAX_NVLS_ARITY (src/include/device.h).
constexpr uint32_t kMaxNvlsHeads = 32;

std::span<const double> speeds(uint32_t cc, bool inter) {
  if (cc >= 100) return inter ? std::span<const double>(kInterSm100) : kIntraSm100;
  if (cc >= 90) return inter ? std::span<const double>(kInterSm90) : kIntraSm90;
  return inter ? std::span<const double>(kInterSm80) : kIntraSm80;
}

// The CTAs NVLS runs on (src/transport/nvls.cc ncclNvlsTuning and, across Blackwell nodes,
// ncclNvlsTreeSm100Tuning by NIC speed in GB/s).
uint32_t nvls_ctas(const NcclSystem& s, bool blackwell) {
  if (!blackwell) return 16;    // NVLS_NCHANNELS_SM90
  if (s.nodes == 1) return 24;  // NVLS_NCHANNELS_SM100_NVL
  if (s.nodes == 2 && s.nic_GBps >= 48.0) return 32;
  if (s.nic_GBps >= 96.0) return s.gpus_per_node <= 8 ? 24 : 32;
  if (s.nic_GBps >= 48.0) return 24;
  return 32;  // NVLS_NCHANNELS_SM100
}

}  // namespace

double nccl_channel_copy_GBps(uint32_t compute_capability) {
  if (compute_capability >= 100) return 70.0;
  if (compute_capability >= 90) return 38.7;
  if (compute_capability >= 80) return 24.0;
  return 26.5;
}

double nccl_pcie_x16_GBps(uint32_t generation) {
  if (generation < 3) return 12.0 / std::pow(2.0, 3.0 - generation);
  return 12.0 * std::pow(2.0, generation - 3.0);
}

NcclChannels nccl_channels(const NcclSystem& s, std::optional<uint32_t> requested) {
  if (s.gpus_per_node < 1 || s.nodes < 1) {
    throw std::invalid_argument("NCCL channels: a node needs at least one GPU");
  }
  const bool inter = s.nodes > 1;
  if (inter && s.nics_per_node < 1) {
    throw std::invalid_argument("NCCL channels: a multi-node collective needs a NIC per node");
  }
  const uint32_t g = s.gpus_per_node;
  const uint32_t nics = inter ? std::min(s.nics_per_node, g) : 0;
  const double path = std::min(s.nic_GBps, s.pcie_GBps);
  // Share of a ring's bandwidth a GPU forwards over its NVLinks.
  const double forwarded = g > 1 ? (inter ? (g - 1.0) / g : 1.0) : 0.0;
  NcclChannels out;
  out.compute_capability = s.compute_capability;
  double best_total = 0;
  for (double speed : speeds(s.compute_capability, inter)) {
    double rings = kMaxSearchChannels;
    if (inter) rings = std::min(rings, nics * std::floor(path / speed));
    if (forwarded > 0) rings = std::min(rings, std::floor(s.nvlink_GBps / (speed * forwarded)));
    if (!inter && g == 1) rings = 1;  // a single GPU: nothing to connect
    const double total = rings * speed;
    if (rings >= 1 && total > best_total) {
      best_total = total;
      out.search_channels = static_cast<uint32_t>(rings);
      out.search_bw_GBps = speed;
    }
  }
  if (best_total == 0) {  // slower than the slowest speed NCCL tries: one ring at what there is
    out.search_channels = 1;
    out.search_bw_GBps = inter ? path : s.nvlink_GBps;
  }
  // ncclTopoDupChannels.
  const uint32_t n = out.search_channels;
  const double bw = out.search_bw_GBps;
  if (bw >= 25.0 && !(s.compute_capability > 80 && bw < 50.0 && n > 4)) {
    const uint32_t dup = std::min(2 * n, kMaxSearchChannels);
    // NCCL divides by DIVUP(dup, n), a whole number of copies per ring.
    const uint32_t copies = (dup + n - 1) / n;
    out.search_bw_GBps = bw / copies;
    out.search_channels = dup;
  }
  // connectRings: every ring runs as two channels; Hopper and newer add more across nodes.
  out.channels = std::min(2 * out.search_channels, kMaxChannels);
  if (s.compute_capability >= 90 && inter && out.search_bw_GBps > 45.0 && out.channels < 16) {
    out.channels = std::min(2 * out.channels, kMaxChannels);
  }
  out.default_channels = out.channels;
  if (requested) {
    if (*requested < 1) throw std::invalid_argument("NCCL channels: at least 1 channel");
    out.channels = *requested;
    out.requested = true;
  }
  out.nics_used = inter ? std::min(nics, out.channels) : 0;
  if (s.nvls && s.compute_capability >= 90 && g > 1) {
    // Across nodes every head needs a NIC of its own (getNvlsNetDev) and carries one channel.
    const uint32_t heads = std::min({g, kMaxNvlsHeads, inter ? nics : g});
    for (double speed : speeds(s.compute_capability, inter)) {
      if ((heads + 1.0) * speed <= s.nvlink_GBps && (!inter || speed <= path)) {
        out.nvls_bw_GBps = speed;
        break;
      }
    }
    if (out.nvls_bw_GBps > 0 && heads >= 2) {  // NVLS needs at least 2 channels (tuning.cc)
      const bool blackwell = s.compute_capability >= 100;
      out.nvls_heads = heads;
      out.nvls_efficiency = blackwell ? 0.74 : 0.85;
      out.nvls_channels = nvls_ctas(s, blackwell);
      const double h = heads;
      const double nccl_bus = h * out.nvls_bw_GBps * out.nvls_efficiency * (h - 1.0) / h * 2.0;
      // Plan, link-bound inside a host: algbw = link x h / (h + 1); busbw = algbw x 2 (g - 1) / g.
      const double plan_bus = s.nvlink_GBps * h / (h + 1.0) * 2.0 * (g - 1.0) / g;
      out.nvls_link_efficiency = std::min(1.0, nccl_bus / plan_bus);
      // perChMaxNVLSTreeBws (tuning.cc), by node-count column N2, N4+.
      if (inter)
        out.nvls_tree_cap_GBps =
            s.nodes <= 2 ? (blackwell ? 96.0 : 57.7) : (blackwell ? 80.0 : 45.5);
    }
  }
  // CollNet runs on up to NCCL_MAX_DIRECT_ARITY + 1 = 8 GPUs per node (enqueue.cc).
  if (s.sharp && inter && g <= 8) {
    out.collnet_heads = std::min(nics, 8u);
    out.collnet_nic_GBps = path;
    out.collnet_nvlink_GBps = g > 1 ? s.nvlink_GBps : 0.0;
  }
  return out;
}

}  // namespace syncsim::models

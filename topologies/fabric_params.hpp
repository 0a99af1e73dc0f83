#pragma once
// Plain parameter structs for the fabric builders. The scenario loader fills them; the builders in
// this folder turn them into a net::NetworkSpec.
#include <cstdint>
#include <optional>

#include "sim/net/network_spec.hpp"

namespace syncsim::topo {

enum class TopologyKind : uint8_t { SpineLeaf, FatTree, RailOptimized };

struct HostParams {
  uint32_t gpus = 1;  // GPUs per host; GPU g uses NIC floor(g * nics / gpus)
  uint32_t nics = 1;  // NICs per host
  // The hosts' NVSwitches reduce and multicast in the switch (NVLink SHARP: third-generation
  // NVSwitch and later, HGX H100/H200/B200, GB200 NVL72). Each such host (gpus > 1) gets an NVLS
  // engine endpoint on its NVSwitch (NetworkSpec::nvls_engines), linked at gpus x the NVLink rate:
  // the switch's ports together, so the engine itself never limits the GPUs' NVLinks.
  bool nvls = false;

  // Range rules of any fabric (build_fabric's, fabric_params.cpp): at least one GPU and one NIC.
  FieldErrors check() const;
  // The stricter rule for a stated server: at most one NIC per GPU (each GPU sends through one
  // NIC, so more would carry nothing). build_fabric builds such hosts when asked.
  // `nics_per_gpu`: NICs each GPU sends through (one per plane when it sprays over planes).
  FieldErrors check_every_nic_used(uint32_t nics_per_gpu = 1) const;
};

// 2-tier leaf-spine. Every leaf connects to every spine with `uplinks_per_spine` parallel cables.
// With `oversubscription` set and `spines` unset, the spine count is derived (rounded up) from
// downlink capacity / (ratio * uplink capacity per spine).
struct SpineLeafParams {
  uint32_t leaves = 2;
  uint32_t hosts_per_leaf = 2;
  std::optional<uint32_t> spines;
  uint32_t uplinks_per_spine = 1;
  std::optional<double> oversubscription;
};

// 3-tier fat-tree (Clos). Either k (k-ary: k pods, k/2 leaves and k/2 spines per pod, k/2 hosts per
// leaf, (k/2)^2 cores) or explicit pods. Spine j of every pod connects to core group j
// (cores / spines_per_pod cores), one cable each.
struct FatTreeParams {
  std::optional<uint32_t> k;
  uint32_t pods = 2;
  uint32_t leaves_per_pod = 2;
  uint32_t spines_per_pod = 2;
  uint32_t hosts_per_leaf = 2;
  uint32_t cores = 2;
};

// Rail-optimized: hosts are grouped (a scalable unit); in each group, rail leaf i connects NIC i of
// every host in the group. All leaves of all groups connect to every spine.
struct RailOptimizedParams {
  uint32_t groups = 1;
  uint32_t hosts_per_group = 2;
  uint32_t spines = 2;
  uint32_t uplinks_per_spine = 1;
};

struct LinkClasses {
  net::LinkParams host{.name = "host"};      // NIC <-> leaf
  net::LinkParams fabric{.name = "fabric"};  // leaf <-> spine
  net::LinkParams core{.name = "core"};      // spine <-> core (fat-tree only)
  net::LinkParams nvlink{.name = "nvlink",
                         .bandwidth = Bandwidth::gbps(3600),
                         .delay = Time::ns(100),
                         .mtu = Bytes{4096},
                         .header = Bytes{32}};  // H100 NVLink4: 900 GB/s bidir
};

// How a multi-plane fabric's transfers use the planes (`fabric.plane_selection`).
enum class PlaneSelection : uint8_t {
  Pinned,  // a GPU's traffic stays on the plane of its NIC
  Spray,   // a transfer is split evenly over the planes, through the host's NIC on each
};

struct FabricParams {
  TopologyKind kind = TopologyKind::SpineLeaf;
  // Multi-plane fabric: `planes` identical, disjoint copies of the topology's switches. NIC i of
  // every host plugs into plane i mod planes (host.nics must be a multiple of planes); spine_leaf
  // and fat_tree copy the whole switch fabric per plane, rail_optimized keeps one leaf per rail
  // and gives each plane its own spines (rail i's leaves join plane i mod planes).
  uint32_t planes = 1;
  PlaneSelection plane_selection = PlaneSelection::Pinned;
  SpineLeafParams spine_leaf;
  FatTreeParams fat_tree;
  RailOptimizedParams rail;
  HostParams host;
  LinkClasses links;
  net::SwitchParams switch_params;
  uint64_t ecmp_hash_seed = 0;
  bool ecmp_per_switch_salt = false;
  net::LoadBalancingParams load_balancing;  // copied into the NetworkSpec unchanged
  // SHARP in-network reduction (sharp_aggregation.hpp): with `enabled`, every fabric switch gets
  // an aggregation engine endpoint (NetworkSpec::sharp_engines), linked at the switch's ports
  // together. Copied into the NetworkSpec.
  net::SharpParams sharp;
};

}  // namespace syncsim::topo

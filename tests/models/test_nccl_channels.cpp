// NCCL's channel counts per node shape (models/nccl_channels.hpp), pinned against what NCCL prints
// on those machines ("N coll channels" INFO lines) or derived by hand from its search rules.
#include <doctest/doctest.h>

#include "models/gpu.hpp"
#include "models/nccl_channels.hpp"
#include "models/nccl_setup.hpp"

using namespace syncsim;
using namespace syncsim::models;

namespace {

NcclSystem shape(const std::string& gpu_name, uint32_t nodes, uint32_t gpus, uint32_t nics,
                 int64_t nic_gbps) {
  const GpuSpec gpu = *gpu_preset(gpu_name);
  return nccl_system(nodes * gpus, gpus, nics, Bandwidth::gbps(nic_gbps),
                     Bandwidth::bps(static_cast<int64_t>(nccl_nvlink_bytes_per_s(gpu) * 8)), gpu);
}

}  // namespace

TEST_CASE("nccl_channels: DGX H100 across nodes is 8 rings of 48 GB/s run as 16 channels") {
  // 8 x 400G NICs: a NIC is 50 GB/s to NCCL, the Gen5 x16 path 48; one ring per NIC; no
  // duplication on Hopper (48 < 50 with more than 4 rings); two channels per ring.
  const NcclChannels c = nccl_channels(shape("h100", 8, 8, 8, 400), std::nullopt);
  CHECK(c.search_channels == 8);
  CHECK(c.search_bw_GBps == doctest::Approx(48.0));
  CHECK(c.channels == 16);
  CHECK(c.default_channels == 16);
  CHECK(c.nics_used == 8);
  CHECK_FALSE(c.requested);
  // Two nodes: the same search.
  CHECK(nccl_channels(shape("h100", 2, 8, 8, 400), std::nullopt).channels == 16);
  CHECK(nccl_channels(shape("h200", 128, 8, 8, 400), std::nullopt).channels == 16);
}

TEST_CASE("nccl_channels: one DGX H100 is 6 NVLink rings of 60 GB/s, doubled, run as 24") {
  const NcclChannels c = nccl_channels(shape("h100", 1, 8, 8, 400), std::nullopt);
  CHECK(c.search_channels == 12);
  CHECK(c.search_bw_GBps == doctest::Approx(30.0));
  CHECK(c.channels == 24);
  CHECK(c.nics_used == 0);
}

TEST_CASE("nccl_channels: A100 and B200 nodes") {
  // One DGX A100: 240 GB/s of NVLink (12 x 20.0) -> 6 rings of 40, doubled (Ampere) -> 24.
  CHECK(nccl_channels(shape("a100", 1, 8, 8, 200), std::nullopt).channels == 24);
  // DGX A100 across nodes, 8 x 200G HDR: 25 GB/s NICs behind Gen4 x16 (24): 8 rings of 24, not
  // doubled (< 25), 16 channels.
  const NcclChannels a = nccl_channels(shape("a100", 4, 8, 8, 200), std::nullopt);
  CHECK(a.search_channels == 8);
  CHECK(a.search_bw_GBps == doctest::Approx(24.0));
  CHECK(a.channels == 16);
  // One HGX B200: 721.8 GB/s (18 x 40.1) -> 8 rings of 90, doubled -> 16 of 45 -> 32 channels.
  CHECK(nccl_channels(shape("b200", 1, 8, 8, 400), std::nullopt).channels == 32);
}

TEST_CASE("nccl_channels: fewer NICs than GPUs use every NIC; a request replaces the count") {
  // One 400G NIC for 8 H100s: one ring of 48, doubled to 2 of 24, 4 channels, all on the NIC.
  const NcclChannels one = nccl_channels(shape("h100", 4, 8, 1, 400), std::nullopt);
  CHECK(one.search_channels == 2);
  CHECK(one.channels == 4);
  CHECK(one.nics_used == 1);
  // 4 NICs: 4 rings of 48 -> doubled? No: 48 < 50 but only 4 rings, so doubled to 8 of 24; 16.
  const NcclChannels four = nccl_channels(shape("h100", 4, 8, 4, 400), std::nullopt);
  CHECK(four.search_channels == 8);
  CHECK(four.channels == 16);
  CHECK(four.nics_used == 4);
  // A requested count keeps the search, uses min(channels, NICs) NICs.
  const NcclChannels asked = nccl_channels(shape("h100", 8, 8, 8, 400), 1u);
  CHECK(asked.requested);
  CHECK(asked.channels == 1);
  CHECK(asked.default_channels == 16);
  CHECK(asked.nics_used == 1);
  CHECK(asked.search_channels == 8);
  CHECK_THROWS_AS(nccl_channels(shape("h100", 8, 8, 8, 400), 0u), std::invalid_argument);
  NcclSystem no_nic = shape("h100", 2, 8, 8, 400);
  no_nic.nics_per_node = 0;
  CHECK_THROWS_AS(nccl_channels(no_nic, std::nullopt), std::invalid_argument);
}

TEST_CASE("nccl_pcie_x16_GBps follows NCCL's per-lane table") {
  CHECK(nccl_pcie_x16_GBps(3) == doctest::Approx(12.0));
  CHECK(nccl_pcie_x16_GBps(4) == doctest::Approx(24.0));
  CHECK(nccl_pcie_x16_GBps(5) == doctest::Approx(48.0));
}

TEST_CASE("GPU presets carry their NVLink as NCCL rates it") {
  CHECK(nccl_nvlink_bytes_per_s(*gpu_preset("a100")) == doctest::Approx(240e9));
  CHECK(nccl_nvlink_bytes_per_s(*gpu_preset("h100")) == doctest::Approx(370.8e9));
  CHECK(nccl_nvlink_bytes_per_s(*gpu_preset("b200")) == doctest::Approx(721.8e9));
  CHECK(gpu_preset("a100")->sm_count == 108);
  CHECK(gpu_preset("h100")->compute_capability == 90);
  CHECK_FALSE(gpu_preset("a100")->nvswitch_sharp);
  CHECK(gpu_preset("h200")->nvswitch_sharp);
}

#pragma once
// Synthetic traffic: explicit messages or generated patterns over GPU ranks, expanded into a flat
// list of messages. Patterns address global GPU ranks (host h, local GPU g -> rank h *
// gpus_per_host + g).
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/core/units.hpp"

namespace syncsim::models {

enum class TrafficPattern : uint8_t {
  Explicit,     // the listed messages
  RingShift,    // rank i -> (i + shift) mod n, for every rank
  Permutation,  // a seeded random derangement: every rank sends to exactly one other and receives
                // one
  Incast,       // `senders` ranks -> `receiver` (IncastSenders says which ranks)
  AllToAll,     // every rank -> every other rank
};

// Which ranks an incast's senders are. Operators test an incast with one sender per host (one NIC
// each, as ib_write_bw or a many-to-one collective stage runs it): consecutive ranks would put the
// receiver's own NVLink peers among the senders, and their traffic never reaches the fabric.
enum class IncastSenders : uint8_t {
  DistinctHosts,  // one rank on each of the hosts after the receiver's, at the receiver's local
                  // GPU index (its rail), hosts taken in order receiver_host+1, +2, ... (mod hosts)
  Consecutive,    // ranks receiver+1, receiver+2, ... (mod n), whatever host they are on
};

struct MessageSpec {
  uint32_t src_gpu = 0;
  uint32_t dst_gpu = 0;
  Bytes size{0};
  Time start = Time::zero();
  uint8_t priority = 0;
  uint32_t traffic_entry = 0;  // index of the `traffic:` entry it came from (set by expand_traffic)
};

struct TrafficSpec {
  TrafficPattern pattern = TrafficPattern::Explicit;
  Bytes size{0};              // message size for generated patterns
  Time start = Time::zero();  // start time for generated patterns
  uint8_t priority = 0;       // 802.1p class for generated patterns
  int64_t shift = 1;          // RingShift
  uint32_t senders = 0;       // Incast: number of senders
  uint32_t receiver = 0;      // Incast
  IncastSenders sender_placement = IncastSenders::DistinctHosts;  // Incast
  std::vector<MessageSpec> messages;                              // Explicit
};

// A traffic entry that cannot be expanded on this fabric. `path` is the dotted path below the
// entry ("shift", "senders", "messages.3.dst"); `index` is the entry's position in the traffic
// list.
class TrafficError : public std::invalid_argument {
 public:
  TrafficError(std::size_t index, std::string path, const std::string& what)
      : std::invalid_argument(what), index_(index), path_(std::move(path)) {}
  std::size_t index() const { return index_; }
  const std::string& path() const { return path_; }

 private:
  std::size_t index_;
  std::string path_;
};

// Expands every entry into messages, in entry order then rank order. `seed` drives Permutation.
// `host_of_rank[r]` is the host of GPU rank r (its size is the rank count); hosts are numbered
// 0..hosts-1.
std::vector<MessageSpec> expand_traffic(const std::vector<TrafficSpec>& traffic,
                                        const std::vector<uint32_t>& host_of_rank, uint64_t seed);
// The same with one GPU per host (rank r on host r).
std::vector<MessageSpec> expand_traffic(const std::vector<TrafficSpec>& traffic, uint32_t gpu_count,
                                        uint64_t seed);

}  // namespace syncsim::models

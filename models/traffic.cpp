#include "models/traffic.hpp"

#include <algorithm>
#include <numeric>
#include <utility>

#include "sim/core/rng.hpp"

namespace syncsim::models {
namespace {

// Tags the RNG streams of traffic generation so they never coincide with another component's
// streams derived from the same scenario seed.
constexpr uint64_t kPermutationStreamTag = 0x7472'6166'6669'6370ull;  // "traffic p"

constexpr uint8_t kMaxPriority = 7;  // 802.1p has eight classes

std::string rank_count(uint32_t n) {
  return std::to_string(n) + (n == 1 ? " GPU rank" : " GPU ranks");
}

void check_generated(const TrafficSpec& spec, std::size_t index) {
  if (spec.size <= Bytes{0}) {
    throw TrafficError(
        index, "size",
        "message size must be positive, got " + std::to_string(spec.size.count()) + " B");
  }
  if (spec.start < Time::zero()) {
    throw TrafficError(index, "start", "start time must not be negative");
  }
  if (spec.priority > kMaxPriority) {
    throw TrafficError(index, "priority",
                       "priority must be in 0..7, got " + std::to_string(spec.priority));
  }
}

MessageSpec message(const TrafficSpec& spec, uint32_t src, uint32_t dst) {
  return MessageSpec{.src_gpu = src,
                     .dst_gpu = dst,
                     .size = spec.size,
                     .start = spec.start,
                     .priority = spec.priority};
}

void expand_explicit(const TrafficSpec& spec, std::size_t index, uint32_t n,
                     std::vector<MessageSpec>& out) {
  for (std::size_t k = 0; k < spec.messages.size(); ++k) {
    const MessageSpec& m = spec.messages[k];
    const std::string at = "messages." + std::to_string(k) + ".";
    if (m.src_gpu >= n) {
      throw TrafficError(index, at + "src",
                         "GPU rank " + std::to_string(m.src_gpu) +
                             " is out of range: the fabric has " + rank_count(n));
    }
    if (m.dst_gpu >= n) {
      throw TrafficError(index, at + "dst",
                         "GPU rank " + std::to_string(m.dst_gpu) +
                             " is out of range: the fabric has " + rank_count(n));
    }
    if (m.src_gpu == m.dst_gpu) {
      throw TrafficError(
          index, at + "dst",
          "destination must differ from source (both are rank " + std::to_string(m.src_gpu) + ")");
    }
    if (m.size <= Bytes{0}) {
      throw TrafficError(
          index, at + "size",
          "message size must be positive, got " + std::to_string(m.size.count()) + " B");
    }
    if (m.start < Time::zero()) {
      throw TrafficError(index, at + "start", "start time must not be negative");
    }
    if (m.priority > kMaxPriority) {
      throw TrafficError(index, at + "priority",
                         "priority must be in 0..7, got " + std::to_string(m.priority));
    }
    out.push_back(m);
  }
}

void expand_ring_shift(const TrafficSpec& spec, std::size_t index, uint32_t n,
                       std::vector<MessageSpec>& out) {
  const int64_t ranks = n;
  // Normalise into [0, n) so negative shifts go the other way round the ring.
  const int64_t shift = ((spec.shift % ranks) + ranks) % ranks;
  if (shift == 0) {
    throw TrafficError(index, "shift",
                       "shift " + std::to_string(spec.shift) + " is a multiple of the " +
                           rank_count(n) + ", so every rank would send to itself");
  }
  for (uint32_t i = 0; i < n; ++i) {
    const auto dst = static_cast<uint32_t>((i + shift) % ranks);
    out.push_back(message(spec, i, dst));
  }
}

void expand_permutation(const TrafficSpec& spec, std::size_t index, uint32_t n, uint64_t seed,
                        std::vector<MessageSpec>& out) {
  if (n < 2) {
    throw TrafficError(index, "pattern",
                       "a permutation needs at least 2 GPU ranks, the fabric has " + rank_count(n));
  }
  std::vector<uint32_t> dst(n);
  std::iota(dst.begin(), dst.end(), 0u);
  RngStream rng(seed, mix64(kPermutationStreamTag, index));
  for (uint32_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<uint32_t>(rng.below(uint64_t{i} + 1));
    std::swap(dst[i], dst[j]);
  }
  // Swapping a fixed point with its successor leaves neither position fixed (the successor receives
  // i != i+1, and position i receives a value that was not i), so one pass yields a derangement
  // without redrawing, and the result depends only on (seed, index).
  for (uint32_t i = 0; i < n; ++i) {
    if (dst[i] == i) {
      std::swap(dst[i], dst[(i + 1) % n]);
    }
  }
  for (uint32_t i = 0; i < n; ++i) {
    out.push_back(message(spec, i, dst[i]));
  }
}

void expand_incast(const TrafficSpec& spec, std::size_t index,
                   const std::vector<uint32_t>& host_of_rank, std::vector<MessageSpec>& out) {
  const auto n = static_cast<uint32_t>(host_of_rank.size());
  if (spec.receiver >= n) {
    throw TrafficError(index, "receiver",
                       "receiver rank " + std::to_string(spec.receiver) +
                           " is out of range: the fabric has " + rank_count(n));
  }
  if (spec.sender_placement == IncastSenders::Consecutive) {
    if (spec.senders < 1 || spec.senders > n - 1) {
      throw TrafficError(index, "senders",
                         std::to_string(spec.senders) + " senders do not fit: with " +
                             rank_count(n) + " an incast has 1.." + std::to_string(n - 1) +
                             " senders");
    }
    for (uint32_t k = 1; k <= spec.senders; ++k) {
      const auto src = static_cast<uint32_t>((uint64_t{spec.receiver} + k) % n);
      out.push_back(message(spec, src, spec.receiver));
    }
    return;
  }
  // Ranks of each host, in rank order.
  uint32_t hosts = 0;
  for (const uint32_t h : host_of_rank) hosts = std::max(hosts, h + 1);
  std::vector<std::vector<uint32_t>> ranks_of(hosts);
  for (uint32_t r = 0; r < n; ++r) ranks_of[host_of_rank[r]].push_back(r);
  const uint32_t home = host_of_rank[spec.receiver];
  const auto& home_ranks = ranks_of[home];
  const auto local = static_cast<std::size_t>(
      std::find(home_ranks.begin(), home_ranks.end(), spec.receiver) - home_ranks.begin());
  const uint32_t others = hosts - 1;
  if (spec.senders < 1 || spec.senders > others) {
    throw TrafficError(
        index, "senders",
        std::to_string(spec.senders) + " senders on distinct hosts do not fit: the fabric has " +
            std::to_string(hosts) + (hosts == 1 ? " host" : " hosts") +
            ", so an incast into rank " + std::to_string(spec.receiver) + " has 1.." +
            std::to_string(others) + " (sender_placement: consecutive takes ranks on any host)");
  }
  for (uint32_t k = 1; k <= spec.senders; ++k) {
    const auto& on_host = ranks_of[(home + k) % hosts];
    // The receiver's local GPU index, so every sender is on the receiver's rail.
    out.push_back(message(spec, on_host[std::min(local, on_host.size() - 1)], spec.receiver));
  }
}

void expand_all_to_all(const TrafficSpec& spec, std::size_t index, uint32_t n,
                       std::vector<MessageSpec>& out) {
  if (n < 2) {
    throw TrafficError(index, "pattern",
                       "all-to-all needs at least 2 GPU ranks, the fabric has " + rank_count(n));
  }
  out.reserve(out.size() + std::size_t{n} * (n - 1));
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t j = 0; j < n; ++j) {
      if (i != j) {
        out.push_back(message(spec, i, j));
      }
    }
  }
}

}  // namespace

std::vector<MessageSpec> expand_traffic(const std::vector<TrafficSpec>& traffic, uint32_t gpu_count,
                                        uint64_t seed) {
  std::vector<uint32_t> host_of_rank(gpu_count);
  std::iota(host_of_rank.begin(), host_of_rank.end(), 0u);
  return expand_traffic(traffic, host_of_rank, seed);
}

std::vector<MessageSpec> expand_traffic(const std::vector<TrafficSpec>& traffic,
                                        const std::vector<uint32_t>& host_of_rank, uint64_t seed) {
  const auto gpu_count = static_cast<uint32_t>(host_of_rank.size());
  std::vector<MessageSpec> out;
  for (std::size_t index = 0; index < traffic.size(); ++index) {
    const TrafficSpec& spec = traffic[index];
    const std::size_t first = out.size();
    if (spec.pattern != TrafficPattern::Explicit) {
      if (gpu_count == 0) {
        throw TrafficError(index, "pattern", "the fabric has no GPU ranks");
      }
      check_generated(spec, index);
    }
    switch (spec.pattern) {
      case TrafficPattern::Explicit:
        expand_explicit(spec, index, gpu_count, out);
        break;
      case TrafficPattern::RingShift:
        expand_ring_shift(spec, index, gpu_count, out);
        break;
      case TrafficPattern::Permutation:
        expand_permutation(spec, index, gpu_count, seed, out);
        break;
      case TrafficPattern::Incast:
        expand_incast(spec, index, host_of_rank, out);
        break;
      case TrafficPattern::AllToAll:
        expand_all_to_all(spec, index, gpu_count, out);
        break;
    }
    for (std::size_t k = first; k < out.size(); ++k) {
      out[k].traffic_entry = static_cast<uint32_t>(index);
    }
  }
  return out;
}

}  // namespace syncsim::models

#include <doctest/doctest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "models/traffic.hpp"

using syncsim::Bytes;
using syncsim::Time;
using syncsim::models::expand_traffic;
using syncsim::models::MessageSpec;
using syncsim::models::TrafficError;
using syncsim::models::TrafficPattern;
using syncsim::models::TrafficSpec;

namespace {

TrafficSpec generated(TrafficPattern pattern) {
  TrafficSpec t;
  t.pattern = pattern;
  t.size = Bytes{1024};
  t.start = Time::us(2);
  t.priority = 3;
  return t;
}

std::vector<std::pair<uint32_t, uint32_t>> pairs(const std::vector<MessageSpec>& msgs) {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (const MessageSpec& m : msgs) {
    out.emplace_back(m.src_gpu, m.dst_gpu);
  }
  return out;
}

// "index:path: what" of the TrafficError thrown, or "<no error>".
std::string traffic_error(const std::vector<TrafficSpec>& traffic, uint32_t gpus) {
  try {
    expand_traffic(traffic, gpus, 1);
  } catch (const TrafficError& e) {
    return std::to_string(e.index()) + ":" + e.path();
  }
  return "<no error>";
}

bool is_derangement(const std::vector<MessageSpec>& msgs, uint32_t n) {
  if (msgs.size() != n) {
    return false;
  }
  std::set<uint32_t> dsts;
  for (uint32_t i = 0; i < n; ++i) {
    if (msgs[i].src_gpu != i || msgs[i].dst_gpu == i || msgs[i].dst_gpu >= n) {
      return false;
    }
    dsts.insert(msgs[i].dst_gpu);
  }
  return dsts.size() == n;
}

}  // namespace

TEST_CASE("traffic: ring shift sends rank i to (i + shift) mod n") {
  TrafficSpec t = generated(TrafficPattern::RingShift);
  t.shift = 3;
  const auto msgs = expand_traffic({t}, 8, 1);
  REQUIRE(msgs.size() == 8);
  for (uint32_t i = 0; i < 8; ++i) {
    CHECK(msgs[i].src_gpu == i);
    CHECK(msgs[i].dst_gpu == (i + 3) % 8);
    CHECK(msgs[i].size == Bytes{1024});
    CHECK(msgs[i].start == Time::us(2));
    CHECK(msgs[i].priority == 3);
  }
  t.shift = -1;  // the other way round
  CHECK(expand_traffic({t}, 4, 1)[0].dst_gpu == 3);
  t.shift = 9;  // wraps
  CHECK(expand_traffic({t}, 8, 1)[0].dst_gpu == 1);
  t.shift = 16;
  CHECK(traffic_error({t}, 8) == "0:shift");
  t.shift = 0;
  CHECK(traffic_error({t}, 8) == "0:shift");
  t.shift = 1;
  CHECK(traffic_error({t}, 1) == "0:shift");  // one rank can only send to itself
}

TEST_CASE("traffic: incast senders sit on distinct hosts, on the receiver's rail, by default") {
  // 4 hosts x 4 GPUs: rank r on host r / 4.
  std::vector<uint32_t> host_of_rank;
  for (uint32_t r = 0; r < 16; ++r) host_of_rank.push_back(r / 4);
  TrafficSpec t = generated(TrafficPattern::Incast);
  t.senders = 3;
  t.receiver = 6;  // host 1, local GPU 2
  CHECK(pairs(expand_traffic({t}, host_of_rank, 1)) ==
        std::vector<std::pair<uint32_t, uint32_t>>{{10, 6}, {14, 6}, {2, 6}});
  std::set<uint32_t> hosts;
  for (const MessageSpec& m : expand_traffic({t}, host_of_rank, 1)) {
    CHECK(host_of_rank[m.src_gpu] != host_of_rank[t.receiver]);
    hosts.insert(host_of_rank[m.src_gpu]);
  }
  CHECK(hosts.size() == 3);
  // A fourth sender would need a fifth host.
  t.senders = 4;
  try {
    expand_traffic({t}, host_of_rank, 1);
    FAIL("expected an error");
  } catch (const TrafficError& e) {
    CHECK(e.path() == "senders");
    CHECK(std::string(e.what()).find("the fabric has 4 hosts") != std::string::npos);
  }
  // The old behaviour: consecutive ranks, three of them the receiver's NVLink peers.
  t.sender_placement = syncsim::models::IncastSenders::Consecutive;
  t.senders = 4;
  CHECK(pairs(expand_traffic({t}, host_of_rank, 1)) ==
        std::vector<std::pair<uint32_t, uint32_t>>{{7, 6}, {8, 6}, {9, 6}, {10, 6}});
  t.senders = 15;
  CHECK(expand_traffic({t}, host_of_rank, 1).size() == 15);
}

TEST_CASE("traffic: incast senders follow the receiver round the ring") {
  TrafficSpec t = generated(TrafficPattern::Incast);
  t.senders = 3;
  t.receiver = 6;
  CHECK(pairs(expand_traffic({t}, 8, 1)) ==
        std::vector<std::pair<uint32_t, uint32_t>>{{7, 6}, {0, 6}, {1, 6}});
  t.senders = 7;  // everyone else
  CHECK(expand_traffic({t}, 8, 1).size() == 7);
  t.senders = 8;  // larger than the fabric: a rank would send to itself
  CHECK(traffic_error({t}, 8) == "0:senders");
  t.senders = 0;
  CHECK(traffic_error({t}, 8) == "0:senders");
  t.senders = 1;
  t.receiver = 8;
  CHECK(traffic_error({t}, 8) == "0:receiver");
}

TEST_CASE("traffic: all-to-all covers every ordered pair once") {
  const auto msgs = expand_traffic({generated(TrafficPattern::AllToAll)}, 5, 1);
  CHECK(msgs.size() == 20);
  std::set<std::pair<uint32_t, uint32_t>> seen;
  for (const MessageSpec& m : msgs) {
    CHECK(m.src_gpu != m.dst_gpu);
    seen.emplace(m.src_gpu, m.dst_gpu);
  }
  CHECK(seen.size() == 20);
  CHECK(traffic_error({generated(TrafficPattern::AllToAll)}, 1) == "0:pattern");
}

TEST_CASE("traffic: permutation is a seeded derangement") {
  const TrafficSpec t = generated(TrafficPattern::Permutation);
  for (uint32_t n = 2; n <= 40; ++n) {
    for (uint64_t seed = 0; seed < 20; ++seed) {
      CHECK(is_derangement(expand_traffic({t}, n, seed), n));
    }
  }
  const auto a = pairs(expand_traffic({t}, 64, 7));
  CHECK(a == pairs(expand_traffic({t}, 64, 7)));  // deterministic for a seed
  CHECK(a != pairs(expand_traffic({t}, 64, 8)));  // and changes with it
  // Two permutation entries in one scenario draw from different streams.
  const auto both = expand_traffic({t, t}, 64, 7);
  const std::vector<MessageSpec> first(both.begin(), both.begin() + 64);
  const std::vector<MessageSpec> second(both.begin() + 64, both.end());
  CHECK(pairs(first) == a);
  CHECK(pairs(second) != a);
  CHECK(is_derangement(second, 64));
  // n = 2 has one derangement.
  CHECK(pairs(expand_traffic({t}, 2, 123)) ==
        std::vector<std::pair<uint32_t, uint32_t>>{{0, 1}, {1, 0}});
  CHECK(traffic_error({t}, 1) == "0:pattern");
}

TEST_CASE("traffic: explicit messages are copied and checked against the fabric") {
  TrafficSpec t;
  t.messages = {
      {.src_gpu = 0, .dst_gpu = 3, .size = Bytes{10}, .start = Time::ns(5), .priority = 1},
      {.src_gpu = 2, .dst_gpu = 1, .size = Bytes{20}}};
  const auto msgs = expand_traffic({t}, 4, 1);
  REQUIRE(msgs.size() == 2);
  CHECK(msgs[0].dst_gpu == 3);
  CHECK(msgs[0].start == Time::ns(5));
  CHECK(msgs[0].priority == 1);
  CHECK(msgs[1].size == Bytes{20});

  CHECK(traffic_error({t}, 3) == "0:messages.0.dst");
  TrafficSpec bad = t;
  bad.messages[1].src_gpu = 4;
  CHECK(traffic_error({t, bad}, 4) == "1:messages.1.src");
  bad = t;
  bad.messages[1].dst_gpu = 2;
  CHECK(traffic_error({bad}, 4) == "0:messages.1.dst");
  bad = t;
  bad.messages[0].size = Bytes{0};
  CHECK(traffic_error({bad}, 4) == "0:messages.0.size");
}

TEST_CASE("traffic: entries expand in order and generated sizes must be positive") {
  TrafficSpec ring = generated(TrafficPattern::RingShift);
  TrafficSpec incast = generated(TrafficPattern::Incast);
  incast.senders = 2;
  const auto msgs = expand_traffic({ring, incast}, 4, 1);
  REQUIRE(msgs.size() == 6);
  CHECK(msgs[4].dst_gpu == 0);
  CHECK(msgs[5].dst_gpu == 0);

  TrafficSpec empty = generated(TrafficPattern::AllToAll);
  empty.size = Bytes{0};
  CHECK(traffic_error({ring, empty}, 4) == "1:size");
  CHECK(traffic_error({ring}, 0) == "0:pattern");
}

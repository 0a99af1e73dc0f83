// Reading Chakra trace files: the layout, the attributes syncsim reads, and the errors for what it
// does not replay.
#include <doctest/doctest.h>

#include <string>

#include "chakra/chakra_files.hpp"
#include "chakra_fixtures.hpp"

using namespace syncsim;
using namespace syncsim::chakra_fixtures;

TEST_CASE("chakra files: nodes, dependencies and attributes read back from the protolib layout") {
  const std::string dir = temp_dir("read");
  pb::Node c = comp(3, 1500);
  pb::AttributeProto ops;
  ops.set_name("num_ops");
  ops.set_uint64_val(1'000'000);
  *c.add_attr() = ops;
  *c.add_attr() = int_attr("rf_id", 9);  // ignored (PyTorch's record id)
  const std::string prefix = write_all(
      dir, 2, {c, coll(5, pb::REDUCE_SCATTER, 4096, {3}, "tp"), p2p(6, true, 1, 100, {5})});
  const models::ChakraRankTrace r0 = chakra::read_rank_file(prefix + ".0.et", 0, 2);
  REQUIRE(r0.nodes.size() == 3);
  CHECK(r0.nodes[0].id == 3);
  CHECK(r0.nodes[0].kind == models::ChakraNodeKind::Compute);
  CHECK(r0.nodes[0].duration == Time::us(1500));
  REQUIRE(r0.nodes[0].num_ops.has_value());
  CHECK(*r0.nodes[0].num_ops == 1e6);
  CHECK(r0.nodes[1].kind == models::ChakraNodeKind::Collective);
  CHECK(r0.nodes[1].op == models::CollectiveOp::ReduceScatter);
  CHECK(r0.nodes[1].bytes == 4096);
  CHECK(r0.nodes[1].group == "tp");
  CHECK(r0.nodes[1].data_deps == std::vector<uint64_t>{3});
  CHECK(r0.nodes[2].kind == models::ChakraNodeKind::Send);
  CHECK(r0.nodes[2].peer == 1);
  CHECK(r0.nodes[2].tag == 7);
  // A folder holding one set stands for its prefix.
  CHECK(chakra::rank_file(dir, 1) == prefix + ".1.et");
  CHECK(chakra::read_rank_file(chakra::rank_file(dir, 0), 0, 2).nodes.size() == 3);
}

TEST_CASE("chakra files: what syncsim writes reads back the same") {
  const std::string dir = temp_dir("write");
  models::ChakraTrace t;
  t.ranks.resize(2);
  for (auto& r : t.ranks) {
    models::ChakraNode a;
    a.id = 0;
    a.name = "fwd";
    a.duration = Time::us(12);
    models::ChakraNode b;
    b.id = 1;
    b.kind = models::ChakraNodeKind::Collective;
    b.op = models::CollectiveOp::AllGather;
    b.bytes = 1 << 20;
    b.group = "dp";
    b.ctrl_deps = {0};
    r.nodes = {a, b};
  }
  chakra::write_trace(t, dir, "x");
  const models::ChakraTrace back = chakra::read_trace(dir + "/x", 2);
  REQUIRE(back.ranks.size() == 2);
  REQUIRE(back.ranks[1].nodes.size() == 2);
  CHECK(back.ranks[1].nodes[0].duration == Time::us(12));
  CHECK(back.ranks[1].nodes[0].name == "fwd");
  CHECK(back.ranks[1].nodes[1].op == models::CollectiveOp::AllGather);
  CHECK(back.ranks[1].nodes[1].bytes == 1 << 20);
  CHECK(back.ranks[1].nodes[1].group == "dp");
  CHECK(back.ranks[1].nodes[1].ctrl_deps == std::vector<uint64_t>{0});
}

TEST_CASE("chakra files: unsupported inputs are errors naming the file, the node and the rule") {
  const std::string dir = temp_dir("errors");
  SUBCASE("a missing rank file names the rank") {
    const std::string prefix = write_all(dir, 2, {comp(0, 1)});
    CHECK_THROWS_WITH_AS(
        chakra::read_trace(prefix, 3),
        doctest::Contains(("rank 2's trace " + prefix + ".2.et does not exist").c_str()),
        chakra::ChakraError);
  }
  SUBCASE("an unsupported node type") {
    pb::Node n = comp(4, 1);
    n.set_type(pb::MEM_LOAD_NODE);
    const std::string prefix = write_all(dir, 1, {n});
    CHECK_THROWS_WITH_AS(chakra::read_trace(prefix, 1),
                         doctest::Contains(".0.et: node 4 (comp4): node type MEM_LOAD_NODE is not "
                                           "supported (supported: COMP_NODE"),
                         chakra::ChakraError);
  }
  SUBCASE("an unsupported collective type") {
    const std::string prefix = write_all(dir, 1, {coll(2, pb::GATHER, 64)});
    CHECK_THROWS_WITH_AS(chakra::read_trace(prefix, 1),
                         doctest::Contains("node 2 (coll2): comm_type GATHER is not supported"),
                         chakra::ChakraError);
  }
  SUBCASE("an unknown attribute") {
    pb::Node n = comp(1, 1);
    *n.add_attr() = int_attr("mystery", 1);
    const std::string prefix = write_all(dir, 1, {n});
    CHECK_THROWS_WITH_AS(chakra::read_trace(prefix, 1),
                         doctest::Contains("attribute mystery is not supported (read: comm_type"),
                         chakra::ChakraError);
  }
  SUBCASE("a dependency on a node that is not in the file") {
    const std::string prefix = write_all(dir, 1, {comp(1, 1, {42})});
    CHECK_THROWS_WITH_AS(chakra::read_trace(prefix, 1),
                         doctest::Contains("node 1 depends on node 42, which is not in the file"),
                         chakra::ChakraError);
  }
  SUBCASE("a send to a rank outside the set") {
    const std::string prefix = write_all(dir, 2, {p2p(1, true, 5, 8)});
    CHECK_THROWS_WITH_AS(chakra::read_trace(prefix, 2),
                         doctest::Contains("comm_dst 5 is not a rank of the trace set's 2"),
                         chakra::ChakraError);
  }
  SUBCASE("a file that is not a trace") {
    std::ofstream(dir + "/bad.0.et") << "\xff\xff\xff\xff\xff garbage";
    CHECK_THROWS_AS(chakra::read_trace(dir + "/bad", 1), chakra::ChakraError);
  }
}

// plan_size_estimate against built plans: the estimate follows the builders (count the plan's
// transfers and steps, compare), exactly where the header says it is exact.
#include <doctest/doctest.h>

#include <cstdint>

#include "models/collective_plan.hpp"

using namespace syncsim::models;

namespace {

struct Case {
  CollectiveAlgo algo;
  uint32_t ranks;
  int64_t bytes;
  int64_t chunk;
  uint32_t channels;
  uint32_t gpus_per_host;
};

CollectivePlan build(const Case& c) {
  PlanOptions o;
  o.op = CollectiveOp::AllReduce;
  o.algo = c.algo;
  o.ranks = c.ranks;
  o.bytes = c.bytes;
  o.chunk_bytes = c.chunk;
  o.channels = c.channels;
  o.gpus_per_host = c.gpus_per_host;
  return build_plan(o);
}

PlanSizeEstimate estimate(const Case& c) {
  return plan_size_estimate(c.algo, c.ranks, static_cast<double>(c.bytes),
                            static_cast<double>(c.chunk), c.channels, c.gpus_per_host);
}

}  // namespace

TEST_CASE(
    "plan_size_estimate is exact for evenly split rings, trees, halving-doubling, hierarchical") {
  const Case cases[] = {
      // ring: bytes = channels x ranks x whole chunks (and one chunk per segment)
      {CollectiveAlgo::Ring, 8, 8 * 4 * 1000, 1000, 1, 8},
      {CollectiveAlgo::Ring, 16, 16 * 2 * 3 * 512, 512, 2, 8},
      {CollectiveAlgo::Ring, 5, 5 * 100, 1000, 1, 1},
      // tree: any size (pieces of the half buffer)
      {CollectiveAlgo::Tree, 8, 8000, 1000, 1, 8},
      {CollectiveAlgo::Tree, 13, 12345, 1000, 1, 1},
      {CollectiveAlgo::Tree, 64, int64_t{25} << 20, int64_t{2} << 20, 1, 8},
      // halving-doubling: powers of two and not
      {CollectiveAlgo::HalvingDoubling, 8, 8000, 0, 1, 1},
      {CollectiveAlgo::HalvingDoubling, 12, 12000, 0, 1, 1},
      {CollectiveAlgo::HalvingDoubling, 7, 7000, 0, 1, 1},
      // hierarchical: not pipelined, whatever the chunk
      {CollectiveAlgo::Hierarchical, 16, 16000, 100, 1, 8},
      {CollectiveAlgo::Hierarchical, 32, 64000, 100, 2, 4},
      {CollectiveAlgo::Hierarchical, 8, 8000, 100, 1, 8},
  };
  for (const Case& c : cases) {
    CAPTURE(to_string(c.algo));
    CAPTURE(c.ranks);
    CAPTURE(c.bytes);
    const CollectivePlan plan = build(c);
    const PlanSizeEstimate e = estimate(c);
    CHECK(e.transfers == static_cast<double>(plan.transfer_count()));
    CHECK(e.steps == static_cast<double>(plan.steps.size()));
  }
}

TEST_CASE(
    "plan_size_estimate: uneven sizes on one ring are exact, over channels at most a piece more") {
  // 1000 bytes over 3 ranks: segments of 334, 333 and 333 bytes; the builder cuts each into
  // ceil(334 / chunk) pieces and the estimate takes ceil(333.3 / chunk), the same for whole chunks.
  for (int64_t chunk : {100, 111, 167, 333, 334, 1000}) {
    CAPTURE(chunk);
    const Case c{CollectiveAlgo::Ring, 3, 1000, chunk, 1, 1};
    CHECK(estimate(c).transfers == static_cast<double>(build(c).transfer_count()));
  }
  // 601 bytes over 2 channels of 3 ranks: channel 0 carries 301 bytes (segments of 101: 2 pieces of
  // 100-byte chunks), channel 1 300 bytes (1 piece); the estimate gives both channels 2 pieces.
  for (int64_t chunk : {50, 100, 101, 200}) {
    CAPTURE(chunk);
    const Case c{CollectiveAlgo::Ring, 3, 601, chunk, 2, 1};
    const auto planned = static_cast<double>(build(c).transfer_count());
    const double per_piece = 2.0 * 2 * 3;  // 2 (n-1) steps x n positions
    CHECK(estimate(c).transfers >= planned);
    CHECK(estimate(c).transfers <= planned + c.channels * per_piece);
  }
}

TEST_CASE("plan_size_estimate counts NCCL's ring slices: one-piece segments cut in min_pieces") {
  // NCCL cuts a ring chunk into SlicePerChunk = 2 slices (prims_simple.h) while each keeps
  // min_piece_bytes; the builder follows (PlanOptions::min_pieces), and so must the estimate:
  // the 1.05 GB bucket of link-speed-400g-vs-800g.yaml (128 ranks, 16 channels, 1 MiB chunks) has
  // 513 KB segments, two slices each, and was counted at half its plan.
  struct SlicedCase {
    uint32_t ranks;
    int64_t bytes;
    int64_t chunk;
    uint32_t channels;
    uint32_t min_pieces;
    int64_t min_piece_bytes;
    double pieces;  // per segment, as the builder cuts it
  };
  const SlicedCase cases[] = {
      {8, 8 * 4 * 1000, 1000, 4, 2, 100, 2},     // whole-chunk segments of 1000 B: two slices
      {8, 8 * 4 * 1000, 4000, 4, 2, 100, 2},     // segments under one chunk: still two slices
      {8, 8 * 4 * 150, 4000, 4, 2, 100, 1},      // 150 B segments: a slice would be under 100 B
      {8, 8 * 4 * 200, 4000, 4, 2, 100, 2},      // 200 B: exactly two slices of 100 B
      {8, 8 * 4 * 5000, 1000, 4, 2, 100, 5},     // five pieces already: no cut
      {16, 16 * 2 * 3000, 1 << 20, 2, 2, 1, 2},  // min_piece_bytes 1
  };
  for (const SlicedCase& s : cases) {
    CAPTURE(s.ranks);
    CAPTURE(s.bytes);
    CAPTURE(s.chunk);
    PlanOptions o;
    o.op = CollectiveOp::AllReduce;
    o.algo = CollectiveAlgo::Ring;
    o.ranks = s.ranks;
    o.bytes = s.bytes;
    o.chunk_bytes = s.chunk;
    o.channels = s.channels;
    o.gpus_per_host = 8;
    o.min_pieces = s.min_pieces;
    o.min_piece_bytes = s.min_piece_bytes;
    const CollectivePlan plan = build_plan(o);
    const PlanSizeEstimate e = plan_size_estimate(
        CollectiveAlgo::Ring, s.ranks, static_cast<double>(s.bytes), static_cast<double>(s.chunk),
        s.channels, 8, RingSlicing{s.min_pieces, s.min_piece_bytes});
    CHECK(e.transfers == static_cast<double>(plan.transfer_count()));
    CHECK(e.steps == static_cast<double>(plan.steps.size()));
    CHECK(e.transfers == s.channels * 2.0 * (s.ranks - 1) * s.ranks * s.pieces);
    // Without the slicing the estimate is the builder's plan without it.
    o.min_pieces = 1;
    CHECK(plan_size_estimate(CollectiveAlgo::Ring, s.ranks, static_cast<double>(s.bytes),
                             static_cast<double>(s.chunk), s.channels, 8)
              .transfers == static_cast<double>(build_plan(o).transfer_count()));
  }
}

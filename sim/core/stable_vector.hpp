#pragma once
// A sequence that grows at the back and never moves what it holds, indexed by shift and mask.
// Per-flow transport and congestion-control state lives in them: a completion handler may start
// flows (appending state) while a reference into the sequence is live, so a std::vector would
// dangle. std::deque keeps references too, but its operator[] divides by a block size that depends
// on the element's size and branches on the first block; with one or two lookups per packet on each
// side of a transfer that was 2.9 % of ring-next-leaf-128's instructions (callgrind). Here a lookup
// is two loads, a shift and a mask.
#include <cassert>
#include <cstddef>
#include <utility>
#include <vector>

namespace syncsim {

template <typename T, std::size_t kBlockLog2 = 8>
class StableVector {
 public:
  static constexpr std::size_t kBlock = std::size_t{1} << kBlockLog2;

  T& operator[](std::size_t i) {
    assert(i < size_);
    return blocks_[i >> kBlockLog2][i & kMask];
  }
  const T& operator[](std::size_t i) const {
    assert(i < size_);
    return blocks_[i >> kBlockLog2][i & kMask];
  }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  template <typename... Args>
  T& emplace_back(Args&&... args) {
    const std::size_t block = size_ >> kBlockLog2;
    if (block == blocks_.size()) {
      // A block never grows past what it reserved, so its elements never move.
      blocks_.emplace_back().reserve(kBlock);
    }
    T& added = blocks_[block].emplace_back(std::forward<Args>(args)...);
    ++size_;
    return added;
  }
  void push_back(const T& value) { emplace_back(value); }
  void push_back(T&& value) { emplace_back(std::move(value)); }

 private:
  static constexpr std::size_t kMask = kBlock - 1;
  std::vector<std::vector<T>> blocks_;
  std::size_t size_ = 0;
};

}  // namespace syncsim

#pragma once
// A FIFO over a power-of-two ring that grows by doubling and never shrinks: after warm-up, pushes
// and pops allocate nothing (std::deque frees and allocates blocks as it drains and refills).
//
// 24 bytes (a pointer and three 32-bit counts): an egress port holds nine of these beside its
// per-packet state, and a packet's enqueue and start read one, so a smaller queue is fewer cache
// lines per hop on a fabric of thousands of ports.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include "sim/core/check.hpp"

namespace syncsim {

template <typename T>
class RingQueue {
 public:
  RingQueue() = default;
  RingQueue(const RingQueue& other) { *this = other; }
  RingQueue& operator=(const RingQueue& other) {
    if (this == &other) return *this;
    buf_.reset(other.capacity_ != 0 ? new T[other.capacity_] : nullptr);
    capacity_ = other.capacity_;
    head_ = 0;
    size_ = other.size_;
    for (uint32_t i = 0; i < size_; ++i) buf_[i] = other.at(i);
    return *this;
  }
  RingQueue(RingQueue&& other) noexcept { *this = std::move(other); }
  RingQueue& operator=(RingQueue&& other) noexcept {
    buf_ = std::move(other.buf_);
    capacity_ = std::exchange(other.capacity_, 0);
    head_ = std::exchange(other.head_, 0);
    size_ = std::exchange(other.size_, 0);
    return *this;
  }
  ~RingQueue() = default;

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  T& front() { return buf_[head_]; }
  const T& front() const { return buf_[head_]; }
  // The i-th element from the front (i < size()).
  const T& at(std::size_t i) const { return buf_[(head_ + i) & (capacity_ - 1)]; }
  void push(const T& v) {
    if (size_ == capacity_) grow();
    buf_[(head_ + size_) & (capacity_ - 1)] = v;
    ++size_;
  }
  T pop() {
    T v = buf_[head_];
    head_ = (head_ + 1) & (capacity_ - 1);
    --size_;
    return v;
  }

 private:
  void grow() {
    SIM_CHECK(capacity_ <= UINT32_MAX / 2, "a ring queue outgrew 2^31 entries");
    const uint32_t capacity = capacity_ == 0 ? 8 : capacity_ * 2;
    std::unique_ptr<T[]> next(new T[capacity]);
    for (uint32_t i = 0; i < size_; ++i) next[i] = buf_[(head_ + i) & (capacity_ - 1)];
    buf_ = std::move(next);
    capacity_ = capacity;
    head_ = 0;
  }
  std::unique_ptr<T[]> buf_;
  uint32_t capacity_ = 0;  // a power of two, or 0 before the first push
  uint32_t head_ = 0;
  uint32_t size_ = 0;
};

}  // namespace syncsim

#pragma once
// An array of trivially copyable elements whose storage grows without copying them. On Linux it is
// an anonymous mapping that mremap extends: the kernel moves page-table entries, not bytes, so an
// element written once is never copied and its page is faulted in once. A std::vector growing by
// doubling copies every element about once more and faults in about twice the final storage, each
// new buffer's pages afresh. For the packet pools of ring-next-leaf-128 (about 180 k packets at the
// peak over its 8 partitions) that was 1,330 of the run's 4,150 page faults and, with the copies,
// about 6 % of its `perf` samples on the development VM, where a page fault is dear. Elsewhere the
// storage grows with realloc.
#include <cassert>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "sim/core/huge_pages.hpp"

// Whether ThreadSanitizer instruments this build (GCC's macro, Clang's feature test).
#if defined(__SANITIZE_THREAD__)
#define SYNCSIM_THREAD_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SYNCSIM_THREAD_SANITIZER 1
#endif
#endif
#ifndef SYNCSIM_THREAD_SANITIZER
#define SYNCSIM_THREAD_SANITIZER 0
#endif

namespace syncsim {

template <typename T>
class GrowableArray {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "the storage is moved as bytes and never destroyed element by element");

 public:
  GrowableArray() = default;
  GrowableArray(const GrowableArray&) = delete;
  GrowableArray& operator=(const GrowableArray&) = delete;
  GrowableArray(GrowableArray&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        capacity_(std::exchange(other.capacity_, 0)),
        bytes_(std::exchange(other.bytes_, 0)) {}
  GrowableArray& operator=(GrowableArray&& other) noexcept {
    if (this != &other) {
      release_storage();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      capacity_ = std::exchange(other.capacity_, 0);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  ~GrowableArray() { release_storage(); }

  T& operator[](std::size_t i) {
    assert(i < size_);
    return data_[i];
  }
  const T& operator[](std::size_t i) const {
    assert(i < size_);
    return data_[i];
  }
  std::size_t size() const { return size_; }
  std::size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  T& back() {
    assert(size_ > 0);
    return data_[size_ - 1];
  }
  void push_back(const T& value) {
    if (size_ == capacity_) [[unlikely]]
      grow(size_ + 1);
    data_[size_++] = value;
  }
  void pop_back() {
    assert(size_ > 0);
    --size_;
  }
  // Room for `n` elements without growing again.
  void reserve(std::size_t n) {
    if (n > capacity_) grow(n);
  }

 private:
  // The first storage: one 64 KiB step (2,048 packets), small next to the fabric's other state.
  static constexpr std::size_t kFirstBytes = std::size_t{64} << 10;

  void grow(std::size_t at_least) {
    std::size_t bytes = bytes_ == 0 ? kFirstBytes : 2 * bytes_;
    while (bytes / sizeof(T) < at_least) bytes *= 2;
    void* fresh = resize_storage(bytes);
    if (fresh == nullptr) throw std::bad_alloc();
    data_ = static_cast<T*>(fresh);
    bytes_ = bytes;
    capacity_ = bytes / sizeof(T);
    if (bytes >= (std::size_t{4} << 20)) advise_huge_storage();
  }

#if defined(__linux__)
  void* resize_storage(std::size_t bytes) {
    if (data_ == nullptr) {
      void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      return p == MAP_FAILED ? nullptr : p;
    }
    void* p = MAP_FAILED;
#if !SYNCSIM_THREAD_SANITIZER
    // ThreadSanitizer does not intercept mremap: the moved range keeps the shadow of its old
    // address, and a later mapping there is reported as racing with it (false positives on
    // partitioned runs, whose pools grow on several threads; google/sanitizers issue 1099).
    // Under it, a fresh mapping and a copy, as below.
    p = mremap(data_, bytes_, bytes, MREMAP_MAYMOVE);
    if (p != MAP_FAILED) return p;
#endif
    // mremap moves one mapping only (EFAULT when the range has been split): a fresh one and a
    // copy then, as a vector would.
    p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    std::memcpy(p, data_, size_ * sizeof(T));
    munmap(data_, bytes_);
    return p;
  }
  // Huge pages for the whole mapping: advising only its 2 MiB-aligned middle (advise_huge_pages,
  // for memory that shares its mapping) would split it in three, and mremap cannot move a split
  // range (it failed with EFAULT on the next growth wherever the mapping did not start on a 2 MiB
  // boundary, which depends on the address space's layout).
  void advise_huge_storage() {
#if defined(MADV_HUGEPAGE)
    madvise(data_, bytes_, MADV_HUGEPAGE);
#endif
  }
  void release_storage() {
    if (data_ != nullptr) munmap(data_, bytes_);
  }
#else
  void* resize_storage(std::size_t bytes) {
    // realloc aligns for the fundamental types only (a mapping is page-aligned).
    static_assert(alignof(T) <= alignof(std::max_align_t),
                  "over-aligned elements need the mapping-backed storage");
    return std::realloc(data_, bytes);
  }
  void release_storage() { std::free(data_); }
  void advise_huge_storage() { advise_huge_pages(data_, bytes_); }
#endif

  T* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
  std::size_t bytes_ = 0;  // the storage's size
};

}  // namespace syncsim

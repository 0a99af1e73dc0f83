#pragma once
// Transparent huge pages for big arrays. A 1024-rank collective plan, its runner state and the
// transfer records hold hundreds of MB that are written once; with 4 KiB pages the first-touch page
// faults took about half of the run's time. Most distributions ship THP in "madvise" mode, where a
// region gets 2 MiB pages only when asked. A hint: no effect where unsupported.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace syncsim {

inline void advise_huge_pages([[maybe_unused]] const void* data,
                              [[maybe_unused]] std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  const auto start = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t first = (start + kHuge - 1) & ~(kHuge - 1);
  const std::uintptr_t last = (start + bytes) & ~(kHuge - 1);
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#endif
}

// reserve(), then the hint on the new storage when it is big enough to hold a huge page. Call it
// before the elements are written (assign/push_back after it reuse the storage).
template <typename T>
void reserve_huge(std::vector<T>& v, std::size_t capacity) {
  v.reserve(capacity);
  if (v.capacity() * sizeof(T) >= (std::size_t{4} << 20))
    advise_huge_pages(v.data(), v.capacity() * sizeof(T));
}

// reserve_huge() for a vector that keeps growing by hints: at least twice its capacity when the
// hint exceeds it, so n hints cost O(total) copying like push_back, not O(n x total).
template <typename T>
void reserve_geometric(std::vector<T>& v, std::size_t capacity) {
  if (capacity > v.capacity()) reserve_huge(v, std::max(capacity, 2 * v.capacity()));
}

}  // namespace syncsim

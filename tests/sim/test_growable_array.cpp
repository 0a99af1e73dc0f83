// GrowableArray (sim/core/growable_array.hpp): what it holds survives growth, and it moves.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "sim/core/growable_array.hpp"

using namespace syncsim;

namespace {
struct Record {
  uint64_t id;
  uint32_t a;
  uint32_t b;
};
uint64_t pattern(uint64_t i) { return i * 0x9E37'79B9'7F4A'7C15ULL; }
}  // namespace

TEST_CASE("growable array: elements written before a growth read back after it") {
  GrowableArray<Record> array;
  CHECK(array.empty());
  CHECK(array.capacity() == 0);
  // Far past the first storage (64 KiB: 4,096 records) and past the 4 MiB where huge pages are
  // asked for, so the storage is remapped several times.
  constexpr uint64_t kCount = 600'000;
  std::size_t growths = 0;
  std::size_t last_capacity = 0;
  for (uint64_t i = 0; i < kCount; ++i) {
    array.push_back(Record{pattern(i), static_cast<uint32_t>(i), ~static_cast<uint32_t>(i)});
    if (array.capacity() != last_capacity) {
      ++growths;
      last_capacity = array.capacity();
    }
  }
  CHECK(array.size() == kCount);
  CHECK(array.capacity() >= kCount);
  CHECK(growths >= 7);
  uint64_t wrong = 0;
  for (uint64_t i = 0; i < kCount; ++i) {
    const Record& r = array[i];
    if (r.id != pattern(i) || r.a != static_cast<uint32_t>(i) || r.b != ~static_cast<uint32_t>(i)) {
      ++wrong;
    }
  }
  CHECK(wrong == 0);
  CHECK(array.back().id == pattern(kCount - 1));
  array.pop_back();
  CHECK(array.size() == kCount - 1);
  CHECK(array.back().id == pattern(kCount - 2));
}

TEST_CASE("growable array: reserve gives room without changing the contents; moves hand over") {
  GrowableArray<uint32_t> array;
  for (uint32_t i = 0; i < 100; ++i) array.push_back(i * 3);
  array.reserve(1'000'000);
  CHECK(array.capacity() >= 1'000'000);
  CHECK(array.size() == 100);
  CHECK(array[99] == 297);
  const std::size_t capacity = array.capacity();
  for (uint32_t i = 100; i < 1'000'000; ++i) array.push_back(i * 3);
  CHECK(array.capacity() == capacity);  // no growth within what was reserved
  CHECK(array[999'999] == 2'999'997);

  GrowableArray<uint32_t> moved(std::move(array));
  CHECK(moved.size() == 1'000'000);
  CHECK(moved[12'345] == 37'035);
  CHECK(array.size() == 0);  // NOLINT(bugprone-use-after-move): the moved-from state is specified
  CHECK(array.capacity() == 0);
  // The moved-from array is usable again.
  array.push_back(7);
  CHECK(array[0] == 7);

  GrowableArray<uint32_t> assigned;
  assigned.push_back(1);
  assigned = std::move(moved);
  CHECK(assigned.size() == 1'000'000);
  CHECK(assigned[500'000] == 1'500'000);
}

#if defined(__linux__)
namespace {
// Whether one mapping of /proc/self/maps holds all of [begin, begin + bytes).
bool one_mapping_holds(const void* begin, std::size_t bytes) {
  const auto first = reinterpret_cast<std::uintptr_t>(begin);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream fields(line);
    std::uintptr_t low = 0;
    std::uintptr_t high = 0;
    char dash = 0;
    fields >> std::hex >> low >> dash >> high;
    if (low <= first && first < high) return first + bytes <= high;
  }
  return false;
}
}  // namespace

TEST_CASE("growable array: huge-page advice keeps the storage one mapping, so it grows again") {
  // mremap moves a single mapping only: advice on part of it would split it and the next growth
  // would fail (it did, with EFAULT, wherever the storage did not start on a 2 MiB boundary).
  GrowableArray<Record> array;
  std::size_t checked = 0;
  std::size_t last_capacity = 0;
  for (uint64_t i = 0; i < 2'500'000; ++i) {  // 40 MB of records: growths at 4, 8, 16 and 32 MiB
    array.push_back(Record{pattern(i), 0, 0});
    const std::size_t bytes = array.capacity() * sizeof(Record);
    if (array.capacity() != last_capacity && bytes >= (std::size_t{4} << 20)) {
      CHECK(one_mapping_holds(&array[0], bytes));
      ++checked;
    }
    last_capacity = array.capacity();
  }
  CHECK(checked >= 4);
  CHECK(array[2'499'999].id == pattern(2'499'999));
}
#endif

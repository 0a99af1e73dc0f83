// StableVector (sim/core/stable_vector.hpp): references survive growth, indices read what was
// added.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/stable_vector.hpp"

using namespace syncsim;

TEST_CASE("stable vector: references taken early stay valid while it grows past many blocks") {
  StableVector<std::string, 4> strings;  // blocks of 16, so growth crosses many of them
  CHECK(strings.empty());
  std::vector<const std::string*> taken;
  for (int i = 0; i < 1000; ++i) {
    // Longer than the short-string buffer: a moved element would leave its old address holding
    // an empty string, or freed memory under ASan.
    std::string& s = strings.emplace_back(std::string(40, 'a') + std::to_string(i));
    taken.push_back(&s);
  }
  CHECK(strings.size() == 1000);
  int moved = 0;
  for (int i = 0; i < 1000; ++i) {
    const auto index = static_cast<std::size_t>(i);
    if (&strings[index] != taken[index]) ++moved;
    CHECK(*taken[index] == std::string(40, 'a') + std::to_string(i));
  }
  CHECK(moved == 0);
  strings.push_back("last");
  CHECK(strings[1000] == "last");
  const StableVector<std::string, 4>& view = strings;
  CHECK(view[17] == std::string(40, 'a') + "17");
}

TEST_CASE("stable vector: elements are written in place and read back by index") {
  StableVector<uint64_t> values;  // the default block of 256
  for (uint64_t i = 0; i < 5000; ++i) values.push_back(i * i);
  uint64_t wrong = 0;
  for (uint64_t i = 0; i < 5000; ++i) wrong += values[i] != i * i ? 1u : 0u;
  CHECK(wrong == 0);
  values[4999] = 7;
  CHECK(values[4999] == 7);
  CHECK(values[4998] == 4998 * 4998);
}

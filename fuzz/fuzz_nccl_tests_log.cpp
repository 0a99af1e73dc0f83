// Fuzz target: the nccl-tests log parser (calibration/nccl_tests_log.hpp). Every malformed log must
// be a ParseError naming the line; any other exception, a crash or a sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "calibration/nccl_tests_log.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)syncsim::calibration::parse_nccl_tests_log(text, "fuzz.log");
  } catch (const syncsim::calibration::ParseError&) {
    // A clean "file:line: expected, found" error.
  }
  return 0;
}

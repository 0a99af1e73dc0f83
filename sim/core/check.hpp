#pragma once
// SIM_CHECK: a cheap, high-value invariant that stays on in release builds. A failure is a
// simulator bug, not bad input, so it throws InternalError (the CLI maps it to exit code 1).
#include <stdexcept>
#include <string>

namespace syncsim {

class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void fail_check(const char* expr, const char* file, int line, const std::string& what);

}  // namespace syncsim

#define SIM_CHECK(cond, what)                                   \
  do {                                                          \
    if (!(cond)) [[unlikely]] {                                 \
      ::syncsim::fail_check(#cond, __FILE__, __LINE__, (what)); \
    }                                                           \
  } while (false)

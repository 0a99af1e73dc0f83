#include "sim/core/check.hpp"

namespace syncsim {

void fail_check(const char* expr, const char* file, int line, const std::string& what) {
  throw InternalError(std::string("internal invariant violated: ") + what + " (" + expr + ") at " +
                      file + ":" + std::to_string(line));
}

}  // namespace syncsim

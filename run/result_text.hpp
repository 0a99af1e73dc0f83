#pragma once
// The text summary's building block: a line template whose `{path}` placeholders name result
// schema keys (run/result_schema.hpp), each formatted by its unit (s -> "1.5 ms", B -> "2 MiB").
// `{path:pct}` prints a fraction as a percentage, `{path:int}` a number without decimals,
// `{path:len}` an array's length. to_text (run/runner.hpp) is written with it.
#include <string>
#include <string_view>

namespace syncsim::app {

struct RunResult;

// Throws std::logic_error for a placeholder that names no key, or a key absent from `r`.
std::string fill_result_template(const RunResult& r, std::string_view text);

}  // namespace syncsim::app

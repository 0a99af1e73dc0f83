#pragma once
// A range rule broken by one field of a parameter struct, returned by the struct's check() so the
// rule lives next to the field it guards. `field` is the dotted name inside the struct (e.g.
// "kmax"); readers of user input (scenario/) map it back to where the value was written.
//
// `message` says what was expected. `value` is the offending value as the struct sees it; a reader
// that knows how the user wrote it (e.g. the YAML scalar "0.0") may cite that instead. When `value`
// is empty, `message` is complete (it already states the values involved).
#include <string>
#include <vector>

#include "sim/core/units.hpp"

namespace syncsim {

struct FieldError {
  std::string field;
  std::string message;
  std::string value = {};

  // "message, got value", or the message alone.
  std::string text() const { return value.empty() ? message : message + ", got " + value; }
};

using FieldErrors = std::vector<FieldError>;

// How check() writes the values it cites: shortest round-trip decimals ("0", "0.2", "1.5") and
// the units' base counts ("-1000 ps", "0 B", "5 bit/s"), exact whatever their size.
std::string number_text(double v);
std::string time_text(Time t);
std::string bytes_text(Bytes b);
std::string rate_text(Bandwidth b);

}  // namespace syncsim

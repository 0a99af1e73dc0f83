// Range rules of the transport parameter structs (transport.hpp).
#include "sim/net/transport.hpp"

#include <string>
#include <utility>

namespace syncsim::net {

namespace {

void positive_time(FieldErrors& errors, const char* field, Time t) {
  if (t <= Time::zero()) errors.push_back({field, "expected a positive time", time_text(t)});
}

void non_negative_time(FieldErrors& errors, const char* field, Time t) {
  if (t < Time::zero()) errors.push_back({field, "expected a non-negative time", time_text(t)});
}

void positive_rate(FieldErrors& errors, const char* field, Bandwidth b) {
  if (b.bits_per_second() <= 0) {
    errors.push_back({field, "expected a positive rate, got " +
                                 (b.bits_per_second() == 0 ? std::string("0") : rate_text(b))});
  }
}

void append(FieldErrors& errors, const char* prefix, FieldErrors more) {
  for (FieldError& e : more) {
    e.field = prefix + e.field;
    errors.push_back(std::move(e));
  }
}

}  // namespace

FieldErrors GoBackNParams::check() const {
  FieldErrors errors;
  positive_time(errors, "timeout", timeout);
  positive_time(errors, "lossless_timeout", lossless_timeout);
  return errors;
}

FieldErrors TcpParams::check() const {
  FieldErrors errors;
  positive_time(errors, "rto_min", rto_min);
  positive_time(errors, "rto_max", rto_max);
  if (errors.empty() && rto_max < rto_min) {
    errors.push_back({"rto_max", "expected rto_max >= rto_min"});
  }
  if (!(dctcp_g > 0.0 && dctcp_g <= 1.0)) {
    errors.push_back({"dctcp_g", "expected a number in (0, 1]", number_text(dctcp_g)});
  }
  non_negative_time(errors, "stack_latency", stack_latency);
  if (!(cpu_ps_per_byte >= 0.0)) {
    errors.push_back({"cpu_ps_per_byte", "expected a non-negative time per byte",
                      number_text(cpu_ps_per_byte) + " ps"});
  }
  return errors;
}

FieldErrors HostStagingParams::check() const {
  FieldErrors errors;
  positive_rate(errors, "pcie", pcie);
  positive_rate(errors, "host_memory", host_memory);
  non_negative_time(errors, "copy_latency", copy_latency);
  return errors;
}

FieldErrors TransportParams::check() const {
  FieldErrors errors;
  append(errors, "gbn.", gbn.check());
  append(errors, "tcp.", tcp.check());
  append(errors, "staging.", staging.check());
  return errors;
}

}  // namespace syncsim::net

#include "sim/backends/make_backend.hpp"

#include "sim/backends/analytic_backend.hpp"
#include "sim/backends/flow_backend.hpp"
#include "sim/backends/packet_backend.hpp"
#include "sim/core/check.hpp"

namespace syncsim {

std::unique_ptr<TransferBackend> make_backend(Fidelity fidelity, Simulation& sim,
                                              const net::NetworkSpec& spec) {
  switch (fidelity) {
    case Fidelity::Packet:
      return std::make_unique<PacketBackend>(sim, spec);
    case Fidelity::Analytic:
      return std::make_unique<AnalyticBackend>(sim, spec);
    case Fidelity::Flow:
      return std::make_unique<FlowBackend>(sim, spec);
  }
  SIM_CHECK(false, "unknown fidelity");
  return nullptr;
}

const char* fidelity_name(Fidelity fidelity) {
  switch (fidelity) {
    case Fidelity::Packet:
      return "packet";
    case Fidelity::Analytic:
      return "analytic";
    case Fidelity::Flow:
      return "flow";
  }
  return "unknown";
}

}  // namespace syncsim

#include "scenario/configuration_warnings.hpp"

#include <sstream>

namespace syncsim::app {

std::string configuration_warning(const net::ConfigurationFinding& f) {
  std::ostringstream o;
  switch (f.kind) {
    case net::ConfigurationFindingKind::NoSharedBuffer:
      o << "fabric.switch.pfc: the lossless headroom reserved on every port takes the whole switch "
           "buffer; nothing is left to share";
      break;
    case net::ConfigurationFindingKind::HeadroomTooSmall:
      o << "fabric.switch.pfc.headroom: " << f.headroom_bytes << " B is below the "
        << f.required_bytes << " B that MTU (both ends) and cable delay require on " << f.link_class
        << " links; lossless packets will be dropped (lossless_headroom_exceeded)";
      break;
    case net::ConfigurationFindingKind::EcnAboveXoff:
      o << "fabric.switch.ecn: on " << f.link_class << " links Kmin " << f.kmin_bytes
        << " B / Kmax " << f.kmax_bytes << " B sit above the PFC XOFF threshold ("
        << (f.xoff_dynamic ? "at most " : "") << f.xoff_bytes
        << " B); PFC will pause before ECN can slow the senders";
      break;
  }
  return o.str();
}

std::vector<std::string> configuration_warnings(
    const std::vector<net::ConfigurationFinding>& findings) {
  std::vector<std::string> out;
  out.reserve(findings.size());
  for (const net::ConfigurationFinding& f : findings) out.push_back(configuration_warning(f));
  return out;
}

}  // namespace syncsim::app

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
        << f.required_bytes
        << " B that MTU (both ends), cable delay and the sender's response_time require on "
        << f.link_class << " links; lossless packets will be dropped (lossless_headroom_exceeded)";
      break;
    case net::ConfigurationFindingKind::EcnAboveXoff:
      o << "fabric.switch.ecn: on " << f.link_class << " links Kmin " << f.kmin_bytes
        << " B / Kmax " << f.kmax_bytes << " B sit above the PFC XOFF threshold ("
        << (f.xoff_dynamic ? "at most " : "") << f.xoff_bytes
        << " B); PFC will pause before ECN can slow the senders";
      break;
    case net::ConfigurationFindingKind::IbCreditsBelowMtu:
      o << "fabric.infiniband.vl_buffer: on " << f.link_class << " links a VL's buffer ("
        << f.credit_bytes << " B of credits) holds less than one " << f.required_bytes
        << " B packet; raised to one packet so that traffic moves";
      break;
    case net::ConfigurationFindingKind::IbCreditsBelowBdp:
      o << "fabric.infiniband.vl_buffer: on " << f.link_class << " links a VL's credits ("
        << f.credit_bytes << " B) cover less than the credit round trip (" << f.required_bytes
        << " B: one MTU packet and the cable both ways); one VL carries at most " << f.rate_cap_gbps
        << " Gb/s there";
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

std::vector<SettingWarning> fidelity_warnings(
    Fidelity fidelity, const NetworkBehaviour& network,
    const std::function<bool(const std::string&)>& stated) {
  std::vector<SettingWarning> out;
  // Transport blocks of another transport kind do nothing at any fidelity.
  const net::TransportKind kind = network.transport.kind;
  if (kind != net::TransportKind::Tcp && stated("fabric.transport.tcp")) {
    out.push_back({"fabric.transport.tcp",
                   "TCP's settings apply to fabric.transport.kind: tcp only; with this kind they "
                   "do nothing"});
  }
  if (kind == net::TransportKind::Roce && stated("fabric.transport.host_staging")) {
    out.push_back({"fabric.transport.host_staging",
                   "host staging applies to kind roce_host_staged and tcp only; GPUDirect RoCE "
                   "(kind: roce) does not stage through host memory, so it does nothing"});
  }
  // The link layer decides which flow control and congestion control exist at all.
  const bool ib = network.link_layer == net::LinkLayer::Infiniband;
  const auto other_layer = [&](const std::string& path, bool active, const std::string& what) {
    if (active && stated(path)) out.push_back({path, what});
  };
  other_layer("fabric.switch.pfc", ib && network.pfc.enabled,
              "PFC is Ethernet's; with fabric.link_layer: infiniband every VL is lossless by "
              "credit-based flow control and PFC does nothing");
  other_layer("fabric.switch.ecn", ib && network.ecn.enabled,
              "ECN marking is RoCE's; with fabric.link_layer: infiniband it does nothing (IB "
              "congestion control marks FECN: fabric.infiniband.congestion_control)");
  other_layer("fabric.nic.dcqcn", ib && network.nic.dcqcn.enabled,
              "DCQCN is RoCE's; with fabric.link_layer: infiniband it does nothing (IB "
              "congestion control: fabric.infiniband.congestion_control)");
  other_layer("fabric.infiniband", !ib,
              "fabric.infiniband applies to fabric.link_layer: infiniband only; with roce it does "
              "nothing");
  if (fidelity == Fidelity::Packet) return out;
  const std::string at =
      std::string(" at ") + (fidelity == Fidelity::Flow ? "flow" : "analytic") + " fidelity";
  const auto ignored = [&](const std::string& path, bool active, const std::string& what) {
    if (active && stated(path)) {
      out.push_back({path, what + " is modelled at packet fidelity only; it does nothing" + at +
                               " (set `fidelity: packet` to see its effect)"});
    }
  };
  // On InfiniBand these were reported above already, whatever the fidelity.
  ignored("fabric.switch.pfc", !ib && network.pfc.enabled, "PFC");
  ignored("fabric.switch.ecn", !ib && network.ecn.enabled, "ECN marking");
  ignored("fabric.nic.dcqcn", !ib && network.nic.dcqcn.enabled, "DCQCN rate control");
  ignored("fabric.nic.rx_pfc", network.nic.rx_pfc, "the NIC's receive buffer and its PFC");
  ignored("fabric.nic_overrides", !network.nic_overrides.empty(),
          "a per-NIC setting (fabric.nic_overrides)");
  ignored("fabric.transport.go_back_n", network.transport.gbn.enabled, "go-back-N loss recovery");
  const bool tcp = network.transport.kind == net::TransportKind::Tcp;
  for (const char* key :
       {"congestion_control", "rto_min", "rto_max", "initial_window", "dctcp_g"}) {
    ignored(std::string("fabric.transport.tcp.") + key, tcp, std::string("TCP's ") + key);
  }
  const net::ImpairmentParams& imp = network.impairments;
  ignored("fabric.impairments.jitter", imp.jitter != net::JitterDistribution::None, "link jitter");
  ignored("fabric.impairments.loss", imp.loss_probability > 0, "random packet loss");
  // Both fidelities share a lossless max-min (flow) or idle-path (analytic) model: credits and IB
  // congestion control change no rate there.
  ignored("fabric.infiniband.vl_buffer", ib, "InfiniBand credit-based flow control");
  ignored("fabric.infiniband.sl_to_vl", ib, "InfiniBand's SL-to-VL mapping");
  ignored("fabric.infiniband.congestion_control",
          ib && network.infiniband.congestion_control.enabled, "InfiniBand congestion control");
  ignored("observe", true, "time-series sampling (observe:)");
  return out;
}

std::vector<SettingWarning> load_balancing_warnings(
    Fidelity fidelity, const topo::FabricParams& fabric,
    const std::function<bool(const std::string&)>& stated) {
  std::vector<SettingWarning> out;
  const net::LoadBalancing mode = fabric.load_balancing.mode;
  if (mode == net::LoadBalancing::Ecmp || fidelity == Fidelity::Packet ||
      !stated("fabric.load_balancing")) {
    return out;
  }
  const std::string name = net::load_balancing_name(mode);
  if (fidelity == Fidelity::Analytic) {
    out.push_back({"fabric.load_balancing",
                   name + " does nothing at analytic fidelity: it times each transfer alone on an "
                          "idle path, where every shortest path takes the same time (set "
                          "`fidelity: flow` or `packet` to see its effect)"});
  } else if (mode == net::LoadBalancing::Flowlet) {
    out.push_back({"fabric.load_balancing",
                   "flowlet switching does nothing at flow fidelity: a fluid flow never pauses, "
                   "so it keeps its ECMP path (set `fidelity: packet` to see its effect)"});
  }
  return out;
}

}  // namespace syncsim::app

// `syncsim ports [SCENARIO]`: the egress port names of the scenario's fabric, the names that
// `observe.ports` accepts and the rows of `syncsim run --counters`.
#include <ostream>

#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "run/runner.hpp"
#include "sim/net/port_names.hpp"

namespace syncsim::app {

int ports_command(const std::vector<std::string>& args, std::ostream& out) {
  po::options_description opts("syncsim ports [SCENARIO] [options]");
  opts.add_options()("help,h", "show this help")(
      "scenario", po::value<std::string>(), "scenario YAML file (default: the built-in scenario)")(
      "long,l", "also print each port's id, owner kind and link bandwidth (tab-separated)");
  add_override_options(opts, /*with_seed=*/false);
  po::positional_options_description pos;
  pos.add("scenario", 1);
  const CommandLine cl = parse_command_line(args, opts, pos);
  if (cl.has("help")) {
    out << opts << "\n"
        << "Prints one egress port per line, as \"owner->peer\" (the names observe.ports "
           "accepts),\n"
        << "in port-id order (the order of `syncsim run --counters` rows). Parallel cables "
           "between\n"
        << "the same two nodes share a name; --long shows their ids.\n";
    return 0;
  }
  const LoadOptions load = load_options(cl);
  const Scenario scenario = cl.has("scenario")
                                ? load_scenario_file(cl.get<std::string>("scenario"), load)
                                : load_default_scenario(load);
  const net::NetworkSpec spec = scenario_network(scenario);
  const bool long_format = cl.has("long");
  if (long_format) out << "id\tport\towner\tbandwidth_gbps\n";
  for (uint32_t p = 0; p < spec.links.size() * 2; ++p) {
    const std::string name = net::egress_port_name(spec, p);
    if (!long_format) {
      out << name << "\n";
      continue;
    }
    const net::LinkSpec& link = spec.links[p / 2];
    const net::NodeSpec& owner = spec.nodes[p % 2 == 0 ? link.a : link.b];
    const char* kind = owner.kind == net::NodeKind::Nic          ? "nic"
                       : owner.role == net::SwitchRole::NvSwitch ? "nvswitch"
                                                                 : "switch";
    out << p << "\t" << name << "\t" << kind << "\t"
        << static_cast<double>(spec.link_classes[link.link_class].bandwidth.bits_per_second()) / 1e9
        << "\n";
  }
  return 0;
}

}  // namespace syncsim::app

// `fabric.nic:` (DCQCN, receiver-side PFC), `fabric.transport:` (RoCE, go-back-N, TCP, host
// staging) and `fabric.impairments:` (per-link jitter and loss).
#include <string_view>
#include <utility>
#include <vector>

#include "scenario/section_readers.hpp"

namespace syncsim::app::yaml_reader {

namespace {

const std::vector<std::pair<std::string_view, net::DcqcnPreset>> kDcqcnPresets{
    {"paper", net::DcqcnPreset::Paper},
    {"connectx", net::DcqcnPreset::ConnectX},
};

// fabric.nic.dcqcn: the preset (default connectx) first, then any explicit parameter over it.
// With `over_current` (fabric.nic_overrides) the block starts from `d` as it stands, not from the
// preset, unless it names a preset.
void read_dcqcn(const Reader& in, const YAML::Node& node, const std::string& path,
                net::DcqcnParams& d, bool over_current) {
  const MapView m(
      in, node, path,
      {"enabled", "preset", "g", "alpha_period", "rate_period", "byte_counter",
       "fast_recovery_steps", "rai", "rhai", "min_rate", "decrease_period", "cnp_interval",
       "initial_alpha", "clamp_target_rate", "clamp_target_after_timer_increase", "alpha_divisor",
       "min_decrease_factor", "first_cnp_rate", "increase_reference_rate"});
  net::DcqcnPreset preset = net::DcqcnPreset::ConnectX;
  if (const YAML::Node* v = m.find("preset")) {
    preset = in.read_enum(*v, m.path_of("preset"), kDcqcnPresets);
  }
  bool enabled = over_current && d.enabled;
  if (const YAML::Node* v = m.find("enabled")) enabled = in.read_bool(*v, m.path_of("enabled"));
  if (!over_current || m.find("preset") != nullptr) d = net::DcqcnParams::preset(preset);
  d.enabled = enabled;
  // Ranges are DcqcnParams::check()'s, called by read_nic.
  const auto number = [&](const char* key, double& out) {
    if (const YAML::Node* v = m.find(key)) out = in.read_number(*v, m.path_of(key));
  };
  number("g", d.g);
  number("initial_alpha", d.initial_alpha);
  const auto time = [&](const char* key, Time& out) {
    if (const YAML::Node* v = m.find(key)) out = in.read_time(*v, m.path_of(key));
  };
  time("alpha_period", d.alpha_period);
  time("rate_period", d.rate_period);
  time("decrease_period", d.decrease_period);
  time("cnp_interval", d.cnp_interval);
  if (const YAML::Node* v = m.find("byte_counter")) {
    d.byte_counter = in.read_bytes(*v, m.path_of("byte_counter")).count();  // 0 B: disabled
  }
  if (const YAML::Node* v = m.find("fast_recovery_steps")) {
    d.fast_recovery_steps = in.read_u32(*v, m.path_of("fast_recovery_steps"));
  }
  const auto rate = [&](const char* key, Bandwidth& out) {
    if (const YAML::Node* v = m.find(key)) out = in.read_bandwidth(*v, m.path_of(key));
  };
  rate("rai", d.rai);
  rate("rhai", d.rhai);
  rate("min_rate", d.min_rate);
  if (const YAML::Node* v = m.find("clamp_target_rate")) {
    d.clamp_target_rate = in.read_bool(*v, m.path_of("clamp_target_rate"));
  }
  if (const YAML::Node* v = m.find("clamp_target_after_timer_increase")) {
    d.clamp_target_after_timer_increase =
        in.read_bool(*v, m.path_of("clamp_target_after_timer_increase"));
  }
  number("alpha_divisor", d.alpha_divisor);
  number("min_decrease_factor", d.min_decrease_factor);
  // 0 allowed: not used (ConnectX's rate_to_set_on_first_cnp = 0; increase rates as given).
  if (const YAML::Node* v = m.find("first_cnp_rate")) {
    d.first_cnp_rate = in.read_bandwidth(*v, m.path_of("first_cnp_rate"));
  }
  if (const YAML::Node* v = m.find("increase_reference_rate")) {
    d.increase_reference_rate = in.read_bandwidth(*v, m.path_of("increase_reference_rate"));
  }
}

const std::vector<std::pair<std::string_view, net::TransportKind>> kTransports{
    {"roce", net::TransportKind::Roce},
    {"roce_host_staged", net::TransportKind::RoceHostStaged},
    {"tcp", net::TransportKind::Tcp},
};

const std::vector<std::pair<std::string_view, net::TcpCongestionControl>> kTcpCcs{
    {"dctcp", net::TcpCongestionControl::Dctcp},
    {"reno", net::TcpCongestionControl::Reno},
};

const std::vector<std::pair<std::string_view, net::JitterDistribution>> kJitterDistributions{
    {"none", net::JitterDistribution::None},
    {"normal", net::JitterDistribution::Normal},
    {"exponential", net::JitterDistribution::Exponential},
};

}  // namespace

// `fabric.nic:` DCQCN rate control and receiver-side PFC.
void read_nic(const Reader& in, const YAML::Node& node, const std::string& path,
              net::NicParams& nic, bool over_current) {
  const MapView m(in, node, path, {"dcqcn", "rx_pfc"});
  if (const YAML::Node* v = m.find("dcqcn")) {
    read_dcqcn(in, *v, m.path_of("dcqcn"), nic.dcqcn, over_current);
  }
  if (const YAML::Node* v = m.find("rx_pfc")) {
    // fabric.nic.rx_pfc: {enabled, buffer, drain_rate, xoff, xon} (receiver-side PFC).
    const MapView r(in, *v, m.path_of("rx_pfc"),
                    {"enabled", "buffer", "drain_rate", "xoff", "xon"});
    nic.rx_pfc = true;
    if (const YAML::Node* e = r.find("enabled")) {
      nic.rx_pfc = in.read_bool(*e, r.path_of("enabled"));
    }
    if (const YAML::Node* e = r.find("buffer")) {
      nic.rx_buffer = in.read_bytes(*e, r.path_of("buffer"));
    }
    if (const YAML::Node* e = r.find("drain_rate")) {
      nic.rx_drain_rate = in.read_bandwidth(*e, r.path_of("drain_rate"));
    }
    if (const YAML::Node* e = r.find("xoff")) nic.rx_xoff = in.read_bytes(*e, r.path_of("xoff"));
    if (const YAML::Node* e = r.find("xon")) nic.rx_xon = in.read_bytes(*e, r.path_of("xon"));
  }
  // The xon < xoff <= buffer rule (field rx_xoff) is reported at the rx_pfc block.
  in.check_fields(path, nic.check(),
                  {{"rx_drain_rate", "rx_pfc.drain_rate"}, {"rx_xoff", "rx_pfc"}});
}

// `fabric.transport`: the fabric-wide transport of inter-host messages and its parameters
// (sim/net/transport.hpp). Every message of the scenario (traffic and workload) uses it.
void read_transport(const Reader& in, const YAML::Node& node, const std::string& path,
                    net::TransportParams& t) {
  const MapView m(in, node, path, {"kind", "go_back_n", "tcp", "host_staging"});
  if (const YAML::Node* v = m.find("kind")) {
    t.kind = in.read_enum(*v, m.path_of("kind"), kTransports);
  }
  // Ranges are TransportParams::check()'s, at the end.
  const auto time = [&](const MapView& mv, const char* key, Time& out) {
    if (const YAML::Node* v = mv.find(key)) out = in.read_time(*v, mv.path_of(key));
  };
  const auto rate = [&](const MapView& mv, const char* key, Bandwidth& out) {
    if (const YAML::Node* v = mv.find(key)) out = in.read_bandwidth(*v, mv.path_of(key));
  };
  if (const YAML::Node* n = m.find("go_back_n")) {
    const MapView g(in, *n, m.path_of("go_back_n"),
                    {"enabled", "timeout", "ack_every", "lossless", "lossless_timeout",
                     "lossless_retry_count", "out_of_order"});
    if (const YAML::Node* v = g.find("enabled")) {
      t.gbn.enabled = in.read_bool(*v, g.path_of("enabled"));
    }
    time(g, "timeout", t.gbn.timeout);
    if (const YAML::Node* v = g.find("ack_every")) {
      t.gbn.ack_every = in.read_u32(*v, g.path_of("ack_every"), 1);
    }
    if (const YAML::Node* v = g.find("lossless")) {
      t.gbn.lossless = in.read_bool(*v, g.path_of("lossless"));
    }
    time(g, "lossless_timeout", t.gbn.lossless_timeout);
    if (const YAML::Node* v = g.find("lossless_retry_count")) {
      t.gbn.lossless_retry_count = in.read_u32(*v, g.path_of("lossless_retry_count"));
    }
    if (const YAML::Node* v = g.find("out_of_order")) {
      t.gbn.out_of_order = in.read_bool(*v, g.path_of("out_of_order"));
    }
  }
  if (const YAML::Node* n = m.find("tcp")) {
    const MapView c(in, *n, m.path_of("tcp"),
                    {"congestion_control", "rto_min", "rto_max", "initial_window", "dctcp_g",
                     "stack_latency", "cpu_per_byte"});
    if (const YAML::Node* v = c.find("congestion_control")) {
      t.tcp.cc = in.read_enum(*v, c.path_of("congestion_control"), kTcpCcs);
    }
    time(c, "rto_min", t.tcp.rto_min);
    time(c, "rto_max", t.tcp.rto_max);
    if (const YAML::Node* v = c.find("initial_window")) {
      t.tcp.initial_window = in.read_u32(*v, c.path_of("initial_window"), 1);
    }
    if (const YAML::Node* v = c.find("dctcp_g")) {
      t.tcp.dctcp_g = in.read_number(*v, c.path_of("dctcp_g"));
    }
    time(c, "stack_latency", t.tcp.stack_latency);
    if (const YAML::Node* v = c.find("cpu_per_byte")) {
      const Time per_byte = in.read_time(*v, c.path_of("cpu_per_byte"));
      t.tcp.cpu_ps_per_byte = static_cast<double>(per_byte.picoseconds());
    }
  }
  if (const YAML::Node* n = m.find("host_staging")) {
    const MapView h(in, *n, m.path_of("host_staging"), {"pcie", "host_memory", "copy_latency"});
    rate(h, "pcie", t.staging.pcie);
    rate(h, "host_memory", t.staging.host_memory);
    time(h, "copy_latency", t.staging.copy_latency);
  }
  in.check_fields(path, t.check(),
                  {{"gbn", "go_back_n"},
                   {"tcp.cpu_ps_per_byte", "tcp.cpu_per_byte"},
                   {"staging", "host_staging"}});
}

// `fabric.impairments`: per-link jitter and random loss (docs/model.md, "Perturbations").
void read_impairments(const Reader& in, const YAML::Node& node, const std::string& path,
                      net::ImpairmentParams& imp) {
  const MapView m(in, node, path, {"links", "jitter", "loss", "loss_on_lossless"});
  if (const YAML::Node* v = m.find("links")) {
    const std::string lp = m.path_of("links");
    if (!v->IsSequence()) in.fail(lp, *v, "expected a list of link classes, got " + describe(*v));
    imp.link_classes.clear();
    for (std::size_t k = 0; k < v->size(); ++k) {
      const std::string name = in.read_string((*v)[k], join_path(lp, k));
      if (name != "host" && name != "fabric" && name != "core" && name != "nvlink") {
        in.fail(join_path(lp, k), (*v)[k],
                "expected one of: \"host\", \"fabric\", \"core\", \"nvlink\"; got " + quoted(name));
      }
      imp.link_classes.push_back(name);
    }
  }
  if (const YAML::Node* n = m.find("jitter")) {
    const MapView j(in, *n, m.path_of("jitter"),
                    {"distribution", "mean", "stddev", "mean_fraction", "stddev_fraction"});
    imp.jitter =
        in.read_enum(j.require("distribution"), j.path_of("distribution"), kJitterDistributions);
    const auto time = [&](const char* key, Time& out) {
      if (const YAML::Node* v = j.find(key)) out = in.read_time(*v, j.path_of(key));
    };
    const auto fraction = [&](const char* key, double& out) {
      if (const YAML::Node* v = j.find(key)) out = in.read_number(*v, j.path_of(key));
    };
    time("mean", imp.jitter_mean);
    time("stddev", imp.jitter_stddev);
    fraction("mean_fraction", imp.jitter_mean_fraction);
    fraction("stddev_fraction", imp.jitter_stddev_fraction);
    // Whether a stddev was written (even 0) is the reader's to know, so this rule stays here.
    if (imp.jitter == net::JitterDistribution::Exponential &&
        (j.find("stddev") != nullptr || j.find("stddev_fraction") != nullptr)) {
      in.fail_path(j.path_of("distribution"),
                   "an exponential jitter's stddev is its mean: set mean or mean_fraction only");
    }
  }
  if (const YAML::Node* v = m.find("loss")) {
    imp.loss_probability = in.read_number(*v, m.path_of("loss"));
  }
  if (const YAML::Node* v = m.find("loss_on_lossless")) {
    imp.loss_on_lossless = in.read_bool(*v, m.path_of("loss_on_lossless"));
  }
  in.check_fields(path, imp.check(),
                  {{"jitter_mean_fraction", "jitter.mean_fraction"},
                   {"jitter_stddev_fraction", "jitter.stddev_fraction"},
                   {"jitter_mean", "jitter.mean"},
                   {"jitter_stddev", "jitter.stddev"},
                   {"loss_probability", "loss"}});
}

}  // namespace syncsim::app::yaml_reader

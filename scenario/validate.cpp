// Checks that need the whole scenario: the fabric is built (or sized), the traffic expanded and the
// workload fitted on the fabric; each error points at the deepest YAML node along its path.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

#include "models/expert_parallel.hpp"
#include "models/traffic.hpp"
#include "scenario/configuration_warnings.hpp"
#include "scenario/section_readers.hpp"
#include "scenario/units.hpp"
#include "sim/net/port_names.hpp"
#include "topologies/fabric_builder.hpp"

namespace syncsim::app::yaml_reader {

namespace {

// Fabrics up to this many nodes (plus routing-table bytes / 8) are built to validate them.
constexpr uint64_t kBuildToValidateLimit = 2'000'000;

std::string ratio_text(double r) {
  std::ostringstream o;
  o.precision(3);
  o << r << ":1";
  return o.str();
}

// The smallest MTU of the link classes this fabric has: a message's packets are cut to its path's
// MTU, so this bounds how many packets a message can need.
Bytes smallest_mtu(const topo::FabricParams& f) {
  Bytes mtu = std::min(f.links.host.mtu, f.links.fabric.mtu);
  if (f.kind == topo::TopologyKind::FatTree) mtu = std::min(mtu, f.links.core.mtu);
  if (f.host.gpus > 1) mtu = std::min(mtu, f.links.nvlink.mtu);
  return mtu;
}

// The packet transports number a message's packets with 32-bit sequence numbers (RoCE's PSN is
// 24 bits on the wire; sim/net/reliable_transport.hpp keeps 32 and reserves UINT32_MAX), so a
// message may have at most 2^32 - 2 packets: 16 TiB at a 4 KiB MTU, 5.6 TiB at 1500 B. Larger
// messages are refused at every fidelity: no collective or bucket of a real job comes near it,
// and a sweep that flips the fidelity to packet must not fail half-way.
int64_t largest_message(const topo::FabricParams& f) {
  const int64_t mtu = std::max<int64_t>(smallest_mtu(f).count(), 1);
  return (int64_t{UINT32_MAX} - 1) * mtu;
}

void check_message_size(const Reader& in, const topo::FabricParams& f, Bytes size,
                        const std::string& path) {
  const int64_t limit = largest_message(f);
  if (size.count() > limit) {
    in.fail_path(path, "expected a message of at most " + format_bytes(Bytes{limit}) +
                           " (2^32 - 2 packets of the fabric's smallest MTU, " +
                           format_bytes(smallest_mtu(f)) +
                           ": the transports' 32-bit sequence numbers), got " + format_bytes(size));
  }
}

// `fabric.host`: every GPU uses one NIC (GPU g of G uses NIC floor(g * N / G)), so NICs beyond
// the GPU count would be built, cabled and never carry a byte. Real GPU servers have at most one
// compute NIC per GPU (DGX H100/B200: 8 ConnectX-7 for 8 GPUs, plus storage NICs off the GPU
// path); where a cloud instance gives a GPU several (AWS p5: 4 x 100G EFA per H100), model it as
// one NIC of the sum (`links.host.bandwidth: 400Gbps`).
void check_host(const Reader& in, const topo::FabricParams& f) {
  const uint32_t gpus = f.host.gpus;
  const uint32_t nics = f.host.nics;
  if (gpus == 0 || nics == 0) return;  // the builder reports these
  // Spraying over planes, each GPU uses one NIC per plane (fabric.planes; a multi-plane NIC's
  // ports).
  if (f.planes > 1 && f.plane_selection == topo::PlaneSelection::Spray) {
    in.check_fields("fabric.host", f.host.check_every_nic_used(f.planes));
    return;
  }
  in.check_fields("fabric.host", f.host.check_every_nic_used());
  if (gpus % nics != 0) {
    in.warn("fabric.host.nics",
            std::to_string(nics) + " NICs for " + std::to_string(gpus) +
                " GPUs: GPU g uses NIC floor(g * " + std::to_string(nics) + " / " +
                std::to_string(gpus) +
                "), so some NICs serve more GPUs than others (servers pair them evenly: 1, 2, 4 "
                "or 8 GPUs per NIC)");
  }
}

// `fabric.spine_leaf.oversubscription`: the builder derives whole spines, rounding up, and never
// fewer than one, so the ratio built can differ from the ratio asked; beyond this relative
// difference it is reported.
constexpr double kRatioTolerance = 0.05;

void check_oversubscription(const Reader& in, const topo::FabricParams& f) {
  const topo::SpineLeafParams& sl = f.spine_leaf;
  if (f.kind != topo::TopologyKind::SpineLeaf || !sl.oversubscription || sl.spines) return;
  const double asked = *sl.oversubscription;
  // The same arithmetic as the builder (topologies/spine_leaf.cpp), which has accepted it.
  const double down = static_cast<double>(sl.hosts_per_leaf) * f.host.nics *
                      f.links.host.bandwidth.gbit_per_second();
  const double per_spine = sl.uplinks_per_spine * f.links.fabric.bandwidth.gbit_per_second();
  if (!(down > 0) || !(per_spine > 0) || !(asked > 0)) return;
  const double spines = std::max(1.0, std::ceil(down / (asked * per_spine) * (1.0 - 1e-12)));
  const double built = down / (spines * per_spine);
  const std::string path = "fabric.spine_leaf.oversubscription";
  if (spines == 1.0 && asked > built * (1.0 + kRatioTolerance)) {
    in.fail_path(path, "expected at most " + ratio_text(built) +
                           " (a single spine, the fewest there can be, gives a leaf " +
                           std::to_string(static_cast<int64_t>(std::llround(per_spine))) +
                           " Gbps of uplink under " +
                           std::to_string(static_cast<int64_t>(std::llround(down))) +
                           " Gbps of host links; for less uplink, lower links.fabric.bandwidth), "
                           "got " +
                           ratio_text(asked));
  }
  if (std::abs(built - asked) > kRatioTolerance * asked) {
    in.warn(path, ratio_text(asked) + " builds " + std::to_string(static_cast<int64_t>(spines)) +
                      " spines (whole spines, "
                      "rounded up), which is " +
                      ratio_text(built) + "; set spine_leaf.spines to state the fabric you mean");
  }
}

// `collective.calibration`: a profile's collectives were timed on its GPUs and NICs. Lines over
// more ranks than the measured node's GPUs crossed the network, where a ring or tree all-reduce's
// bus bandwidth cannot exceed the per-GPU NIC rate (NCCL's busbw definition); a large-message
// regime faster than the scenario's NICs allow (beyond this margin, for NCCL's rounding and
// measurement noise) was measured on faster NICs.
constexpr double kNicMargin = 1.25;

void check_collective_calibration(const Reader& in, const Scenario& scenario) {
  if (!scenario.collective_calibration) return;
  const CollectiveCalibration& cal = *scenario.collective_calibration;
  const std::string path = "collective.calibration";
  if (scenario.workload && !cal.gpu_name.empty() &&
      !profile_names_gpu(cal.gpu_name, scenario.workload->step.gpu.name)) {
    in.warn(path, "the profile " + cal.file + " was measured on " + cal.gpu_name +
                      ", the scenario's workload.gpu is " + scenario.workload->step.gpu.name +
                      ": its collective times belong to other hardware");
  }
  const topo::FabricParams& f = scenario.fabric;
  if (cal.gpu_count <= 0 || f.host.gpus == 0) return;
  const double nic_gbps = f.links.host.bandwidth.gbit_per_second() * f.host.nics / f.host.gpus;
  for (const calibration::CollectiveProfile& c : cal.collectives) {
    if (c.ranks <= cal.gpu_count || c.regimes.empty() || c.ranks < 2) continue;
    if (c.op != "all_reduce" && c.op != "all_gather" && c.op != "reduce_scatter") continue;
    const double n = c.ranks;
    const double factor = c.op == "all_reduce" ? 2.0 * (n - 1) / n : (n - 1) / n;
    const double busbw_gbps = c.regimes.back().algbw_GBps * 8.0 * factor;
    if (busbw_gbps > kNicMargin * nic_gbps) {
      std::ostringstream o;
      o.precision(4);
      o << "the profile's " << c.op << " over " << c.ranks << " ranks (" << cal.gpu_count
        << " GPUs per node) reaches a bus bandwidth of " << busbw_gbps << " Gbps, more than the "
        << nic_gbps
        << " Gbps per GPU this fabric's NICs carry (links.host.bandwidth x host.nics / "
           "host.gpus): it was measured on faster NICs";
      in.warn(path, o.str());
      return;
    }
  }
}

}  // namespace

// A calibration profile names the GPU it was measured on ("NVIDIA H100 80GB HBM3"); the scenario's
// preset ("h100") should appear in it as a word of its own ("gh200" is not "h200").
bool profile_names_gpu(const std::string& measured, const std::string& preset) {
  std::string m = measured;
  std::transform(m.begin(), m.end(), m.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  for (std::size_t at = m.find(preset); at != std::string::npos; at = m.find(preset, at + 1)) {
    const bool starts = at == 0 || std::isalnum(static_cast<unsigned char>(m[at - 1])) == 0;
    const std::size_t end = at + preset.size();
    const bool ends = end == m.size() || std::isalpha(static_cast<unsigned char>(m[end])) == 0;
    if (starts && ends) return true;
  }
  return false;
}

namespace {

// A training workload at `path` (`workload`, `jobs.N.workload`) on `gpus` GPUs: what
// data_parallel 0 fills and the most its ranks may take.
void check_workload(const Reader& in, const Scenario& scenario, const WorkloadSpec& w,
                    const std::string& path, uint32_t gpus) {
  if (w.data_parallel > gpus) {
    in.fail_path(join_path(path, "data_parallel"), "expected at most the fabric's " +
                                                       std::to_string(gpus) + " GPUs, got " +
                                                       std::to_string(w.data_parallel));
  }
  check_message_size(in, scenario.fabric, w.step.ddp.bucket_cap,
                     join_path(path, "ddp.bucket_cap_mb"));
  check_message_size(in, scenario.fabric, w.step.ddp.first_bucket,
                     join_path(path, "ddp.first_bucket_mb"));
  const models::ParallelLayout& lay = w.step.layout;
  // Megatron order puts TP innermost, so TP group g is ranks g*t .. g*t + t - 1: it stays in one
  // host only when t divides the host's GPUs. Real runs keep TP inside the NVLink domain
  // (Megatron-LM's guidance: TP at most the GPUs per node), as its all-reduces run every layer.
  const uint32_t host_gpus = scenario.fabric.host.gpus;
  if (lay.tensor > 1 && host_gpus > 0 && (lay.tensor > host_gpus || host_gpus % lay.tensor)) {
    in.warn(join_path(path, "tensor_parallel"),
            "tensor-parallel groups of " + std::to_string(lay.tensor) + " GPUs span hosts of " +
                std::to_string(host_gpus) +
                " GPUs (fabric.host.gpus), so their per-layer all-reduces cross the network "
                "instead of NVLink; real runs keep tensor parallelism within a host's NVLink "
                "domain");
  }
  const uint32_t model_parallel = lay.tensor * lay.context * lay.pipeline;
  if (model_parallel > 1) {
    const uint64_t product =
        uint64_t{model_parallel} * (w.data_parallel == 0 ? 1 : w.data_parallel);
    if (w.data_parallel == 0 && gpus % model_parallel != 0) {
      in.fail_path(join_path(path, "tensor_parallel"),
                   "expected tensor_parallel x context_parallel x pipeline_parallel (" +
                       std::to_string(lay.tensor) + " x " + std::to_string(lay.context) + " x " +
                       std::to_string(lay.pipeline) + " = " + std::to_string(model_parallel) +
                       ") to divide the fabric's " + std::to_string(gpus) + " GPUs");
    }
    if (product > gpus) {
      in.fail_path(
          join_path(path, "data_parallel"),
          "expected tensor_parallel x context_parallel x pipeline_parallel x data_parallel (" +
              std::to_string(lay.tensor) + " x " + std::to_string(lay.context) + " x " +
              std::to_string(lay.pipeline) + " x " + std::to_string(w.data_parallel) + " = " +
              std::to_string(product) + ") to be at most the fabric's " + std::to_string(gpus) +
              " GPUs");
    }
  }
  const uint32_t ranks =
      (w.data_parallel == 0 ? gpus / model_parallel : w.data_parallel) * model_parallel;
  if (lay.expert > 1) {
    // Expert-parallel groups are carved out of each stage's DP x CP ranks (Megatron-Core).
    try {
      models::check_expert_layout(w.step.model, lay, ranks / std::max(1u, model_parallel));
    } catch (const std::invalid_argument& e) {
      in.fail_path(join_path(path, "expert_parallel"), e.what());
    }
  }
  if (const uint32_t shard = w.step.fsdp.shard_degree; shard > 0) {
    // FSDP shards over each TP rank's DP x CP ranks; HSDP splits them into shard groups.
    const uint32_t replicas = ranks / std::max(1u, model_parallel) * std::max(1u, lay.context);
    if (shard > replicas || replicas % shard != 0) {
      in.fail_path(join_path(path, "fsdp.shard_degree"),
                   "expected a divisor of the " + std::to_string(replicas) +
                       (lay.context > 1 ? " data-parallel x context-parallel ranks, got "
                                        : " data-parallel ranks, got ") +
                       std::to_string(shard));
    }
  }
  if (w.step.perturbations.straggler && *w.step.perturbations.straggler >= ranks) {
    in.fail_path(join_path(path, "perturbations.straggler.rank"),
                 "expected a rank below " + std::to_string(ranks) + ", got " +
                     std::to_string(*w.step.perturbations.straggler));
  }
  if (w.step.algorithm == models::CollectiveAlgo::Hierarchical &&
      ranks % scenario.fabric.host.gpus != 0) {
    in.fail_path(join_path(path, "algorithm"),
                 "hierarchical all-reduce needs whole hosts: " + std::to_string(ranks) +
                     " ranks on hosts of " + std::to_string(scenario.fabric.host.gpus) + " GPUs");
  }
  if (models::is_collnet(w.step.algorithm)) {
    // CollNet runs the DDP step's bucket all-reduces over SHARP: whole hosts, plain DDP.
    const std::string at = join_path(path, "algorithm");
    const auto refuse = [&](const std::string& why) {
      in.fail_path(at, "expected " + std::string(models::to_string(w.step.algorithm)) +
                           " where SHARP can run it: " + why);
    };
    if (!scenario.fabric.sharp.enabled) refuse("fabric.infiniband.sharp is off");
    const bool fsdp = w.step.parallelism == models::DataParallelism::Fsdp;
    const uint32_t shard = w.step.fsdp.shard_degree;
    const bool full_shard = fsdp && (shard == 0 || shard == ranks);
    if ((w.step.parallelism != models::DataParallelism::Ddp && !full_shard) || model_parallel > 1 ||
        lay.distributed_optimizer) {
      refuse(
          "plain DDP or FSDP FULL_SHARD (no HSDP, model parallelism or distributed optimizer), "
          "got another layout");
    }
    if (fsdp && w.step.algorithm != models::CollectiveAlgo::CollnetDirect) {
      refuse(
          "collnet_direct for FSDP (NCCL runs reduce_scatter / all_gather on CollNet Direct "
          "only)");
    }
    const uint32_t host_nics = scenario.fabric.host.nics;
    if (fsdp && host_nics < host_gpus) {
      refuse("a NIC per GPU for FSDP's reduce_scatter / all_gather (NCCL: 1:1 GPU:NIC), got " +
             std::to_string(host_nics) + " NICs for " + std::to_string(host_gpus) + " GPUs");
    }
    if (host_gpus == 0 || ranks % host_gpus != 0 || ranks / host_gpus < 2 || host_gpus > 8) {
      refuse("two or more whole hosts of at most 8 GPUs, got " + std::to_string(ranks) +
             " ranks on hosts of " + std::to_string(host_gpus));
    }
  }
  if (w.step.algorithm == models::CollectiveAlgo::Pairwise ||
      w.step.algorithm == models::CollectiveAlgo::Pat || models::is_nvls(w.step.algorithm)) {
    // The step plans its data-parallel all-reduce with one of these; PAT is all-gather /
    // reduce-scatter only, and NVLS (`syncsim collective`, the report: block) is not planned
    // into the step's collectives.
    in.fail_path(join_path(path, "algorithm"),
                 "expected an all-reduce algorithm (ring, tree, halving_doubling, hierarchical, "
                 "and with SHARP collnet_direct, collnet_chain), got " +
                     std::string(models::to_string(w.step.algorithm)));
  }
}

// The ranks a checked workload takes on `gpus` GPUs.
uint32_t workload_ranks(const WorkloadSpec& w, uint32_t gpus) {
  const models::ParallelLayout& lay = w.step.layout;
  const uint32_t model_parallel = lay.tensor * lay.context * lay.pipeline;
  return (w.data_parallel == 0 ? gpus / model_parallel : w.data_parallel) * model_parallel;
}

// `jobs:`: each job's workload on its GPUs, host lists on the fabric and apart, and all jobs
// together within the fabric's GPUs.
void check_jobs(const Reader& in, const Scenario& scenario, const net::NetworkSpec& spec) {
  const auto fabric_gpus = static_cast<uint32_t>(spec.gpus.size());
  std::vector<int> host_owner(spec.hosts, -1);
  uint64_t taken = 0;
  for (std::size_t i = 0; i < scenario.jobs.size(); ++i) {
    const JobSpec& job = scenario.jobs[i];
    const std::string path = join_path("jobs", i);
    for (std::size_t k = 0; k < job.hosts.size(); ++k) {
      const uint32_t h = job.hosts[k];
      const std::string at = join_path(join_path(path, "hosts"), k);
      if (h >= spec.hosts) {
        in.fail_path(at, "expected a host number below the fabric's " + std::to_string(spec.hosts) +
                             " hosts, got " + std::to_string(h));
      }
      if (host_owner[h] >= 0) {
        in.fail_path(
            at,
            "expected a host no other job holds, got host " + std::to_string(h) +
                (host_owner[h] == static_cast<int>(i)
                     ? " twice"
                     : ", which job " +
                           scenario.jobs[static_cast<std::size_t>(host_owner[h])].name + " lists"));
      }
      host_owner[h] = static_cast<int>(i);
    }
    const uint32_t gpus = job.hosts.empty()
                              ? fabric_gpus
                              : static_cast<uint32_t>(job.hosts.size()) * scenario.fabric.host.gpus;
    const std::string workload_path = join_path(path, "workload");
    check_workload(in, scenario, job.workload, workload_path, gpus);
    taken += workload_ranks(job.workload, gpus);
    if (taken > fabric_gpus) {
      in.fail_path(join_path(workload_path, "data_parallel"),
                   "expected the jobs to fit the fabric's " + std::to_string(fabric_gpus) +
                       " GPUs together; with this one they take " + std::to_string(taken));
    }
  }
}

}  // namespace

void validate(const Reader& in, const Scenario& scenario) {
  // The builder checks every fabric range and combination; its path is relative to `fabric.`.
  // Fabrics too big to build here (a million GPUs) are only sized: the run's memory estimate
  // refuses them with numbers instead of this check allocating gigabytes of routing tables.
  net::NetworkSpec spec;
  try {
    const topo::FabricSize size = topo::fabric_size(scenario.fabric);
    if (size.nodes + size.routing_entries / 8 < kBuildToValidateLimit) {
      spec = topo::build_fabric(scenario.fabric);
    } else {
      // Only the ranks and their hosts are read below (ranks fill hosts in order).
      spec.gpus.resize(size.gpus);
      const uint32_t per_host = std::max<uint32_t>(1, scenario.fabric.host.gpus);
      for (std::size_t r = 0; r < spec.gpus.size(); ++r) {
        spec.gpus[r].host = static_cast<uint32_t>(r / per_host);
      }
    }
  } catch (const topo::TopologyError& e) {
    in.fail_path(e.path().empty() ? "fabric" : join_path("fabric", e.path()), e.what());
  }

  // A switch preset's radix: a fabric switch with more ports than that is not that switch.
  if (const uint32_t radix = scenario.network.switch_radix; radix > 0 && !spec.nodes.empty()) {
    std::vector<std::size_t> ports(spec.nodes.size(), 0);
    for (const net::LinkSpec& l : spec.links) {
      // A SHARP engine (a NIC of no host) is inside its switch, not on a port.
      const auto engine = [&](net::NodeId n) {
        return spec.nodes[n].kind == net::NodeKind::Nic && spec.nodes[n].host == net::kNoHost;
      };
      if (engine(l.a) || engine(l.b)) continue;
      ++ports[l.a];
      ++ports[l.b];
    }
    std::size_t fabric_most = 0;
    for (net::NodeId n = 0; n < spec.nodes.size(); ++n) {
      if (spec.nodes[n].kind == net::NodeKind::Switch &&
          spec.nodes[n].role != net::SwitchRole::NvSwitch) {
        fabric_most = std::max(fabric_most, ports[n]);
      }
    }
    if (fabric_most > radix) {
      in.warn("fabric.switch.preset",
              "the fabric has a switch with " + std::to_string(fabric_most) +
                  " ports, more than the preset's " + std::to_string(radix));
    }
  }
  check_host(in, scenario.fabric);
  check_oversubscription(in, scenario.fabric);
  // SHARP is InfiniBand switches' (NVIDIA Quantum and later) and NCCL reaches it through RDMA
  // (the SHARP plugin), one fabric per tree.
  if (scenario.fabric.sharp.enabled) {
    const std::string at = "fabric.infiniband.sharp.enabled";
    if (scenario.network.link_layer != net::LinkLayer::Infiniband) {
      in.fail_path(at,
                   "expected SHARP on fabric.link_layer: infiniband (InfiniBand switches "
                   "reduce; Ethernet switches here do not), found roce");
    }
    if (scenario.fabric.planes > 1) {
      in.fail_path(at, "expected a single-plane fabric for SHARP, found fabric.planes: " +
                           std::to_string(scenario.fabric.planes));
    }
    if (scenario.network.transport.kind != net::TransportKind::Roce) {
      in.fail_path(at,
                   "expected RDMA transport (fabric.transport.kind: roce) for SHARP, found a "
                   "host-staged or TCP transport");
    }
  }
  // The PCIe-switch sharing shapes only copies through host memory; GPUDirect RDMA has none.
  if (scenario.network.transport.kind == net::TransportKind::Roce &&
      in.has("fabric.host.gpus_per_pcie_switch")) {
    in.warn("fabric.host.gpus_per_pcie_switch",
            "has no effect with fabric.transport.kind: roce (GPUDirect RDMA: NICs read and write "
            "GPU memory, nothing is staged through host memory); it applies to roce_host_staged "
            "and tcp");
  }

  // A priority without an output queue would have nowhere to go in the switches (priorities is
  // known to be >= 1 once the fabric is built).
  const uint32_t classes = scenario.fabric.switch_params.priorities;
  const auto check_priority = [&](uint8_t priority, const std::string& path) {
    if (priority >= classes) {
      in.fail_path(path, "expected a priority in 0.." + std::to_string(classes - 1) +
                             " (fabric.switch.priorities is " + std::to_string(classes) +
                             "), got " + std::to_string(priority));
    }
  };
  const net::PfcParams& pfc = scenario.network.pfc;
  if (pfc.enabled && (pfc.lossless_mask >> classes) != 0) {
    in.fail_path("fabric.switch.pfc.lossless_priorities",
                 "expected lossless priorities in 0.." + std::to_string(classes - 1) +
                     " (fabric.switch.priorities is " + std::to_string(classes) + ")");
  }
  for (std::size_t i = 0; i < scenario.traffic.size(); ++i) {
    const models::TrafficSpec& t = scenario.traffic[i];
    const std::string entry = join_path("traffic", i);
    if (t.pattern != models::TrafficPattern::Explicit) {
      check_priority(t.priority, join_path(entry, "priority"));
    }
    if (t.pattern != models::TrafficPattern::Explicit) {
      check_message_size(in, scenario.fabric, t.size, join_path(entry, "size"));
    }
    for (std::size_t k = 0; k < t.messages.size(); ++k) {
      const std::string message = join_path(join_path(entry, "messages"), k);
      check_priority(t.messages[k].priority, join_path(message, "priority"));
      check_message_size(in, scenario.fabric, t.messages[k].size, join_path(message, "size"));
    }
  }

  // build_fabric caps the GPU count at 2^32 - 1, so the rank count fits.
  try {
    std::vector<uint32_t> host_of_rank;
    for (const net::GpuAttachment& g : spec.gpus) host_of_rank.push_back(g.host);
    models::expand_traffic(scenario.traffic, host_of_rank, scenario.seed);
  } catch (const models::TrafficError& e) {
    const std::string entry = join_path("traffic", e.index());
    in.fail_path(e.path().empty() ? entry : join_path(entry, e.path()), e.what());
  }

  // observe.ports against the built fabric (a fabric too big to build here is checked by the run).
  if (scenario.observe && !spec.links.empty()) {
    for (std::size_t i = 0; i < scenario.observe->ports.size(); ++i) {
      const std::string& name = scenario.observe->ports[i];
      if (net::find_egress_port(spec, name) == UINT32_MAX) {
        in.fail_path(join_path("observe.ports", i),
                     "expected an egress port \"owner->peer\" of this fabric (`syncsim ports` "
                     "lists them), got \"" +
                         name + "\"; did you mean \"" + net::closest_egress_port(spec, name) +
                         "\"?");
      }
    }
  }

  check_faults(in, scenario, spec);

  for (std::size_t i = 0; i < scenario.network.nic_overrides.size(); ++i) {
    const std::vector<uint32_t>& hosts = scenario.network.nic_overrides[i].hosts;
    for (std::size_t k = 0; k < hosts.size(); ++k) {
      if (!spec.links.empty() && hosts[k] >= spec.hosts) {
        in.fail_path(join_path(join_path(join_path("fabric.nic_overrides", i), "hosts"), k),
                     "expected a host number below the fabric's " + std::to_string(spec.hosts) +
                         " hosts, got " + std::to_string(hosts[k]));
      }
    }
  }

  if (scenario.chakra && scenario.chakra->ranks > spec.gpus.size()) {
    in.fail_path("workload.chakra.ranks", "expected at most the fabric's " +
                                              std::to_string(spec.gpus.size()) + " GPUs, got " +
                                              std::to_string(scenario.chakra->ranks));
  }
  if (scenario.workload) {
    check_workload(in, scenario, *scenario.workload, "workload",
                   static_cast<uint32_t>(spec.gpus.size()));
  }
  check_jobs(in, scenario, spec);

  check_collective_calibration(in, scenario);
  for (const SettingWarning& w : fidelity_warnings(
           scenario.fidelity, scenario.network, [&](const std::string& p) { return in.has(p); })) {
    in.warn(w.path, w.message);
  }
  for (const SettingWarning& w : load_balancing_warnings(
           scenario.fidelity, scenario.fabric, [&](const std::string& p) { return in.has(p); })) {
    in.warn(w.path, w.message);
  }
}

}  // namespace syncsim::app::yaml_reader

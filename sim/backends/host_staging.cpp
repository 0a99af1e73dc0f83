#include "sim/backends/host_staging.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/core/check.hpp"

namespace syncsim {

double StagingLanes::rate_of(uint32_t group) const {
  return std::min(group_bytes_per_ps_ / static_cast<double>(busy_in_group_[group]),
                  total_bytes_per_ps_ / static_cast<double>(lanes_.size()));
}

void StagingLanes::advance() {
  const int64_t now = queue_.now().picoseconds();
  if (!lanes_.empty() && now > last_ps_) {
    const auto elapsed = static_cast<double>(now - last_ps_);
    for (Lane& l : lanes_) l.jobs.front().remaining -= rate_of(l.group) * elapsed;
  }
  last_ps_ = now;
}

void StagingLanes::reschedule() {
  token_.cancel_pending();
  if (lanes_.empty()) return;
  double least = std::numeric_limits<double>::infinity();
  for (const Lane& l : lanes_) {
    least = std::min(least, std::max(0.0, l.jobs.front().remaining) / rate_of(l.group));
  }
  queue_.schedule(queue_.now() + Time::ps(static_cast<int64_t>(std::ceil(least))), this, 0, 0,
                  &token_);
}

void StagingLanes::add(uint32_t job, const StagingLane& lane, uint32_t group, int64_t bytes) {
  SIM_CHECK(group < busy_in_group_.size(), "a staged copy names a PCIe switch the host lacks");
  advance();
  const auto it =
      std::find_if(lanes_.begin(), lanes_.end(), [&](const Lane& l) { return l.key == lane; });
  if (it != lanes_.end()) {
    it->jobs.push_back(Job{static_cast<double>(bytes), job});  // behind the lane's copies
    return;  // the busy lanes are unchanged, so is the next completion
  }
  lanes_.push_back(Lane{lane, group, {Job{static_cast<double>(bytes), job}}});
  ++busy_in_group_[group];
  reschedule();
}

void StagingLanes::on_event(uint32_t /*kind*/, uint64_t /*arg*/) {
  advance();
  // Half a byte absorbs the rounding of the completion instant up to a whole picosecond.
  std::vector<uint32_t> finished;
  for (std::size_t i = 0; i < lanes_.size();) {
    std::deque<Job>& jobs = lanes_[i].jobs;
    if (jobs.front().remaining <= 0.5) {
      finished.push_back(jobs.front().id);
      jobs.pop_front();
    }
    if (jobs.empty()) {
      --busy_in_group_[lanes_[i].group];
      lanes_.erase(lanes_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  reschedule();
  for (uint32_t id : finished) done_(id);
}

HostStaging::HostStaging(Simulation& sim, const net::NetworkSpec& spec,
                         std::function<void(uint32_t)> begin, std::function<void(uint32_t)> finish,
                         bool serialize_starts)
    : sim_(sim), spec_(spec), begin_(std::move(begin)), finish_(std::move(finish)) {
  if (serialize_starts) {
    packet_time_.assign(spec.nodes.size(), Time::zero());
    nic_free_.assign(spec.nodes.size(), Time::zero());
    for (const net::LinkSpec& l : spec.links) {
      const net::LinkParams& c = spec.link_classes[l.link_class];
      for (const net::NodeId end : {l.a, l.b}) {
        if (spec.nodes[end].kind == net::NodeKind::Nic) {
          packet_time_[end] = c.bandwidth.tx_time(Bytes{c.mtu.count() + c.header.count()});
        }
      }
    }
  }
  const net::HostStagingParams& st = spec.transport.staging;
  SIM_CHECK(st.gpus_per_pcie_switch > 0, "host staging needs at least one GPU per PCIe switch");
  uint32_t gpus_per_host = 1;
  for (const net::GpuAttachment& g : spec.gpus) {
    gpus_per_host = std::max(gpus_per_host, g.local_index + 1);
  }
  switches_per_host_ = (gpus_per_host + st.gpus_per_pcie_switch - 1) / st.gpus_per_pcie_switch;
  const double pcie_bytes_per_ps = static_cast<double>(st.pcie.bits_per_second()) / 8e12;
  // A staged byte crosses host memory twice: half its rate per direction.
  const double memory_bytes_per_ps = static_cast<double>(st.host_memory.bits_per_second()) / 16e12;
  SIM_CHECK(pcie_bytes_per_ps > 0 && memory_bytes_per_ps > 0,
            "host staging needs positive PCIe and host-memory bandwidths");
  tx_.reserve(spec.hosts);
  rx_.reserve(spec.hosts);
  for (uint32_t h = 0; h < spec.hosts; ++h) {
    // After the sender's copy, the fixed delay (copy latency, stack) runs before the network.
    tx_.emplace_back(sim.queue(), switches_per_host_, pcie_bytes_per_ps, memory_bytes_per_ps,
                     [this](uint32_t id) { send_ready(id); });
    rx_.emplace_back(sim.queue(), switches_per_host_, pcie_bytes_per_ps, memory_bytes_per_ps,
                     [this](uint32_t id) { finish_(id); });
  }
}

void HostStaging::send_ready(uint32_t id) {
  Time at = sim_.now() + fixed_delay(bytes_[id]);
  if (!nic_free_.empty() && src_nic_[id] != net::kNoNode) {
    Time& free = nic_free_[src_nic_[id]];
    at = std::max(at, free);
    free = at + packet_time_[src_nic_[id]];
  }
  sim_.queue().schedule(at, this, kSendReady, id);
}

uint32_t HostStaging::switch_of(uint32_t gpu) const {
  return spec_.gpus[gpu].local_index / spec_.transport.staging.gpus_per_pcie_switch;
}

StagingLane HostStaging::lane_of(uint32_t id, uint32_t src_gpu, uint32_t dst_gpu,
                                 uint32_t connection) {
  if (connection == kNoConnection) return StagingLane{id, UINT32_MAX, kNoConnection};
  return StagingLane{src_gpu, dst_gpu, connection};
}

Time HostStaging::fixed_delay(int64_t bytes) const {
  const net::TransportParams& t = spec_.transport;
  Time d = t.staging.copy_latency;
  if (t.kind == net::TransportKind::Tcp) {
    d = d + t.tcp.stack_latency +
        Time::ps(
            static_cast<int64_t>(std::llround(t.tcp.cpu_ps_per_byte * static_cast<double>(bytes))));
  }
  return d;
}

void HostStaging::send(uint32_t id, uint32_t src_gpu, uint32_t dst_gpu, uint32_t connection,
                       int64_t bytes) {
  if (bytes_.size() <= id) {
    bytes_.resize(id + 1, 0);
    received_.resize(id + 1, 0);
    lane_.resize(id + 1);
    gpu_.resize(id + 1, 0);
  }
  bytes_[id] = bytes;
  if (!nic_free_.empty()) {
    if (src_nic_.size() <= id) src_nic_.resize(id + 1, net::kNoNode);
    src_nic_[id] = spec_.gpus[src_gpu].nic;
  }
  tx_[spec_.gpus[src_gpu].host].add(id, lane_of(id, src_gpu, dst_gpu, connection),
                                    switch_of(src_gpu), bytes);
}

bool HostStaging::receive(uint32_t id, uint32_t src_gpu, uint32_t dst_gpu, uint32_t connection,
                          int64_t bytes) {
  if (id < received_.size() && received_[id] != 0) return false;  // stage done: complete now
  if (bytes_.size() <= id) {
    bytes_.resize(id + 1, 0);
    received_.resize(id + 1, 0);
    lane_.resize(id + 1);
    gpu_.resize(id + 1, 0);
  }
  received_[id] = 1;
  bytes_[id] = bytes;
  lane_[id] = lane_of(id, src_gpu, dst_gpu, connection);
  gpu_[id] = dst_gpu;
  sim_.queue().schedule(sim_.now() + fixed_delay(bytes), this, kReceiveCopy, id);
  return true;
}

void HostStaging::on_event(uint32_t kind, uint64_t arg) {
  const auto id = static_cast<uint32_t>(arg);
  if (kind == kSendReady) {
    begin_(id);
  } else {
    rx_[spec_.gpus[gpu_[id]].host].add(id, lane_[id], switch_of(gpu_[id]), bytes_[id]);
  }
}

}  // namespace syncsim

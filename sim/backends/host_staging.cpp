#include "sim/backends/host_staging.hpp"

#include <algorithm>
#include <cmath>

#include "sim/core/check.hpp"

namespace syncsim {

void FairShareStage::advance() {
  const int64_t now = queue_.now().picoseconds();
  if (!jobs_.empty() && now > last_ps_) {
    const double each =
        bytes_per_ps_ * static_cast<double>(now - last_ps_) / static_cast<double>(jobs_.size());
    for (Job& j : jobs_) j.remaining -= each;
  }
  last_ps_ = now;
}

void FairShareStage::reschedule() {
  token_.cancel_pending();
  if (jobs_.empty()) return;
  double least = jobs_.front().remaining;
  for (const Job& j : jobs_) least = std::min(least, j.remaining);
  const double ps = std::max(0.0, least) * static_cast<double>(jobs_.size()) / bytes_per_ps_;
  queue_.schedule(queue_.now() + Time::ps(static_cast<int64_t>(std::ceil(ps))), this, 0, 0,
                  &token_);
}

void FairShareStage::add(uint32_t job, int64_t bytes) {
  advance();
  jobs_.push_back(Job{static_cast<double>(bytes), job});
  reschedule();
}

void FairShareStage::on_event(uint32_t /*kind*/, uint64_t /*arg*/) {
  advance();
  // Half a byte absorbs the rounding of the completion instant up to a whole picosecond.
  std::vector<uint32_t> finished;
  for (std::size_t i = 0; i < jobs_.size();) {
    if (jobs_[i].remaining <= 0.5) {
      finished.push_back(jobs_[i].id);
      jobs_.erase(jobs_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  reschedule();
  for (uint32_t id : finished) done_(id);
}

HostStaging::HostStaging(Simulation& sim, const net::NetworkSpec& spec,
                         std::function<void(uint32_t)> begin, std::function<void(uint32_t)> finish)
    : sim_(sim), spec_(spec), begin_(std::move(begin)), finish_(std::move(finish)) {
  const net::HostStagingParams& st = spec.transport.staging;
  const double rate_bps = std::min(static_cast<double>(st.pcie.bits_per_second()),
                                   static_cast<double>(st.host_memory.bits_per_second()) / 2.0);
  const double bytes_per_ps = rate_bps / 8e12;
  SIM_CHECK(bytes_per_ps > 0, "host staging needs positive PCIe and host-memory bandwidths");
  tx_.reserve(spec.hosts);
  rx_.reserve(spec.hosts);
  for (uint32_t h = 0; h < spec.hosts; ++h) {
    // After the sender's copy, the fixed delay (copy latency, stack) runs before the network.
    tx_.emplace_back(sim.queue(), bytes_per_ps, [this](uint32_t id) {
      sim_.queue().schedule(sim_.now() + fixed_delay(bytes_[id]), this, kSendReady, id);
    });
    rx_.emplace_back(sim.queue(), bytes_per_ps, [this](uint32_t id) { finish_(id); });
  }
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

void HostStaging::send(uint32_t id, uint32_t host, int64_t bytes) {
  if (bytes_.size() <= id) {
    bytes_.resize(id + 1, 0);
    received_.resize(id + 1, 0);
    host_.resize(id + 1, 0);
  }
  bytes_[id] = bytes;
  tx_[host].add(id, bytes);
}

bool HostStaging::receive(uint32_t id, uint32_t host, int64_t bytes) {
  if (id < received_.size() && received_[id] != 0) return false;  // stage done: complete now
  if (bytes_.size() <= id) {
    bytes_.resize(id + 1, 0);
    received_.resize(id + 1, 0);
    host_.resize(id + 1, 0);
  }
  received_[id] = 1;
  bytes_[id] = bytes;
  host_[id] = host;
  sim_.queue().schedule(sim_.now() + fixed_delay(bytes), this, kReceiveCopy, id);
  return true;
}

void HostStaging::on_event(uint32_t kind, uint64_t arg) {
  const auto id = static_cast<uint32_t>(arg);
  if (kind == kSendReady) {
    begin_(id);
  } else {
    rx_[host_[id]].add(id, bytes_[id]);
  }
}

}  // namespace syncsim

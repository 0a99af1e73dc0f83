#include "sim/backends/transfer_backend.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "sim/core/check.hpp"

namespace syncsim {

namespace {
constexpr uint32_t kNoSlot = UINT32_MAX;
}  // namespace

void TransferBackend::count_route_bytes(const uint32_t* route, std::size_t hops, Bytes size) {
  if (port_bytes_.empty()) port_bytes_.assign(2 * spec_.links.size(), 0);
  for (std::size_t h = 0; h < hops; ++h) port_bytes_[route[h]] += size.count();
}

TransferId TransferBackend::start(const TransferRequest& request, TransferCallback on_done) {
  const auto endpoints = spec_.endpoint_count();
  if (request.src_gpu >= endpoints || request.dst_gpu >= endpoints) {
    throw std::invalid_argument(
        "transfer between GPU " + std::to_string(request.src_gpu) + " and GPU " +
        std::to_string(request.dst_gpu) + ", but the fabric has " +
        std::to_string(spec_.gpus.size()) + " GPUs, " + std::to_string(spec_.nvls_engines.size()) +
        " NVLS engines and " + std::to_string(spec_.sharp_engines.size()) + " SHARP engines");
  }
  if (request.src_gpu == request.dst_gpu) {
    throw std::invalid_argument("transfer from GPU " + std::to_string(request.src_gpu) +
                                " to itself");
  }
  if (request.size.count() < 0) throw std::invalid_argument("transfer of a negative size");
  const Time begin_at = std::max(sim_.now(), request.start_at);
  SIM_CHECK(begin_at == sim_.now() || starts_ahead(),
            "a transfer that starts later on a backend that starts transfers only now");
  const auto id = static_cast<TransferId>(started_);
  SIM_CHECK(started_ < UINT32_MAX, "more than 2^32 - 1 transfers");
  ++started_;
  const TransferRecord fresh{request, begin_at, Time::max(), false};
  uint32_t slot = kNoSlot;
  if (on_done || !keep_history_) {
    if (free_slots_.empty()) {
      slot = static_cast<uint32_t>(callback_slots_.size());
      callback_slots_.push_back(std::move(on_done));
      if (!keep_history_) live_records_.push_back(fresh);
    } else {
      slot = free_slots_.back();
      free_slots_.pop_back();
      callback_slots_[slot] = std::move(on_done);
      if (!keep_history_) live_records_[slot] = fresh;
    }
  }
  if (keep_history_) {
    records_.push_back(fresh);
    if (records_.capacity() > slot_of_.capacity()) slot_of_.reserve(records_.capacity());
  }
  slot_of_.push_back(slot);

  // NVLS engines (endpoints past the GPUs) sit on their host's NVSwitch: always the NVLink path.
  // SHARP engines sit on fabric switches (no host): always the fabric path.
  const net::GpuAttachment& a = spec_.endpoint(request.src_gpu);
  const net::GpuAttachment& b = spec_.endpoint(request.dst_gpu);
  net::NodeId src = a.nic;
  net::NodeId dst = b.nic;
  const bool same_host = net::same_host(a, b);
  if (!same_host && (a.nic == net::kNoNode || b.nic == net::kNoNode)) {
    throw std::invalid_argument("an NVLS engine exchanges data only with GPUs of its own host");
  }
  if (same_host) {
    SIM_CHECK(a.nvlink_port != net::kNoNode && b.nvlink_port != net::kNoNode,
              "two GPUs of one host without NVLink ports");
    src = a.nvlink_port;
    dst = b.nvlink_port;
  }
  if (request.size.count() == 0) {
    // Nothing to move: complete at the current instant, but through the queue, so callers never
    // see their callback run inside start().
    sim_.queue().schedule_fn(begin_at, [this, id] { complete(id); });
    return id;
  }
  if (!same_host && spec_.transport.kind != net::TransportKind::Roce) {
    if (!staging_) {
      staging_ = std::make_unique<HostStaging>(
          sim_, spec_, [this](uint32_t t) { begin_staged(t); },
          [this](uint32_t t) { complete_now(t); }, fidelity() == Fidelity::Flow);
    }
    staging_->send(id, request.src_gpu, request.dst_gpu, request.connection, request.size.count());
    return id;
  }
  begin_on_planes(id, src, dst, request);
  return id;
}

void TransferBackend::open_queue_pair(const TransferRequest& r) {
  if (r.connection == kNoConnection) return;
  const auto endpoints = spec_.endpoint_count();
  if (r.src_gpu >= endpoints || r.dst_gpu >= endpoints || r.src_gpu == r.dst_gpu) return;
  // Between the NICs (or NVLink ports) start() picks, on the planes begin_on_planes() would use.
  const net::GpuAttachment& a = spec_.endpoint(r.src_gpu);
  const net::GpuAttachment& b = spec_.endpoint(r.dst_gpu);
  const bool same_host = net::same_host(a, b);
  const net::NodeId src = same_host ? a.nvlink_port : a.nic;
  const net::NodeId dst = same_host ? b.nvlink_port : b.nic;
  if (src == net::kNoNode || dst == net::kNoNode) return;
  for_each_plane_path(src, dst, r, [&](net::NodeId s, net::NodeId d, uint32_t, uint32_t) {
    queue_pairs_.resolve(0, s, d, r.priority, r.connection);
  });
}

void TransferBackend::begin_on_planes(TransferId id, net::NodeId src, net::NodeId dst,
                                      const TransferRequest& r) {
  for_each_plane_path(
      src, dst, r, [&](net::NodeId s, net::NodeId d, uint32_t share, uint32_t shares) {
        if (shares == 1) {
          begin(id, s, d, r);
          return;
        }
        // Sprayed: an even share on every plane; the transfer completes with its last (complete()).
        if (share == 0) plane_parts_[id] = shares;
        TransferRequest part = r;
        part.size = Bytes{r.size.count() / shares + (share < r.size.count() % shares ? 1 : 0)};
        begin(id, s, d, part);
      });
}

void TransferBackend::keep_finished_records(bool keep) {
  if (keep == keep_history_) return;
  if (started_ != 0) {
    throw std::logic_error("keep_finished_records must be set before the first transfer starts");
  }
  if (!keep && !can_drop_records()) return;  // this backend reads transfers()[id] itself
  keep_history_ = keep;
}

TransferRecord& TransferBackend::record(TransferId id) {
  return keep_history_ ? records_[id] : live_records_[slot_of_[id]];
}

void TransferBackend::begin_staged(TransferId id) {
  const TransferRequest r = record(id).request;
  begin_on_planes(id, spec_.gpus[r.src_gpu].nic, spec_.gpus[r.dst_gpu].nic, r);
}

void TransferBackend::complete(TransferId id) {
  if (!plane_parts_.empty()) {
    if (const auto it = plane_parts_.find(id); it != plane_parts_.end()) {
      if (--it->second > 0) return;  // shares still on other planes
      plane_parts_.erase(it);
    }
  }
  if (staging_) {
    const TransferRequest& r = record(id).request;
    const uint32_t dst_host = spec_.endpoint(r.dst_gpu).host;
    if (spec_.endpoint(r.src_gpu).host != dst_host && r.size.count() > 0 &&
        staging_->receive(id, r.src_gpu, r.dst_gpu, r.connection, r.size.count())) {
      return;
    }
  }
  complete_now(id);
}

void TransferBackend::complete_now(TransferId id) {
  SIM_CHECK(slot_of_[id] != kNoSlot || keep_history_, "a transfer completed twice");
  TransferRecord& r = record(id);
  SIM_CHECK(!r.done, "a transfer completed twice");
  r.done = true;
  r.finish = sim_.now();
  if (const uint32_t slot = slot_of_[id]; slot != kNoSlot) {
    TransferCallback cb = std::move(callback_slots_[slot]);
    callback_slots_[slot] = nullptr;
    slot_of_[id] = kNoSlot;
    free_slots_.push_back(slot);
    // A copy: the callback may start transfers, which can reallocate the records or reuse the slot.
    const TransferRecord done = r;
    if (cb) cb(id, done);
  }
}

Time TransferBackend::least_propagation(uint32_t a, uint32_t b) const {
  if (own_link_delay_.empty()) {
    own_link_delay_.assign(spec_.nodes.size(), Time::zero());
    Time fabric = Time::max();
    for (const net::LinkSpec& l : spec_.links) {
      const Time delay = spec_.link_classes[l.link_class].delay;
      const bool a_switch = spec_.nodes[l.a].kind == net::NodeKind::Switch;
      const bool b_switch = spec_.nodes[l.b].kind == net::NodeKind::Switch;
      if (a_switch && b_switch) fabric = std::min(fabric, delay);
      if (!a_switch) own_link_delay_[l.a] = delay;
      if (!b_switch) own_link_delay_[l.b] = delay;
    }
    fabric_link_delay_ = fabric == Time::max() ? Time::zero() : fabric;
  }
  const net::GpuAttachment& ea = spec_.endpoint(a);
  const net::GpuAttachment& eb = spec_.endpoint(b);
  const bool nvlink = net::same_host(ea, eb);
  const net::NodeId from = nvlink ? ea.nvlink_port : ea.nic;
  const net::NodeId to = nvlink ? eb.nvlink_port : eb.nic;
  if (from == net::kNoNode || to == net::kNoNode) return Time::zero();
  Time delay = own_link_delay_[from] + own_link_delay_[to];
  if (!nvlink && spec_.attachment_of_nic[from] != spec_.attachment_of_nic[to]) {
    delay += fabric_link_delay_ + fabric_link_delay_;
  }
  return delay;
}

}  // namespace syncsim

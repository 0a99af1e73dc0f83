#include "sim/core/calendar_queue.hpp"

#include <algorithm>
#include <bit>
#include <utility>

namespace syncsim {

namespace {
constexpr std::size_t kArity = 4;
// Distinct times in a bucket up to which it is ordered by counting (order_current; more are
// sorted). The width adaptation aims at about three.
constexpr std::size_t kMaxInstants = 64;
// Buckets of up to this many keys are ordered by insertion (order_current; 8, 16 and 32 measured:
// 32 runs the fewest instructions on the reference packet runs).
constexpr std::size_t kInsertionSortKeys = 32;
// The least keys a bucket aims at (end_sample).
constexpr uint64_t kMinBucketKeys = 8;
}  // namespace

void CalendarQueue::push_elsewhere(int64_t bucket, Key k) {
  if (bucket < current_) {
    heap_push(early_, k);
    return;
  }
  if (bucket != current_) {
    heap_push(overflow_, k);  // push() takes the buckets of the ring ahead
    return;
  }
  // The current bucket stays ordered from head_ on; a new key usually goes last.
  if (head_ >= 1024 && head_ * 2 >= current_keys_.size()) {
    current_keys_.erase(current_keys_.begin(),
                        current_keys_.begin() + static_cast<std::ptrdiff_t>(head_));
    head_ = 0;
  }
  if (current_keys_.size() == head_ || current_keys_.back() < k) {
    current_keys_.push_back(k);
  } else if (current_keys_.size() - head_ <= kInsertionSortKeys) {
    // A handful ahead (a packet run's current bucket holds about eight; one key in five pushed into
    // it goes before the last): shifted up one by one, cheaper than a search and a memmove call.
    current_keys_.push_back(k);
    std::size_t i = current_keys_.size() - 1;
    while (i > head_ && k < current_keys_[i - 1]) {
      current_keys_[i] = current_keys_[i - 1];
      --i;
    }
    current_keys_[i] = k;
  } else {
    current_keys_.insert(
        std::upper_bound(current_keys_.begin() + static_cast<std::ptrdiff_t>(head_),
                         current_keys_.end(), k),
        k);
  }
}

void CalendarQueue::push_any_order(Key k) {
  const int64_t bucket = bucket_of(k);
  // The early heap, the overflow heap and the current bucket keep full order by themselves.
  if (bucket > current_ && static_cast<uint64_t>(bucket - current_) < kBuckets) {
    any_order_[slot_of(bucket)] = true;
  }
  push(k);
}

void CalendarQueue::file(Key k) {
  const int64_t bucket = bucket_of(k);
  if (static_cast<uint64_t>(bucket - current_) < kBuckets) {
    append(slot_of(bucket), k);
  } else {
    heap_push(overflow_, k);
  }
}

void CalendarQueue::add_chunk(std::size_t slot) {
  Bucket& b = buckets_[slot];
  uint32_t fresh;
  if (free_chunk_ != kNoChunk) {
    fresh = free_chunk_;
    free_chunk_ = chunks_[fresh].next;
  } else {
    fresh = static_cast<uint32_t>(chunks_.size());
    chunks_.emplace_back();
  }
  chunks_[fresh].next = kNoChunk;
  chunks_[fresh].count = 0;
  if (b.tail == kNoChunk) {
    b.head = fresh;
    occupied_[slot >> 6] |= uint64_t{1} << (slot & 63);
    occupied_words_ |= uint64_t{1} << (slot >> 6);
  } else {
    chunks_[b.tail].next = fresh;
  }
  b.tail = fresh;
}

void CalendarQueue::take_bucket(std::size_t slot, std::vector<Key>& out) {
  Bucket& b = buckets_[slot];
  for (uint32_t c = b.head; c != kNoChunk;) {
    Chunk& chunk = chunks_[c];
    out.insert(out.end(), chunk.keys.begin(), chunk.keys.begin() + chunk.count);
    const uint32_t next = chunk.next;
    chunk.next = free_chunk_;
    free_chunk_ = c;
    c = next;
  }
  b = Bucket{};
  occupied_[slot >> 6] &= ~(uint64_t{1} << (slot & 63));
  if (occupied_[slot >> 6] == 0) occupied_words_ &= ~(uint64_t{1} << (slot >> 6));
}

std::size_t CalendarQueue::occupied_from(std::size_t from) const {
  if (from >= kBuckets) return kBuckets;
  std::size_t word = from >> 6;
  const uint64_t bits = occupied_[word] & (~uint64_t{0} << (from & 63));
  if (bits != 0) return (word << 6) | static_cast<std::size_t>(std::countr_zero(bits));
  if (word + 1 == kWords) return kBuckets;
  const uint64_t words = occupied_words_ & (~uint64_t{0} << (word + 1));
  if (words == 0) return kBuckets;
  word = static_cast<std::size_t>(std::countr_zero(words));
  return (word << 6) | static_cast<std::size_t>(std::countr_zero(occupied_[word]));
}

void CalendarQueue::settle() {
  // The next occupied bucket in ring order, else the overflow's least key.
  const std::size_t current_slot = slot_of(current_);
  std::size_t next = occupied_from(current_slot + 1);
  if (next == kBuckets) next = occupied_from(0);
  if (next != kBuckets) {
    current_ += static_cast<int64_t>((next - current_slot) & kBucketMask);
  } else {
    current_ = bucket_of(overflow_.front());
  }
  // The window moved: bring in the overflow's keys that now fall inside it. They come out in
  // order, before any key is appended to the buckets they land in.
  while (!overflow_.empty() &&
         static_cast<uint64_t>(bucket_of(overflow_.front()) - current_) < kBuckets) {
    file(heap_pop(overflow_));
  }
  load_current();
}

void CalendarQueue::load_current() {
  current_keys_.clear();
  head_ = 0;
  const std::size_t slot = slot_of(current_);
  if (buckets_[slot].head == kNoChunk) return;
  take_bucket(slot, current_keys_);
  // Keys of one time pushed out of order (schedule_as_of) defeat the counting pass, not the
  // insertion sort that orders a handful (order_current).
  if (any_order_[slot] && current_keys_.size() > kInsertionSortKeys) {
    std::sort(current_keys_.begin(), current_keys_.end());
  } else {
    order_current();
  }
  any_order_[slot] = false;
}

void CalendarQueue::order_current() {
  std::vector<Key>& keys = current_keys_;
  const std::size_t n = keys.size();
  if (n < 2) return;
  if (n <= kInsertionSortKeys) {
    // Most buckets of a packet run hold a handful of keys, often in order already: an insertion
    // sort costs a compare per key then, where the counting pass below has a fixed cost per bucket.
    for (std::size_t i = 1; i < n; ++i) {
      const Key k = keys[i];
      std::size_t at = i;
      while (at > 0 && k < keys[at - 1]) {
        keys[at] = keys[at - 1];
        --at;
      }
      keys[at] = k;
    }
    return;
  }
  // One pass: each key's instant (numbered as they first appear; a bucket holds a few, and
  // consecutive keys often share one), the keys per instant, and whether the bucket is in order
  // already (one time's keys, or filed in order).
  instant_times_.clear();
  instant_counts_.clear();
  instant_of_key_.resize(n);
  instant_times_.push_back(time_of(keys[0]));
  instant_counts_.push_back(1);
  instant_of_key_[0] = 0;
  bool sorted = true;
  uint32_t last = 0;
  for (std::size_t i = 1; i < n; ++i) {
    const Key k = keys[i];
    sorted &= keys[i - 1] < k;
    const int64_t t = time_of(k);
    if (instant_times_[last] != t) {
      const auto m = static_cast<uint32_t>(instant_times_.size());
      uint32_t j = 0;
      while (j < m && instant_times_[j] != t) ++j;
      if (j == m) {
        if (m == kMaxInstants) {
          std::sort(keys.begin(), keys.end());
          return;
        }
        instant_times_.push_back(t);
        instant_counts_.push_back(0);
      }
      last = j;
    }
    ++instant_counts_[last];
    instant_of_key_[i] = static_cast<uint8_t>(last);
  }
  if (sorted) return;
  // The instants in time order (insertion sort: a handful), then each one's first place.
  const auto m = static_cast<uint32_t>(instant_times_.size());
  std::array<uint8_t, kMaxInstants> by_time{};
  for (uint32_t j = 0; j < m; ++j) {
    uint32_t at = j;
    while (at > 0 && instant_times_[by_time[at - 1]] > instant_times_[j]) {
      by_time[at] = by_time[at - 1];
      --at;
    }
    by_time[at] = static_cast<uint8_t>(j);
  }
  uint32_t offset = 0;
  for (uint32_t r = 0; r < m; ++r) offset += std::exchange(instant_counts_[by_time[r]], offset);
  // Stable: keys of one time keep the increasing order they were filed in.
  scratch_.resize(n);
  for (std::size_t i = 0; i < n; ++i) scratch_[instant_counts_[instant_of_key_[i]]++] = keys[i];
  keys.swap(scratch_);
}

void CalendarQueue::end_sample(int64_t time_ps) {
  const int64_t span = time_ps - sample_start_ps_;
  const uint64_t times = sample_times_;
  sample_pops_ = 0;
  sample_times_ = 0;
  sample_start_ps_ = time_ps;
  if (span <= 0 || times == 0) return;
  // About three distinct times per bucket at the rate just seen (keys of one time share a bucket
  // whatever its width), and at least kMinBucketKeys keys: where every event has a time of its own
  // (paced flows), three keys a bucket left a bucket's fixed cost on every key or two.
  const uint64_t width = std::max(static_cast<uint64_t>(span) / times * 3,
                                  static_cast<uint64_t>(span) * kMinBucketKeys / kSamplePops);
  const uint32_t target = width <= 1 ? 0u : static_cast<uint32_t>(std::bit_width(width)) - 1;
  const bool off_by_more_than_two = target > shift_ + 1 || target + 1 < shift_;
  if (off_by_more_than_two && size_ <= 4 * pops_since_refile_) refile(target, time_ps);
}

void CalendarQueue::drain(std::vector<Key>& out, int64_t now_ps) {
  out.insert(out.end(), current_keys_.begin() + static_cast<std::ptrdiff_t>(head_),
             current_keys_.end());
  current_keys_.clear();
  head_ = 0;
  for (std::size_t slot = occupied_from(0); slot != kBuckets; slot = occupied_from(slot + 1)) {
    take_bucket(slot, out);
  }
  any_order_.fill(false);
  out.insert(out.end(), overflow_.begin(), overflow_.end());
  overflow_.clear();
  out.insert(out.end(), early_.begin(), early_.end());
  early_.clear();
  size_ = 0;
  current_ = now_ps >> shift_;
}

void CalendarQueue::refile(uint32_t shift, int64_t now_ps) {
  std::vector<Key> all;
  all.swap(scratch_);
  all.clear();
  drain(all, now_ps);
  // Sorted, so that each bucket is filed in increasing order within a time (order_current).
  std::sort(all.begin(), all.end());
  shift_ = shift;
  current_ = now_ps >> shift_;
  for (const Key k : all) file(k);
  size_ = all.size();
  load_current();
  all.swap(scratch_);
  pops_since_refile_ = 0;
}

void CalendarQueue::heap_push(std::vector<Key>& heap, Key k) {
  heap.push_back(k);
  std::size_t i = heap.size() - 1;
  while (i > 0) {
    const std::size_t parent = (i - 1) / kArity;
    if (!(k < heap[parent])) break;
    heap[i] = heap[parent];
    i = parent;
  }
  heap[i] = k;
}

CalendarQueue::Key CalendarQueue::heap_pop(std::vector<Key>& heap) {
  const Key top = heap.front();
  const Key last = heap.back();
  heap.pop_back();
  const std::size_t n = heap.size();
  if (n == 0) return top;
  // Floyd's variant: walk the hole down to a leaf along the smallest children, then sift the last
  // element up from there; it usually belongs near the bottom, so this saves comparisons.
  std::size_t i = 0;
  for (;;) {
    const std::size_t first = i * kArity + 1;
    if (first + kArity <= n) {
      const Key* c = &heap[first];
      const std::size_t a = c[1] < c[0] ? 1 : 0;
      const std::size_t b = c[3] < c[2] ? 3 : 2;
      const std::size_t best = first + (c[b] < c[a] ? b : a);
      heap[i] = heap[best];
      i = best;
    } else if (first < n) {
      std::size_t best = first;
      for (std::size_t k = first + 1; k < n; ++k) {
        if (heap[k] < heap[best]) best = k;
      }
      heap[i] = heap[best];
      i = best;
    } else {
      break;
    }
  }
  while (i > 0) {
    const std::size_t parent = (i - 1) / kArity;
    if (!(last < heap[parent])) break;
    heap[i] = heap[parent];
    i = parent;
  }
  heap[i] = last;
  return top;
}

}  // namespace syncsim

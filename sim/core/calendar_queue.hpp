#pragma once
// A calendar queue of event keys (R. Brown, "Calendar queues: a fast O(1) priority queue
// implementation for the simulation event set problem", CACM 31(10), 1988).
//
// A key is an unsigned 128-bit number whose high 64 bits are a time in picoseconds; keys are
// distinct and their numeric order is the events' order. A ring of 4096 buckets, each 2^shift
// picoseconds wide, covers the near future; a key further ahead waits in a 4-ary min-heap (the
// overflow) until the ring reaches it. A bucket is a list of 15-key chunks from one pool (memory
// follows the pending count, not each bucket's high-water mark) until it becomes the current one;
// its keys are then ordered once into an array popped from the front, and a key pushed into the
// current bucket is inserted in order. A key pushed before the current bucket (after a look-ahead
// moved on) waits in a small heap of its own that is served first. So the queue yields exactly the
// keys' order and no result depends on the bucket width. A bitmap of occupied buckets finds the
// next one in a few word scans.
//
// The width adapts: every 8192 pops it is set near three distinct times' worth of the simulated
// time those pops spanned, and no less than eight pops' worth (packet runs: nanoseconds; step
// models: micro- to milliseconds; where every event has a time of its own, paced flows, three
// times would be three keys a bucket, and each bucket has a fixed cost), and
// pending keys are re-filed when it is off by more than a factor of two, at most once per
// `pending` pops (amortised O(1)).
//
// Ordering a bucket counts keys by time: within one time, keys are filed in increasing order (the
// caller pushes keys of one time in increasing order, the overflow hands its keys over sorted, and
// re-filing sorts first), so a stable counting sort on time gives the full order in O(n t) for
// t distinct times (a bucket of more than 64 is sorted). Synchronised flows put thousands of keys
// within a few dozen times into one bucket.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/core/units.hpp"

namespace syncsim {

class CalendarQueue {
 public:
  using Key = uint128;
  static int64_t time_of(Key k) { return static_cast<int64_t>(static_cast<uint64_t>(k >> 64)); }

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  // Adds a key no earlier than the last popped one. Keys of one time must come in increasing order.
  // Inline: one per scheduled event, and nearly all of them land in a bucket ahead of the current.
  void push(Key k) {
    ++size_;
    const int64_t bucket = bucket_of(k);
    // 1 <= bucket - current_ < kBuckets: a bucket of the ring ahead of the current one.
    if (static_cast<uint64_t>(bucket - current_) - 1 < kBuckets - 1) [[likely]] {
      append(slot_of(bucket), k);
      return;
    }
    push_elsewhere(bucket, k);
  }
  // The same for a key that may come before keys of its time pushed already (EventQueue's
  // schedule_as_of): its bucket is then ordered by a full sort.
  void push_any_order(Key k);
  // The least key; requires !empty(). May move the current bucket on (a look-ahead).
  Key least() {
    if (!early_.empty()) return early_.front();
    if (head_ == current_keys_.size()) settle();
    return current_keys_[head_];
  }
  // The key `ahead` places after the current bucket's front, if the bucket holds one (a hint for
  // prefetching: it need not be the next least key).
  const Key* upcoming(std::size_t ahead) const {
    return head_ + ahead < current_keys_.size() ? &current_keys_[head_ + ahead] : nullptr;
  }
  // Removes least().
  void pop() {
    --size_;
    if (!early_.empty()) {
      note_pop(time_of(heap_pop(early_)));
      return;
    }
    const int64_t time_ps = time_of(current_keys_[head_]);
    if (++head_ == current_keys_.size()) {
      current_keys_.clear();
      head_ = 0;
    }
    note_pop(time_ps);
  }
  // least() and pop() in one, for the dispatch loop: removes the least key into `k` if its time is
  // at most `until_ps`; false (nothing removed) when it is later or the queue is empty.
  bool pop_until(int64_t until_ps, Key& k) {
    if (size_ == 0) return false;
    if (!early_.empty()) [[unlikely]] {
      if (time_of(early_.front()) > until_ps) return false;
      k = early_.front();
      pop();
      return true;
    }
    if (head_ == current_keys_.size()) settle();
    k = current_keys_[head_];
    const int64_t time_ps = time_of(k);
    if (time_ps > until_ps) return false;
    --size_;
    if (++head_ == current_keys_.size()) {
      current_keys_.clear();
      head_ = 0;
    }
    note_pop(time_ps);
    return true;
  }
  // Moves every key to `out` (in no particular order) and restarts at time `now_ps`.
  void drain(std::vector<Key>& out, int64_t now_ps);
  // The bucket width as log2 of picoseconds.
  uint32_t bucket_width_log2() const { return shift_; }

 private:
  // Pops per sample of the rate that sets the bucket width.
  static constexpr uint64_t kSamplePops = 8192;
  static constexpr std::size_t kBuckets = 4096;
  static constexpr std::size_t kBucketMask = kBuckets - 1;
  static constexpr std::size_t kWords = kBuckets / 64;
  static constexpr uint32_t kNoChunk = UINT32_MAX;
  static constexpr uint32_t kChunkKeys = 15;
  struct Chunk {
    std::array<Key, kChunkKeys> keys;
    uint32_t next = kNoChunk;
    uint32_t count = 0;
  };
  struct Bucket {
    uint32_t head = kNoChunk;
    uint32_t tail = kNoChunk;
  };

  int64_t bucket_of(Key k) const { return time_of(k) >> shift_; }
  static std::size_t slot_of(int64_t bucket) {
    return static_cast<std::size_t>(bucket) & kBucketMask;
  }
  // push() for a key of the current bucket, of one before it, or beyond the ring.
  void push_elsewhere(int64_t bucket, Key k);
  // Puts a key in its bucket (unordered) or the overflow.
  void file(Key k);
  void append(std::size_t slot, Key k) {
    Bucket& b = buckets_[slot];
    if (b.tail == kNoChunk || chunks_[b.tail].count == kChunkKeys) [[unlikely]]
      add_chunk(slot);
    Chunk& c = chunks_[b.tail];
    c.keys[c.count++] = k;
  }
  // Gives a bucket a fresh chunk at its tail (its first, or after a full one).
  void add_chunk(std::size_t slot);
  // Moves a bucket's keys to `out` and frees its chunks.
  void take_bucket(std::size_t slot, std::vector<Key>& out);
  // First occupied slot at or after `from` (no wrap-around), or kBuckets.
  std::size_t occupied_from(std::size_t from) const;
  // The current bucket is drained: moves on to the next occupied bucket or to the overflow's top
  // and loads it into current_keys_.
  void settle();
  // Takes the current bucket's keys into current_keys_, ordered.
  void load_current();
  void order_current();
  // Counts a pop at `time_ps`; a sample's end may re-file at a better width.
  void note_pop(int64_t time_ps) {
    ++pops_since_refile_;
    if (time_ps != last_pop_ps_) ++sample_times_;
    last_pop_ps_ = time_ps;
    if (++sample_pops_ == kSamplePops) end_sample(time_ps);
  }
  void end_sample(int64_t time_ps);
  // Re-files every key at bucket width 2^shift, starting at time `now_ps`.
  void refile(uint32_t shift, int64_t now_ps);
  static void heap_push(std::vector<Key>& heap, Key k);
  static Key heap_pop(std::vector<Key>& heap);

  std::array<Bucket, kBuckets> buckets_{};
  std::vector<Chunk> chunks_;
  uint32_t free_chunk_ = kNoChunk;           // free list through Chunk::next
  std::array<uint64_t, kWords> occupied_{};  // bit s: bucket slot s holds keys
  uint64_t occupied_words_ = 0;              // bit w: occupied_[w] != 0
  uint32_t shift_ = 10;                      // bucket width 2^shift ps
  int64_t current_ = 0;                      // absolute number of the current bucket
  std::vector<Key> current_keys_;            // its keys, ordered from head_ on
  std::array<bool, kBuckets> any_order_{};   // a bucket holds keys pushed out of order
  std::size_t head_ = 0;
  std::vector<Key> overflow_;  // 4-ary min-heap of keys at or beyond current_ + kBuckets
  std::vector<Key> early_;     // 4-ary min-heap of keys before the current bucket
  std::size_t size_ = 0;
  // Width adaptation: pops in this sample, distinct times among them, the time the sample began and
  // of the last pop; pops since the last re-filing (bounds its amortised cost).
  uint64_t sample_pops_ = 0;
  uint64_t sample_times_ = 0;
  int64_t sample_start_ps_ = 0;
  int64_t last_pop_ps_ = 0;
  uint64_t pops_since_refile_ = 0;
  std::vector<Key> scratch_;
  std::vector<int64_t> instant_times_;    // order_current's distinct times, as they appear
  std::vector<uint32_t> instant_counts_;  // and their counts, then offsets
  std::vector<uint8_t> instant_of_key_;   // each current key's index into those
};

}  // namespace syncsim

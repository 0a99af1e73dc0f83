#pragma once
// A binary min-heap of (key, id) with at most one entry per id, which can change or drop an id's
// entry in place. Ties in key break by id, so the order in which entries leave is a function of
// the entries alone, not of the order they were set in. Ids are small dense integers (slots).
//
// Why not std::push_heap with stale entries: a fluid flow's projected finish changes whenever its
// rate does, and a heap that only grows keeps every superseded projection until it surfaces; in a
// DDP step at flow level popping those cost 6.7% of the instructions (callgrind, 64 GPUs).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace syncsim {

class IndexedMinHeap {
 public:
  struct Entry {
    int64_t key;
    uint32_t id;
  };

  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const Entry& top() const { return heap_.front(); }
  bool contains(uint32_t id) const { return id < pos_.size() && pos_[id] != kAbsent; }

  // Sets id's key, adding its entry if it has none.
  void set(uint32_t id, int64_t key) {
    if (id >= pos_.size()) pos_.resize(id + 1, kAbsent);
    uint32_t i = pos_[id];
    if (i == kAbsent) {
      i = static_cast<uint32_t>(heap_.size());
      heap_.push_back(Entry{key, id});
      pos_[id] = i;
      sift_up(i);
      return;
    }
    const int64_t old = heap_[i].key;
    heap_[i].key = key;
    if (key < old) {
      sift_up(i);
    } else {
      sift_down(i);
    }
  }

  // Drops id's entry, if it has one.
  void erase(uint32_t id) {
    if (!contains(id)) return;
    const uint32_t i = pos_[id];
    pos_[id] = kAbsent;
    const Entry last = heap_.back();
    heap_.pop_back();
    if (i == heap_.size()) return;
    heap_[i] = last;
    pos_[last.id] = i;
    if (i > 0 && less(heap_[i], heap_[(i - 1) / 2])) {
      sift_up(i);
    } else {
      sift_down(i);
    }
  }

  void pop() { erase(heap_.front().id); }

 private:
  static constexpr uint32_t kAbsent = UINT32_MAX;
  static bool less(const Entry& a, const Entry& b) {
    return a.key < b.key || (a.key == b.key && a.id < b.id);
  }
  void place(uint32_t i, const Entry& e) {
    heap_[i] = e;
    pos_[e.id] = i;
  }
  void sift_up(uint32_t i) {
    const Entry e = heap_[i];
    while (i > 0) {
      const uint32_t parent = (i - 1) / 2;
      if (!less(e, heap_[parent])) break;
      place(i, heap_[parent]);
      i = parent;
    }
    place(i, e);
  }
  void sift_down(uint32_t i) {
    const Entry e = heap_[i];
    const auto n = static_cast<uint32_t>(heap_.size());
    for (;;) {
      uint32_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && less(heap_[child + 1], heap_[child])) ++child;
      if (!less(heap_[child], e)) break;
      place(i, heap_[child]);
      i = child;
    }
    place(i, e);
  }

  std::vector<Entry> heap_;
  std::vector<uint32_t> pos_;  // by id: its entry's index in heap_, kAbsent when none
};

}  // namespace syncsim

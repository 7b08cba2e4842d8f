// A small cache that keeps the most recently used entries: what a CUDA inference plan keeps of the
// graphs it captured, one per input address it was run on (graphs.hpp). Plain C++ (tested on the
// CPU); internal to cuda/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace labpose::cuda {

template <typename Key, typename Value>
class RecentlyUsed {
 public:
  explicit RecentlyUsed(std::size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {
    entries_.reserve(capacity_);
  }

  /// The value under `key`, now the most recently used, or null. Valid until the next insert.
  Value* find(const Key& key) {
    for (Entry& entry : entries_) {
      if (entry.key != key) continue;
      entry.used = ++clock_;
      return &entry.value;
    }
    return nullptr;
  }

  /// Keeps `value` under `key` (a key not held yet) as the most recently used; the least recently
  /// used entry gives its place when the cache is full, and evictions() counts it.
  Value& insert(const Key& key, Value value) {
    if (entries_.size() < capacity_) {
      entries_.push_back(Entry{key, std::move(value), ++clock_});
      return entries_.back().value;
    }
    std::size_t oldest = 0;
    for (std::size_t k = 1; k < entries_.size(); ++k) {
      if (entries_[k].used < entries_[oldest].used) oldest = k;
    }
    ++evictions_;
    Entry& entry = entries_[oldest];
    entry.key = key;
    entry.value = std::move(value);
    entry.used = ++clock_;
    return entry.value;
  }

  std::size_t size() const { return entries_.size(); }
  std::size_t evictions() const { return evictions_; }
  void clear() { entries_.clear(); }

 private:
  struct Entry {
    Key key;
    Value value;
    std::uint64_t used;  // the clock of its last use
  };
  std::size_t capacity_;
  std::size_t evictions_ = 0;
  std::uint64_t clock_ = 0;
  std::vector<Entry> entries_;
};

}  // namespace labpose::cuda

// The bookkeeping of the instantiated-graph cache: keys, most-recently-used order, eviction.
// Holds opaque shared handles so that it can be tested without a driver.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kjit::cuda {

/// What identifies one instantiated graph: the captured work, the buffers it touches, and the
/// device it was instantiated on (a graph belongs to one context).
struct GraphLruKey {
  std::string function;
  std::vector<const void*> buffers;
  int device = 0;

  bool operator<(const GraphLruKey& o) const {
    if (device != o.device) return device < o.device;
    if (function != o.function) return function < o.function;
    return buffers < o.buffers;
  }
};

/// A map from keys to handles that keeps at most `capacity` entries, dropping the least
/// recently used first. Not thread-safe: the owner locks. Evicted handles are returned rather
/// than destroyed here, so that the owner can release them after unlocking.
class GraphLru {
 public:
  using Handle = std::shared_ptr<void>;

  explicit GraphLru(size_t capacity) : capacity_(capacity) {}

  /// The handle of `key`, now the most recently used; null on a miss.
  Handle find(const GraphLruKey& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->second;
  }

  /// Stores `handle` for `key` as the most recently used (replacing any entry of `key`);
  /// returns what no longer fits.
  std::vector<Handle> insert(const GraphLruKey& key, Handle handle) {
    std::vector<Handle> dropped;
    auto it = index_.find(key);
    if (it != index_.end()) {
      dropped.push_back(std::move(it->second->second));
      order_.erase(it->second);
      index_.erase(it);
    }
    order_.emplace_front(key, std::move(handle));
    index_[key] = order_.begin();
    trim(dropped);
    return dropped;
  }

  /// Changes the bound (0 keeps nothing); returns what no longer fits.
  std::vector<Handle> set_capacity(size_t capacity) {
    capacity_ = capacity;
    std::vector<Handle> dropped;
    trim(dropped);
    return dropped;
  }

  /// Drops every entry; returns them.
  std::vector<Handle> clear() {
    std::vector<Handle> dropped;
    for (auto& entry : order_) dropped.push_back(std::move(entry.second));
    order_.clear();
    index_.clear();
    return dropped;
  }

  size_t size() const { return order_.size(); }
  size_t capacity() const { return capacity_; }
  uint64_t evictions() const { return evictions_; }
  /// Keys from most to least recently used.
  std::vector<GraphLruKey> keys() const {
    std::vector<GraphLruKey> out;
    for (auto& entry : order_) out.push_back(entry.first);
    return out;
  }

 private:
  void trim(std::vector<Handle>& dropped) {
    while (order_.size() > capacity_) {
      dropped.push_back(std::move(order_.back().second));
      index_.erase(order_.back().first);
      order_.pop_back();
      ++evictions_;
    }
  }

  using Entry = std::pair<GraphLruKey, Handle>;
  size_t capacity_;
  uint64_t evictions_ = 0;
  std::list<Entry> order_;
  std::map<GraphLruKey, std::list<Entry>::iterator> index_;
};

}  // namespace kjit::cuda

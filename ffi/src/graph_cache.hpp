// An LRU cache of captured CUDA graphs keyed by a call's buffer addresses and static values
// (GraphMode::Kjit). The graph handle is opaque here; its owner supplies the destructor.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <vector>

namespace kjit::ffi::detail {

/// What identifies one capture: every array address, then the static values' bytes.
using GraphKey = std::vector<uint64_t>;

class GraphCache {
 public:
  /// `destroy` releases a graph handle when it is evicted or cleared.
  explicit GraphCache(std::function<void(void*)> destroy, int max = 32) : destroy_(std::move(destroy)), max_(max) {}
  ~GraphCache() { clear(); }
  GraphCache(const GraphCache&) = delete;
  GraphCache& operator=(const GraphCache&) = delete;

  /// The graph for `key` (marked most recently used), or nullptr.
  void* find(const GraphKey& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->second;
  }
  /// Adds `graph` for `key` (replacing an older one), evicting the least recently used ones
  /// beyond the bound.
  void insert(const GraphKey& key, void* graph) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = index_.find(key);
    if (it != index_.end()) {
      destroy_(it->second->second);
      order_.erase(it->second);
      index_.erase(it);
    }
    order_.emplace_front(key, graph);
    index_[key] = order_.begin();
    trim();
  }
  size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return order_.size();
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& e : order_) destroy_(e.second);
    order_.clear();
    index_.clear();
  }
  /// Changes the bound (0 = unbounded), evicting as needed.
  void set_max(int max) {
    std::lock_guard<std::mutex> lock(mutex_);
    max_ = max;
    trim();
  }
  int max() const { return max_; }

 private:
  using Entry = std::pair<GraphKey, void*>;
  void trim() {
    while (max_ > 0 && int(order_.size()) > max_) {
      destroy_(order_.back().second);
      index_.erase(order_.back().first);
      order_.pop_back();
    }
  }
  std::function<void(void*)> destroy_;
  int max_;
  mutable std::mutex mutex_;
  std::list<Entry> order_;  // most recently used first
  std::map<GraphKey, std::list<Entry>::iterator> index_;
};

}  // namespace kjit::ffi::detail

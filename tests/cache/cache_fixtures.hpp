// Helpers for the cache tests: caches in temporary folders whose warnings are collected.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kjit/compiler/build.hpp"
#include "kjit/compiler/cache.hpp"
#include "module_fixtures.hpp"
#include "test_support.hpp"

namespace kjit::test {

/// Collects a cache's warnings (thread-safe).
class WarningLog {
 public:
  std::function<void(const std::string&)> sink() {
    return [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.push_back(line);
    };
  }
  size_t count() const {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_.size();
  }
  std::string all() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::string s;
    for (const std::string& l : lines_) s += l + "\n";
    return s;
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mu_);
    lines_.clear();
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

/// A configuration for a cache in `dir` whose warnings go to `log`.
inline compiler::CacheConfig cache_config(const std::string& dir, WarningLog& log) {
  compiler::CacheConfig c;
  c.dir = dir;
  c.on_warning = log.sink();
  return c;
}

/// Path of the helper program (see cache_worker.cpp).
inline std::string worker_path() { return KJIT_CACHE_WORKER; }

}  // namespace kjit::test

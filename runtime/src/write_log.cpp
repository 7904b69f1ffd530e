// The table of watched array memory: a write stamp and the last writer per address, kept only
// while a tape has reads of that address on record.
#include "write_log.hpp"

#include <mutex>
#include <unordered_map>

namespace kjit::detail {

namespace {

struct Entry {
  uint64_t life = 0;
  uint64_t stamp = 0;
  long watchers = 0;
  std::string writer;
};

struct Table {
  std::mutex mutex;
  std::unordered_map<const void*, Entry> entries;
  uint64_t next_life = 1;
  uint64_t next_stamp = 1;
};

Table& table() {
  static Table* t = new Table;  // outlives every tape (static destruction order)
  return *t;
}

std::atomic<size_t> watched_count{0};

}  // namespace

bool any_watched() noexcept { return watched_count.load(std::memory_order_relaxed) != 0; }

WatchedRead watch(const void* data) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto [it, fresh] = t.entries.try_emplace(data);
  if (fresh) {
    it->second.life = t.next_life++;
    watched_count.store(t.entries.size(), std::memory_order_relaxed);
  }
  ++it->second.watchers;
  return {data, it->second.life, it->second.stamp};
}

void unwatch(const WatchedRead& read) {
  if (!read.data) return;  // handed over (a checkpoint takes its probe's reads)
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.entries.find(read.data);
  if (it == t.entries.end() || it->second.life != read.life) return;  // released meanwhile
  if (--it->second.watchers == 0) {
    t.entries.erase(it);
    watched_count.store(t.entries.size(), std::memory_order_relaxed);
  }
}

ReadState read_state(const WatchedRead& read, std::string* writer) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.entries.find(read.data);
  if (it == t.entries.end() || it->second.life != read.life) return ReadState::Released;
  if (it->second.stamp == read.stamp) return ReadState::Unchanged;
  if (writer) *writer = it->second.writer;
  return ReadState::Written;
}

void note_watched_write(const void* data, DescribeWrite describe, const void* context) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.entries.find(data);
  if (it == t.entries.end()) return;
  it->second.stamp = t.next_stamp++;
  it->second.writer = describe(context);
}

void note_release(const void* data) noexcept {
  if (!any_watched()) return;
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  if (t.entries.erase(data)) watched_count.store(t.entries.size(), std::memory_order_relaxed);
}

}  // namespace kjit::detail

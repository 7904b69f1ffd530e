// The table of watched array memory: a write stamp and the last writer per watched read (an
// array's elements), kept only while a tape has reads of them on record.
#include "write_log.hpp"

#include <map>
#include <mutex>

namespace kjit::detail {

namespace {

struct Entry {
  MemoryFootprint read;
  uint64_t life = 0;
  uint64_t stamp = 0;
  long watchers = 0;
  std::string writer;
};

/// The entries' count, read by every launch (any_watched): a plain atomic, no static guard.
std::atomic<size_t> watched_count{0};

/// Entries by their first byte; a write looks at those starting within `widest` bytes below
/// its own end (no entry spans more).
struct Table {
  std::mutex mutex;
  std::multimap<intptr_t, Entry> entries;
  intptr_t widest = 0;
  uint64_t next_life = 1;
  uint64_t next_stamp = 1;

  std::multimap<intptr_t, Entry>::iterator find(const WatchedRead& r) {
    auto [it, stop] = entries.equal_range(reinterpret_cast<intptr_t>(r.data));
    for (; it != stop; ++it)
      if (it->second.life == r.life) return it;
    return entries.end();
  }
  void erase(std::multimap<intptr_t, Entry>::iterator it) {
    entries.erase(it);
    if (entries.empty()) widest = 0;
    watched_count.store(entries.size(), std::memory_order_relaxed);
  }
};

Table& table() {
  static Table* t = new Table;  // outlives every tape (static destruction order)
  return *t;
}

}  // namespace

bool any_watched() noexcept { return watched_count.load(std::memory_order_relaxed) != 0; }

WatchedRead watch(const MemoryFootprint& read) {
  if (read.empty()) return {};
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto [it, stop] = t.entries.equal_range(read.begin);
  while (it != stop && !it->second.read.same(read)) ++it;
  if (it == stop) {
    it = t.entries.emplace(read.begin, Entry{read, t.next_life++, 0, 0, {}});
    t.widest = std::max(t.widest, read.end - read.begin);
    watched_count.store(t.entries.size(), std::memory_order_relaxed);
  }
  ++it->second.watchers;
  return {reinterpret_cast<const void*>(read.begin), it->second.life, it->second.stamp};
}

void unwatch(const WatchedRead& read) {
  if (!read.data) return;  // handed over (a checkpoint takes its probe's reads), or no elements
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.find(read);
  if (it == t.entries.end()) return;  // released meanwhile
  if (--it->second.watchers == 0) t.erase(it);
}

ReadState read_state(const WatchedRead& read, std::string* writer) {
  if (!read.data) return ReadState::Unchanged;
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.find(read);
  if (it == t.entries.end()) return ReadState::Released;
  if (it->second.stamp == read.stamp) return ReadState::Unchanged;
  if (writer) *writer = it->second.writer;
  return ReadState::Written;
}

void note_watched_write(const MemoryFootprint& written, DescribeWrite describe, const void* context) {
  if (written.empty()) return;
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  std::string who;
  for (auto it = t.entries.lower_bound(written.begin - t.widest); it != t.entries.end() && it->first < written.end; ++it) {
    if (!shares_memory(it->second.read, written)) continue;
    if (who.empty()) who = describe(context);
    it->second.stamp = t.next_stamp++;
    it->second.writer = who;
  }
}

void note_release(const void* data, size_t bytes) noexcept {
  if (!any_watched()) return;
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  const intptr_t begin = reinterpret_cast<intptr_t>(data), end = begin + intptr_t(bytes ? bytes : 1);
  for (auto it = t.entries.lower_bound(begin); it != t.entries.end() && it->first < end;)
    t.erase(it++);
}

}  // namespace kjit::detail

// The memory tracker: array allocations and frees per device and per scope path, peaks, and
// the report Warp's print_memory_report prints.
#include "kjit/runtime/memory_tracking.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "kjit/error.hpp"
#include "memory_tracker.hpp"

namespace kjit {

namespace detail {
std::atomic<bool> g_memory_tracking{false};
}  // namespace detail

namespace {

/// Devices as the report orders them: cuda:0, cuda:1, ..., then the cpu.
int device_key(const Device& device) { return device.is_cpu() ? INT_MAX : device.ordinal(); }
std::string device_name(int key) { return key == INT_MAX ? "cpu" : "cuda:" + std::to_string(key); }

struct Record {
  size_t bytes;
  int device;
  std::string what;
  std::string scope;
  uint64_t sequence;
};

struct Totals {
  size_t allocations = 0, allocated_bytes = 0, peak_bytes = 0, live_allocations = 0, live_bytes = 0;
  void add(size_t bytes) {
    ++allocations;
    allocated_bytes += bytes;
    ++live_allocations;
    live_bytes += bytes;
    peak_bytes = std::max(peak_bytes, live_bytes);
  }
  void remove(size_t bytes) {
    --live_allocations;
    live_bytes -= bytes;
  }
};

struct Tracker {
  std::mutex mutex;
  std::unordered_map<void*, Record> live;
  Totals all;
  std::map<int, Totals> devices;
  std::map<std::pair<std::string, int>, std::pair<size_t, size_t>> scopes;  // (count, bytes)
  uint64_t next_sequence = 0;

  void forget(std::unordered_map<void*, Record>::iterator it) {
    all.remove(it->second.bytes);
    devices[it->second.device].remove(it->second.bytes);
    live.erase(it);
  }
};

/// Never destroyed: arrays in static objects are freed after this file's statics would be.
Tracker& tracker() {
  static Tracker* const t = new Tracker;
  return *t;
}

/// This thread's open ScopedMemoryTrackers, outermost first (Warp's scopes are per thread too).
thread_local std::vector<std::string> t_scopes;

std::string scope_path() {
  std::string path;
  for (const std::string& s : t_scopes) path += (path.empty() ? "" : "/") + s;
  return path;
}

const bool g_tracking_from_environment = [] {
  const char* v = std::getenv("KJIT_TRACK_MEMORY");
  if (v && *v && std::strcmp(v, "0") != 0) detail::g_memory_tracking.store(true);
  return true;
}();

/// Bytes as Warp writes them: binary units, two decimals.
std::string bytes_text(size_t bytes) {
  const char* units[] = {"GB", "MB", "KB"};
  const int shifts[] = {30, 20, 10};
  char buf[64];
  for (int u = 0; u < 3; ++u) {
    if (bytes >= (size_t(1) << shifts[u])) {
      std::snprintf(buf, sizeof buf, "%.2f %s", double(bytes) / double(size_t(1) << shifts[u]), units[u]);
      return buf;
    }
  }
  return std::to_string(bytes) + " B";
}

/// A device's name in the report's first column.
std::string column(const std::string& name) { return "    " + name + std::string(name.size() < 17 ? 17 - name.size() : 1, ' '); }

}  // namespace

namespace detail {

void record_allocation(void* ptr, size_t bytes, const Device& device, std::string what) {
  Record record{bytes, device_key(device), std::move(what), scope_path(), 0};
  Tracker& t = tracker();
  std::lock_guard<std::mutex> lock(t.mutex);
  record.sequence = t.next_sequence++;
  auto stale = t.live.find(ptr);  // a free that raced with clear_memory_tracking
  if (stale != t.live.end()) t.forget(stale);
  t.all.add(bytes);
  t.devices[record.device].add(bytes);
  if (!record.scope.empty()) {
    auto& s = t.scopes[{record.scope, record.device}];
    ++s.first;
    s.second += bytes;
  }
  t.live.emplace(ptr, std::move(record));
}

void record_free(void* ptr) noexcept {
  Tracker& t = tracker();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.live.find(ptr);
  if (it != t.live.end()) t.forget(it);  // not there: freed after clear_memory_tracking
}

}  // namespace detail

void set_memory_tracking(bool on) { detail::g_memory_tracking.store(on, std::memory_order_relaxed); }

bool memory_tracking() { return detail::memory_tracking_on(); }

void clear_memory_tracking() {
  Tracker& t = tracker();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.live.clear();
  t.all = Totals();
  t.devices.clear();
  t.scopes.clear();
  t.next_sequence = 0;
}

MemoryReport memory_report() {
  Tracker& t = tracker();
  std::lock_guard<std::mutex> lock(t.mutex);
  MemoryReport r;
  r.allocations = t.all.allocations;
  r.allocated_bytes = t.all.allocated_bytes;
  r.peak_bytes = t.all.peak_bytes;
  r.live_allocations = t.all.live_allocations;
  r.live_bytes = t.all.live_bytes;
  for (const auto& [key, d] : t.devices)
    r.devices.push_back({device_name(key), d.allocations, d.allocated_bytes, d.peak_bytes, d.live_allocations, d.live_bytes});
  for (const auto& [key, s] : t.scopes) r.scopes.push_back({key.first, device_name(key.second), s.first, s.second});
  std::vector<std::pair<int, const Record*>> live;
  for (const auto& entry : t.live) live.emplace_back(entry.second.device, &entry.second);
  std::sort(live.begin(), live.end(), [](const auto& a, const auto& b) {
    if (a.second->bytes != b.second->bytes) return a.second->bytes > b.second->bytes;
    return a.second->sequence < b.second->sequence;
  });
  for (const auto& [key, rec] : live) r.live.push_back({device_name(key), rec->bytes, rec->what, rec->scope, rec->sequence});
  return r;
}

std::string MemoryReport::text(size_t max_items) const {
  std::string s = "Allocation Tracking Report\n  Total allocations:\n";
  for (const DeviceMemoryUsage& d : devices)
    s += column(d.device) + std::to_string(d.allocations) + " (" + bytes_text(d.allocated_bytes) + ")\n";
  s += "  Peak usage:\n";
  for (const DeviceMemoryUsage& d : devices) s += column(d.device) + bytes_text(d.peak_bytes) + "\n";
  s += "  Live allocations:\n";
  for (const DeviceMemoryUsage& d : devices)
    if (d.live_allocations) s += column(d.device) + std::to_string(d.live_allocations) + " (" + bytes_text(d.live_bytes) + ")\n";
  if (live_allocations == 0) s += "    (none)\n";
  if (!scopes.empty()) {
    s += "\n  Scope breakdown:\n";
    for (size_t i = 0; i < scopes.size(); ++i) {
      if (i == 0 || scopes[i].scope != scopes[i - 1].scope) s += "    " + scopes[i].scope + ":\n";
      s += "      " + scopes[i].device + ": " + std::to_string(scopes[i].allocations) + " allocs, " +
           bytes_text(scopes[i].bytes) + "\n";
    }
  }
  for (const DeviceMemoryUsage& d : devices) {
    if (!d.live_allocations) continue;
    s += "\n  Live " + d.device + " allocations by size (largest first) (up to " + std::to_string(max_items) + "):\n";
    size_t shown = 0;
    for (const LiveAllocation& a : live) {
      if (a.device != d.device) continue;
      if (shown++ == max_items) break;
      s += "    " + bytes_text(a.bytes) + " : " + a.device + " : " + a.what + (a.scope.empty() ? "" : " : " + a.scope) + "\n";
    }
  }
  return s;
}

void print_memory_report(size_t max_items) {
  if (!memory_tracking())
    throw Error(ErrorKind::User, "print_memory_report: memory tracking is off; call kjit::set_memory_tracking(true), "
                                 "set KJIT_TRACK_MEMORY=1 or open a kjit::ScopedMemoryTracker first");
  std::fputs(memory_report().text(max_items).c_str(), stdout);
}

ScopedMemoryTracker::ScopedMemoryTracker(std::string name, bool print_at_end)
    : started_recording_(!memory_tracking()), print_at_end_(print_at_end) {
  t_scopes.push_back(std::move(name));
  if (started_recording_) set_memory_tracking(true);
}

ScopedMemoryTracker::~ScopedMemoryTracker() {
  if (!t_scopes.empty()) t_scopes.pop_back();
  if (print_at_end_) {
    try {
      print();
    } catch (...) {  // a destructor: printing is best effort
    }
  }
  if (started_recording_) set_memory_tracking(false);
}

void ScopedMemoryTracker::print(size_t max_items) const { std::fputs(memory_report().text(max_items).c_str(), stdout); }

}  // namespace kjit

// kjit/runtime/memory_tracking.hpp — a record of array allocations per device and per named
// scope: Warp's config.track_memory, print_memory_report and ScopedMemoryTracker.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kjit {

/// Starts or stops recording array allocations (data and gradient buffers, on every device).
/// KJIT_TRACK_MEMORY=1 starts it when kjit loads. Off, an allocation costs one relaxed atomic
/// load more. An allocation recorded stays recorded until it is freed, whatever the setting.
void set_memory_tracking(bool on);
/// Whether allocations are being recorded.
bool memory_tracking();
/// Forgets everything recorded (Warp's ScopedMemoryTracker.clear): counts, peaks, scopes and
/// the live allocations, whose frees are then not counted.
void clear_memory_tracking();

/// One device's allocations since recording started (or was cleared).
struct DeviceMemoryUsage {
  std::string device;            ///< "cpu", "cuda:0", ...
  size_t allocations = 0;        ///< allocations made
  size_t allocated_bytes = 0;    ///< bytes of those
  size_t peak_bytes = 0;         ///< most bytes live at once
  size_t live_allocations = 0;   ///< not freed yet
  size_t live_bytes = 0;
};

/// The allocations made inside one scope path ("run/init") on one device.
struct ScopeMemoryUsage {
  std::string scope;
  std::string device;
  size_t allocations = 0;
  size_t bytes = 0;
};

/// An allocation not freed yet.
struct LiveAllocation {
  std::string device;
  size_t bytes = 0;
  std::string what;   ///< "array[vec3f, 200000]", "gradient of array[float32, (4, 4)]"
  std::string scope;  ///< the scope path it was made in ("" outside every scope)
  uint64_t sequence = 0;  ///< the order of allocation
};

/// What has been recorded, all devices together and per device.
struct MemoryReport {
  size_t allocations = 0;
  size_t allocated_bytes = 0;
  size_t peak_bytes = 0;  ///< most bytes live at once on all devices together
  size_t live_allocations = 0;
  size_t live_bytes = 0;
  std::vector<DeviceMemoryUsage> devices;  ///< cuda:0, cuda:1, ..., then cpu: those used
  std::vector<ScopeMemoryUsage> scopes;    ///< by scope path, then device
  std::vector<LiveAllocation> live;        ///< largest first, then oldest first
  /// The report as Warp prints it, listing up to `max_items` live allocations per device.
  std::string text(size_t max_items = 10) const;
};

/// A snapshot of what has been recorded.
MemoryReport memory_report();
/// Prints memory_report().text() to stdout (Warp's print_memory_report); a User error when
/// nothing is being recorded.
void print_memory_report(size_t max_items = 10);

/// Records a scope's allocations under `name`, nested in this thread's enclosing trackers
/// ("run/init"); starts recording for its lifetime when it was off. Prints the report at its
/// end when `print_at_end` (Warp's default).
class ScopedMemoryTracker {
 public:
  explicit ScopedMemoryTracker(std::string name, bool print_at_end = true);
  ~ScopedMemoryTracker();
  ScopedMemoryTracker(const ScopedMemoryTracker&) = delete;
  ScopedMemoryTracker& operator=(const ScopedMemoryTracker&) = delete;
  /// memory_report(): every allocation recorded, inside this scope and out.
  MemoryReport report() const { return memory_report(); }
  /// Prints the report to stdout.
  void print(size_t max_items = 10) const;
  /// clear_memory_tracking(), keeping this scope open.
  void clear() { clear_memory_tracking(); }

 private:
  bool started_recording_;
  bool print_at_end_;
};

}  // namespace kjit

// The memory tracker's side of allocations (internal): memory_tracking.cpp records, the array
// allocator reports.
#pragma once

#include <atomic>
#include <cstddef>
#include <string>

#include "kjit/runtime/device.hpp"

namespace kjit::detail {

/// Whether allocations are recorded: read once per allocation, relaxed (a stale value only
/// means one allocation more or less recorded around a switch).
extern std::atomic<bool> g_memory_tracking;
inline bool memory_tracking_on() noexcept { return g_memory_tracking.load(std::memory_order_relaxed); }

/// Records an allocation in this thread's scope path.
void record_allocation(void* ptr, size_t bytes, const Device& device, std::string what);
/// Records the free of a recorded allocation (before the memory goes back, so that a new
/// allocation at the same address cannot be the one forgotten).
void record_free(void* ptr) noexcept;

}  // namespace kjit::detail

// How a cpu launch is run: on the calling thread or over the thread pool, decided from what
// the kernel's entry point costs per index, measured on its own launches. The runtime's
// launches and the XLA FFI handlers both run their cpu entry points through here (internal).
#pragma once

#include <atomic>
#include <cstdint>

#include "kjit/runtime/internal/private_adds.hpp"

namespace kjit::detail {

/// A generated cpu entry point: runs the launch's indices [begin, end) over the packed
/// parameters (kjit/abi.h).
using CpuEntry = void (*)(void** params, int64_t begin, int64_t end);

/// What one cpu entry point (a kernel's forward or adjoint) costs per index: a running
/// average of measured chunk times, 0 until its first launch. Copies start unmeasured.
struct CpuCost {
  std::atomic<float> ns_per_index{0};
  CpuCost() = default;
  CpuCost(const CpuCost&) {}
  CpuCost& operator=(const CpuCost&) { return *this; }
};

/// Work below this many nanoseconds runs on the calling thread: waking the pool's workers
/// and waiting for them costs more than splitting it saves (~10-20 µs on a loaded 2-core VM).
constexpr double kPoolMinWorkNs = 50000;
/// Indices below which an unmeasured entry point runs on the calling thread (and is measured).
constexpr int64_t kUnmeasuredInlineMax = 65536;

/// Launches of fewer indices do not update the measured cost (a call's fixed cost would
/// dominate it).
constexpr int64_t kMinMeasuredSize = 1024;

/// Whether a launch of `size` indices of an entry point costing `ns_per_index` (0: not yet
/// measured) runs over a pool of `threads` threads rather than on the calling thread alone.
bool use_pool(float ns_per_index, int64_t size, unsigned threads);

/// Indices per chunk of a pooled launch: enough for ~10 µs of work each, so that claiming
/// a chunk stays cheap next to running it, and at least 512.
int64_t pool_grain(float ns_per_index);

/// The running average after a measured sample (the first sample is taken as it is).
float updated_cost(float previous, float sample);

/// Runs `entry(params, begin, end)` over [0, size), on the
/// calling thread or over ThreadPool::global() as use_pool says, and updates `cost`. With
/// `adds` (the entry's add-only arrays), the arrays the rule picks get a private copy per
/// thread that runs part of the launch, merged into them before this returns. Every call's
/// `begin` is a multiple of `align` (an adjoint's value sums need whole blocks:
/// ValueSums::align). `in_order`: one call over [0, size) on the calling thread whatever the
/// costs (deterministic launches), adding plainly into the add-only arrays themselves, in index
/// order (no copies, no atomics).
void run_cpu_entry(CpuEntry entry, void** params, int64_t size, CpuCost& cost,
                   const CpuPrivateAdds* adds = nullptr, int64_t align = 1, bool in_order = false);

}  // namespace kjit::detail

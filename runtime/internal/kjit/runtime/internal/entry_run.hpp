// The launch core: one run of a kernel's forward or adjoint entry point over parameters already
// packed as the kernel ABI lays them out — its own status slot, each batch item on the cpu pool
// or a CUDA stream, then the status check. kjit::launch and the XLA FFI handlers both launch
// through here (internal).
#pragma once

#include <cstdint>

#include "kjit/runtime/internal/module_table.hpp"
#include "kjit/runtime/internal/value_sums.hpp"

namespace kjit::detail {

/// What one run of an entry point needs besides its batch items.
struct EntryRun {
  const KernelDef* kernel = nullptr;
  const KernelEntry* entry = nullptr;  ///< the kernel's entry points on `device`
  bool adjoint = false;
  Device device = Device::cpu();
  void* stream = nullptr;    ///< CUDA: the stream to launch on (null: the device's default)
  int block_dim = 0;         ///< CUDA: the launch's block size (0: the kernel's, else the module's)
  void** params = nullptr;   ///< the packed parameters; params[0] is the kj::launch_bounds_t
  int64_t batches = 1;       ///< batch items, each launched over the same bounds
  /// Same bits for any thread count and schedule (LaunchOptions::deterministic): an entry
  /// point with atomics runs its threads in index order on the cpu, and is refused on CUDA.
  bool deterministic = false;
};

/// Selects batch item `b`'s buffers in the packed parameters and returns the value sums its
/// cpu adjoint fills (null: none asked for). Called before each item is launched.
using SelectBatch = ValueSums* (*)(void* context, int64_t b);

/// The entry point `run` launches, or a User error saying why the kernel has no adjoint when it
/// is an adjoint the kernel lacks (callers with errors of their own check first).
void* entry_function(const EntryRun& run);

/// Runs `run`'s entry point once per batch item over the bounds in params[0] (nothing when
/// they are empty or there are no items), into one status slot for the whole run: every item
/// reports into it and the first report wins. A CUDA stream being captured (by kjit's graphs
/// or by XLA's command buffers) gets no slot: reading it back would break the capture. Throws
/// the User error a report names after the last item.
void run_entry(const EntryRun& run, SelectBatch select, void* context);

}  // namespace kjit::detail

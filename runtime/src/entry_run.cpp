// The launch core shared by kjit::launch and the XLA FFI handlers (entry_run.hpp).
#include "kjit/runtime/internal/entry_run.hpp"

#include "kjit/abi.h"
#include "kjit/runtime/internal/cpu_dispatch.hpp"
#include "kjit/runtime/internal/cuda_backend.hpp"
#include "kjit/runtime/internal/cuda_entry_launch.hpp"
#include "kjit/runtime/internal/launch_status.hpp"
#include "array_uses.hpp"

namespace kjit::detail {

void* entry_function(const EntryRun& run) {
  void* fn = run.adjoint ? run.entry->adjoint : run.entry->forward;
  if (!fn) throw Error(ErrorKind::User, run.entry->adjoint_error);
  return fn;
}

void run_entry(const EntryRun& run, SelectBatch select, void* context) {
  void* fn = entry_function(run);
  auto* bounds = static_cast<kj::launch_bounds_t*>(run.params[0]);
  if (bounds->size == 0 || run.batches == 0) return;
  // Atomics apply in the order threads reach them: only index order is the same for every
  // thread count. Adjoints add gradients atomically, so they count as having atomics.
  const bool deterministic = run.deterministic && (run.adjoint || kernel_array_uses(*run.kernel).atomics);
  if (deterministic && !run.device.is_cpu())
    throw Error(ErrorKind::User, "kernel '" + run.kernel->name() + "'" + (run.adjoint ? " (adjoint)" : "") +
                                     ": a deterministic launch on " + run.device.name() +
                                     " is not available for an entry point with atomic updates (their order "
                                     "follows the GPU's schedule); launch it on the cpu device, or without "
                                     "LaunchOptions::deterministic / KJIT_DETERMINISTIC");
  const int slot = run.adjoint ? 1 : 0;
  bool wanted = run.entry->module->reports(run.adjoint);
  if (wanted && run.device.is_cuda() && run.stream) wanted = !cuda::stream_capturing(run.device.ordinal(), run.stream);
  LaunchStatus status(run.device, wanted);
  bounds->status = status.slot();
  const OwnAdds* own = run.adjoint && !run.entry->own_adds.targets.empty() ? &run.entry->own_adds : nullptr;
  for (int64_t b = 0; b < run.batches; ++b) {
    ValueSums* sums = select ? select(context, b) : nullptr;
    // The reverse sweep's plain adds at each thread's own element race with another argument's
    // adds where the two share memory (decided per item: selecting one moves the buffers): the
    // cpu then runs the item in index order, CUDA makes those adds atomic (kArrayShared on
    // copies of their descriptors).
    if (run.device.is_cpu()) {
      const bool own_shared = own && own->shared(run.params);
      if (sums) sums->prepare(bounds->size);
      run_cpu_entry(reinterpret_cast<CpuEntry>(fn), run.params, bounds->size, run.entry->cpu_cost[slot],
                    &run.entry->cpu_private[slot], sums ? sums->align(bounds->size) : 1,
                    deterministic || own_shared);
      // A launch that reports a failure leaves its adjoints partial anyway (AUTODIFF.md): the
      // sums are added before the report is read, as the arrays' gradients were.
      if (sums) sums->finish();
    } else {
      FlaggedArrays params(run.params, own ? own->param_count : 0, own ? own->targets.size() : 0);
      if (own)
        for (int t : own->targets)
          if (own->shared(run.params, t)) params.flag(t, kj::kArrayShared);
      // cuLaunchKernel copies the parameters at launch: the next batch item may reuse them.
      launch_cuda_entry(*run.entry, *run.kernel, run.adjoint, bounds->size, run.block_dim, run.stream,
                        params.params());
    }
  }
  status.check(*run.entry->module, *run.kernel, run.stream);
}

}  // namespace kjit::detail

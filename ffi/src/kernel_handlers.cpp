// The XLA FFI handlers that launch kjit kernels forward and backward, on the platforms `cpu`
// (the calling thread's share of kjit's pool) and `CUDA` (XLA's stream).
#include <cstring>

#include "kjit/runtime/internal/cuda_backend.hpp"
#include "kjit/runtime/internal/entry_run.hpp"
#include "kjit/ffi/ffi.hpp"
#include "launch_plan.hpp"
#include "kjit/runtime/internal/module_table.hpp"

namespace kjit::ffi::detail {

namespace {

/// One Plan per thread: handlers do not recurse, and reusing it keeps the hot path free of
/// large stack frames and allocations.
Plan& thread_plan() {
  thread_local Plan plan;
  return plan;
}

/// The launch core's view of `plan`'s launch on `device`; a missing adjoint is an
/// INVALID_ARGUMENT naming the kernel.
kjit::detail::EntryRun entry_run(Plan& plan, const Device& device, void* stream) {
  kjit::detail::EntryRun run;
  run.kernel = plan.kernel->def;
  run.entry = &kjit::detail::kernel_entry(*plan.kernel->def, device);
  run.adjoint = plan.adjoint;
  run.device = device;
  run.stream = stream;
  run.block_dim = plan.block_dim;  // the call's kjit_block_dim, else the kernel's own, else its module's
  run.params = plan.pointers;
  run.batches = plan.batch_count;
  run.deterministic = kjit::deterministic_launches();
  if (!(plan.adjoint ? run.entry->adjoint : run.entry->forward))
    invalid("kjit adjoint of kernel '" + plan.kernel->name + "': " + run.entry->adjoint_error);
  return run;
}

/// Selects batch item `b` (SelectBatch): its buffers and traced struct leaves, and on the cpu
/// its values' gradients, whose slots (or, for struct leaves, destinations) hold the item's
/// result buffers that the partial sums are added into.
kjit::detail::ValueSums* select_batch(void* context, int64_t b) {
  Plan& plan = *static_cast<Plan*>(context);
  if (plan.batch_rank) plan.select_batch(b);
  plan.copy_leaves();
  plan.sums.clear();
  for (int v = 0; v < plan.value_grad_count; ++v) {
    const ValueGradient& g = plan.value_grads[v];
    if (g.offset < 0)
      plan.sums.add(g.slot, *g.slot, g.type);
    else
      plan.sums.add_field(g.slot, g.type, size_t(g.offset), g.bytes, g.destination);
  }
  return &plan.sums;
}

void run_cpu(const xla::CallFrame* frame, bool adjoint) {
  Plan& plan = thread_plan();
  adjoint ? plan_adjoint(frame, plan) : plan_forward(frame, plan);
  for (int i = 0; i < plan.fill_count; ++i) {
    const Fill& f = plan.fills[i];
    if (!f.bytes) continue;
    f.src ? std::memcpy(f.dst, f.src, f.bytes) : std::memset(f.dst, 0, f.bytes);
  }
  if (plan.bounds.size == 0 || plan.batch_count == 0) return;
  kjit::detail::run_entry(entry_run(plan, Device::cpu(), nullptr), select_batch, &plan);
}

int cuda_ordinal(const xla::CallFrame* frame) {
  int ordinal = device_ordinal_of(frame);
  if (ordinal >= 0) return ordinal;
  // An XLA older than XLA_FFI_DeviceOrdinal_Get: unambiguous only with a single GPU.
  if (cuda::device_count() <= 1) return 0;
  fail(xla::kUnimplemented, "kjit: this XLA does not offer XLA_FFI_DeviceOrdinal_Get (FFI api struct_size " +
                                std::to_string(frame->api->struct_size) +
                                "), so kjit cannot tell which of several GPUs a call runs on; upgrade jaxlib");
}

void run_cuda(const xla::CallFrame* frame, bool adjoint) {
  Plan& plan = thread_plan();
  adjoint ? plan_adjoint(frame, plan) : plan_forward(frame, plan);
  if (plan.leaf_copy_count) {
    const ParamInfo& p = plan.kernel->params[size_t(plan.leaf_copies[0].param)];
    invalid((adjoint ? "kjit adjoint of kernel '" : "kjit kernel '") + plan.kernel->name + "': struct field '" +
            p.name + "' (" + p.type.str() + ") is traced, which the cpu platform takes but CUDA does not yet: a "
            "struct travels by value in the launch's parameters, and the host cannot read a traced value without "
            "waiting for the stream. Pass a Python or NumPy number, or the value as a parameter of its own");
  }
  const int ordinal = cuda_ordinal(frame);
  void* stream = stream_of(frame);
  for (int i = 0; i < plan.fill_count; ++i) {
    const Fill& f = plan.fills[i];
    if (!f.bytes) continue;
    if (f.src)
      cuda::copy(ordinal, f.dst, f.src, f.bytes, cuda::CopyKind::DeviceToDevice, stream);
    else
      cuda::zero(ordinal, f.dst, f.bytes, stream);
  }
  if (plan.bounds.size == 0 || plan.batch_count == 0) return;
  // The forward's and the adjoint's parameters hold no value sums on CUDA: the kernel adds
  // each value's adjoint into its result buffer itself.
  kjit::detail::run_entry(entry_run(plan, Device::cuda(ordinal), stream),
                          [](void* context, int64_t b) -> kjit::detail::ValueSums* {
                            Plan& p = *static_cast<Plan*>(context);
                            if (p.batch_rank) p.select_batch(b);
                            return nullptr;
                          }, &plan);
}

}  // namespace

}  // namespace kjit::ffi::detail

using kjit::ffi::detail::guarded;

extern "C" {

KJIT_FFI_EXPORT kjit::xla::Error* kjit_xla_launch_cpu(kjit::xla::CallFrame* frame) {
  return guarded(frame, 0, "kjit_launch", [&] { kjit::ffi::detail::run_cpu(frame, false); });
}

KJIT_FFI_EXPORT kjit::xla::Error* kjit_xla_adjoint_cpu(kjit::xla::CallFrame* frame) {
  return guarded(frame, 0, "kjit_adjoint", [&] { kjit::ffi::detail::run_cpu(frame, true); });
}

KJIT_FFI_EXPORT kjit::xla::Error* kjit_xla_launch_cuda(kjit::xla::CallFrame* frame) {
  // Always the same launches for the same attributes: XLA may capture it in a CUDA graph.
  return guarded(frame, kjit::xla::kCommandBufferCompatible, "kjit_launch",
                 [&] { kjit::ffi::detail::run_cuda(frame, false); });
}

KJIT_FFI_EXPORT kjit::xla::Error* kjit_xla_adjoint_cuda(kjit::xla::CallFrame* frame) {
  return guarded(frame, 0, "kjit_adjoint", [&] { kjit::ffi::detail::run_cuda(frame, true); });
}

}  // extern "C"

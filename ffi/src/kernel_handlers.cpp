// The XLA FFI handlers that launch kjit kernels forward and backward, on the platforms `cpu`
// (the calling thread's share of kjit's pool) and `CUDA` (XLA's stream).
#include <cstring>

#include "kjit/runtime/internal/cuda_backend.hpp"
#include "kjit/runtime/internal/cuda_entry_launch.hpp"
#include "kjit/ffi/ffi.hpp"
#include "launch_plan.hpp"
#include "kjit/runtime/internal/launch_status.hpp"
#include "kjit/runtime/internal/module_table.hpp"
#include "kjit/runtime/internal/cpu_dispatch.hpp"

namespace kjit::ffi::detail {

namespace {

/// One Plan per thread: handlers do not recurse, and reusing it keeps the hot path free of
/// large stack frames and allocations.
Plan& thread_plan() {
  thread_local Plan plan;
  return plan;
}

void* entry_point(const Plan& plan, const kjit::detail::KernelEntry& e) {
  void* fn = plan.adjoint ? e.adjoint : e.forward;
  if (!fn) invalid("kjit adjoint of kernel '" + plan.kernel->name + "': " + e.adjoint_error);
  return fn;
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
  const kjit::detail::KernelEntry& e = kjit::detail::kernel_entry(*plan.kernel->def, Device::cpu());
  auto entry = reinterpret_cast<kjit::detail::CpuEntry>(entry_point(plan, e));
  // This call's own status slot (every batch item reports into it; the first report wins).
  kjit::detail::LaunchStatus status(Device::cpu(), e.module->reports(adjoint));
  static_cast<kj::launch_bounds_t*>(plan.pointers[0])->status = status.slot();
  for (int64_t b = 0; b < plan.batch_count; ++b) {
    if (plan.batch_rank) plan.select_batch(b);
    // A traced value's gradient: its slot holds this batch item's result buffer, which the
    // partial sums (written through the same slot) are added into after the launch.
    plan.sums.clear();
    for (int v = 0; v < plan.value_grad_count; ++v)
      plan.sums.add(plan.value_grads[v].slot, *plan.value_grads[v].slot, plan.value_grads[v].type);
    plan.sums.prepare(plan.bounds.size);
    kjit::detail::run_cpu_entry(entry, plan.pointers, plan.bounds.size, e.cpu_cost[adjoint ? 1 : 0],
                                &e.cpu_private[adjoint ? 1 : 0], plan.sums.align(plan.bounds.size));
    plan.sums.finish();
  }
  status.check(*e.module, *plan.kernel->def, nullptr);
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
  const kjit::detail::KernelEntry& e = kjit::detail::kernel_entry(*plan.kernel->def, Device::cuda(ordinal));
  entry_point(plan, e);  // an adjoint the kernel lacks is an error here
  // A stream XLA captures into a command buffer cannot be read back: its launches get no slot.
  const bool wanted = e.module->reports(adjoint) && !cuda::stream_capturing(ordinal, stream);
  kjit::detail::LaunchStatus status(Device::cuda(ordinal), wanted);
  static_cast<kj::launch_bounds_t*>(plan.pointers[0])->status = status.slot();
  for (int64_t b = 0; b < plan.batch_count; ++b) {
    if (plan.batch_rank) plan.select_batch(b);
    // cuLaunchKernel copies the parameters at launch: the next batch item may reuse them.
    // The block size: the call's kjit_block_dim, else the kernel's own, else its module's.
    kjit::detail::launch_cuda_entry(e, *plan.kernel->def, plan.adjoint, plan.bounds.size,
                                    plan.block_dim, stream, plan.pointers);
  }
  status.check(*e.module, *plan.kernel->def, stream);
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

// Per-launch status slots, CUDA slots pooled per thread and device, and the errors that
// their reports become.
#include "kjit/runtime/internal/launch_status.hpp"

#include <mutex>
#include <set>
#include <vector>

#include "kjit/runtime/internal/cuda_backend.hpp"
#include "cuda/driver_api.hpp"
#include "kjit/ir/ir.hpp"

namespace kjit::detail {

namespace {

constexpr int kMaxCudaDevices = 64;

/// Device slots no thread holds, per device: a thread that ends gives its slots back here, so
/// a program that starts many threads allocates as many slots as it ran threads at once.
struct SlotPool {
  std::mutex mutex;
  std::vector<void*> free[kMaxCudaDevices];
  const void* driver = nullptr;  ///< the driver state the slots belong to (tests reset it)
};

SlotPool& pool() {
  static SlotPool* p = new SlotPool;  // never destroyed: thread exits may come after main
  return *p;
}

/// The calling thread's slots, one per device, taken from the pool on first use.
struct ThreadSlots {
  void* slot[kMaxCudaDevices] = {};
  const void* driver = nullptr;
  ~ThreadSlots() {
    std::lock_guard<std::mutex> lock(pool().mutex);
    if (driver != pool().driver) return;
    for (int d = 0; d < kMaxCudaDevices; ++d)
      if (slot[d]) pool().free[d].push_back(slot[d]);
  }
  void* get(int ordinal) {
    if (ordinal < 0 || ordinal >= kMaxCudaDevices)
      throw Error(ErrorKind::User, "device cuda:" + std::to_string(ordinal) + " is beyond the " +
                                       std::to_string(kMaxCudaDevices) + " CUDA devices kjit supports");
    // Slots of a driver state that reset_for_testing() dropped are gone with it.
    const void* current = &cuda::driver();
    if (driver != current) {
      for (void*& p : slot) p = nullptr;
      driver = current;
    }
    if (slot[ordinal]) return slot[ordinal];
    void* p = nullptr;
    {
      std::lock_guard<std::mutex> lock(pool().mutex);
      if (pool().driver != current) {
        for (auto& f : pool().free) f.clear();
        pool().driver = current;
      }
      auto& f = pool().free[ordinal];
      if (!f.empty()) {
        p = f.back();
        f.pop_back();
      }
    }
    if (!p) {  // a fresh slot starts clear; pooled ones were cleared after their last report
      p = cuda::alloc(ordinal, sizeof(kj::launch_status_t));
      cuda::zero(ordinal, p, sizeof(kj::launch_status_t), nullptr);
    }
    return slot[ordinal] = p;
  }
};

/// "file:line" of the statement of `fn` (or a device function it calls) at `line` that can
/// fault, or "line N" when none is found (a kernel written across several files).
std::string site_of(const ir::Function& fn, int line, std::set<const ir::Function*>& seen) {
  if (!seen.insert(&fn).second) return {};
  std::string found;
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) {
    if (!found.empty() || s.loc.line != line || !s.loc.known()) return;
    if (s.op == ir::Op::ArrayLoad || s.op == ir::Op::ArrayStore || s.op == ir::Op::ArrayAtomic ||
        s.op == ir::Op::Extract || s.op == ir::Op::Insert || s.op == ir::Op::Call)
      found = s.loc.str();
  });
  for (const auto& callee : fn.callees)
    if (found.empty()) found = site_of(*callee, line, seen);
  return found;
}

std::string site_of(const KernelDef& kernel, int line) {
  std::set<const ir::Function*> seen;
  std::string s = site_of(kernel.ir(), line, seen);
  return s.empty() ? "line " + std::to_string(line) : s;
}

}  // namespace

LaunchStatus::LaunchStatus(const Device& device, bool wanted) {
  if (!wanted) return;
  if (device.is_cpu()) {
    slot_ = &host_;
    return;
  }
  if (cuda::this_thread_capturing()) return;
  thread_local ThreadSlots slots;
  ordinal_ = device.ordinal();
  slot_ = static_cast<kj::launch_status_t*>(slots.get(ordinal_));
}

void LaunchStatus::check(const LoadedModule& module, const KernelDef& kernel, void* stream) {
  if (!slot_) return;
  kj::launch_status_t s = host_;
  if (ordinal_ >= 0) {
    // On the launch's stream: a stream that does not synchronise with the legacy default
    // stream (XLA's are non-blocking) would otherwise be read before the kernel ran.
    cuda::copy(ordinal_, &s, slot_, sizeof s, cuda::CopyKind::DeviceToHost, stream);
    if (stream) cuda::stream_synchronize(ordinal_, stream);
    if (s.code) cuda::zero(ordinal_, slot_, sizeof s, stream);
  }
  if (s.code) throw_status(module, kernel, s);
}

void throw_status(const LoadedModule& m, const KernelDef& kernel, const kj::launch_status_t& s) {
  const std::string launch = "launch of kernel '" + kernel.name() + "' in module '" + m.name + "'";
  const std::string thread = "thread " + std::to_string(s.thread);
  const char* mode = " (bounds-checked mode: ModuleOptions::bounds_check or KJIT_BOUNDS_CHECK=1)";
  if (s.code == kStatusCheckFailed)
    throw Error(ErrorKind::User, launch + ": a device-side check (expect_near) failed; the failing threads printed "
                                          "their index, the check's location and the values");
  if (s.code == kStatusOutOfBounds) {
    // Axes 0..3 are array dimensions; 16 and up index components of a local array or vector.
    const bool local = s.axis >= 16;
    const std::string what = local ? "component index " + std::to_string(s.axis - 16) + " of a local array or vector"
                                   : "dimension " + std::to_string(s.axis) + " of an array";
    throw Error(ErrorKind::User, launch + ": " + thread + " indexed " + what + " at " + site_of(kernel, s.line) +
                                     " with " + std::to_string(s.index) + ", outside its extent " +
                                     std::to_string(s.extent) + " (valid: 0.." + std::to_string(s.extent - 1) +
                                     "); the access was skipped and the launch's results must not be used" + mode);
  }
  if (s.code == kStatusDivByZero)
    throw Error(ErrorKind::User, launch + ": " + thread + " divided the integer " + std::to_string(s.index) +
                                     " by zero at " + site_of(kernel, s.line) +
                                     " (the result is defined, see docs/DSL.md, but is rarely what was meant)" + mode);
  if (s.code == kStatusNoWindingData)
    throw Error(ErrorKind::User, launch + ": " + thread + " called mesh_query_point_sign_winding_number on a kjit::Mesh "
                                          "built without winding-number support: build it with "
                                          "kjit::Mesh(points, indices, velocities, true)");
  auto it = m.loop_locations.find(s.code);
  const std::string where = it == m.loop_locations.end() ? "a dynamic loop" : "the dynamic loop at " + it->second;
  const int c = m.options.loop_checkpoints;
  throw Error(ErrorKind::User,
              "adjoint of kernel '" + kernel.name() + "': " + where + " ran more than " + std::to_string(c * c) +
                  " iterations, the bound of its checkpoints (ModuleOptions::loop_checkpoints = " +
                  std::to_string(c) + ", bound = checkpoints squared). The gradients of this launch are "
                  "incomplete and must not be used; raise loop_checkpoints for module '" + m.name + "'");
}

}  // namespace kjit::detail

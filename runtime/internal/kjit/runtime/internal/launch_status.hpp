// Each launch's own status slot (kj::launch_status_t, passed in launch_bounds_t::status): where
// its threads report loop-bound overflows, failed checks and bounds-mode faults, and the error
// the runtime raises from it after the launch (internal).
#pragma once

#include "kjit/abi.h"
#include "kjit/runtime/internal/module_table.hpp"

namespace kjit::detail {

/// The status codes generated code reports (kj::kStatus* in the prelude's status chunk); any
/// other nonzero code is a dynamic loop's id + 1.
constexpr int32_t kStatusCheckFailed = 0x7fff0001;
constexpr int32_t kStatusOutOfBounds = 0x7fff0002;
constexpr int32_t kStatusDivByZero = 0x7fff0003;
constexpr int32_t kStatusNoWindingData = 0x7fff0004;

/// One launch's status slot: on the cpu a member of this object, on CUDA the calling thread's
/// slot on that device (launches of one thread are read in order, so one slot per thread and
/// device serves them all, and threads never share one). Absent when the launch cannot report,
/// and while the thread captures a CUDA graph (a read would break the capture).
class LaunchStatus {
 public:
  /// `wanted`: the launch can report (an adjoint, a module with checks or in bounds mode).
  LaunchStatus(const Device& device, bool wanted);
  LaunchStatus(const LaunchStatus&) = delete;
  LaunchStatus& operator=(const LaunchStatus&) = delete;

  /// What launch_bounds_t::status gets (null: reports are dropped).
  kj::launch_status_t* slot() { return slot_; }
  /// After the launch: reads the slot (on CUDA, in order on `stream`) and clears it; throws
  /// the User error a report names.
  void check(const LoadedModule& module, const KernelDef& kernel, void* stream);

 private:
  kj::launch_status_t host_{};
  kj::launch_status_t* slot_ = nullptr;
  int ordinal_ = -1;  ///< CUDA device of the slot; -1 on the cpu
};

/// The User error for status `s` reported by a launch of `kernel` in `module` (s.code != 0).
[[noreturn]] void throw_status(const LoadedModule& module, const KernelDef& kernel, const kj::launch_status_t& s);

}  // namespace kjit::detail

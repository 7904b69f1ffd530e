// Checks launch arguments against a kernel's parameters and packs them as the kernel ABI
// lays them out: the launch bounds, then each parameter (then each adjoint), each reached
// through an array of pointers — what cuLaunchKernel takes and what cpu entries read.
#pragma once

#include <vector>

#include "kjit/abi.h"
#include "kjit/runtime/internal/value_sums.hpp"
#include "kjit/runtime/launch.hpp"

namespace kjit::detail {

/// The parameter memory of one launch. Fixed inline storage: packing allocates nothing.
class PackedParams {
 public:
  PackedParams() = default;
  PackedParams(const PackedParams&) = delete;
  PackedParams& operator=(const PackedParams&) = delete;

  /// Appends a parameter's bytes (aligned) and a pointer to them.
  void push(const void* bytes, size_t size, size_t align);
  template <class T>
  void push(const T& value) {
    push(&value, sizeof(T), alignof(T));
  }
  /// The array of pointers, one per parameter in order.
  void** pointers() { return pointers_; }
  size_t count() const { return count_; }
  /// The bytes of parameter `i` (for tests that compare layouts).
  const void* param(size_t i) const { return pointers_[i]; }
  /// The slot of parameter `i`, which holds a pointer (a value's adjoint).
  void** pointer_slot(size_t i) { return static_cast<void**>(pointers_[i]); }
  /// The parameter bytes in use (every pointer points into them), for a graph's copy.
  const unsigned char* storage() const { return storage_; }
  size_t bytes_used() const { return used_; }
  static constexpr size_t kAlignment = 16;

 private:
  static constexpr size_t kMaxParams = 130;
  alignas(16) unsigned char storage_[16384];
  size_t used_ = 0;
  void* pointers_[kMaxParams];
  size_t count_ = 0;
};

/// The launch bounds for `dims`; checks them against the kernel (a fixed launch
/// dimensionality from tid<N>(), extents that fit).
kj::launch_bounds_t make_bounds(const KernelDef& kernel, const Dims& dims);

/// The device a launch runs on: options.device, else the arrays' (which must agree), else cpu.
Device launch_device(const KernelDef& kernel, const std::vector<LaunchArg>& args,
                     const std::vector<LaunchArg>* adj_args, const LaunchOptions& options);

/// Checks `args` (and `adj_args` for an adjoint launch) against the kernel's parameters and
/// packs them after `bounds`. User errors name the kernel, the parameter and the mismatch.
/// Values are packed as kj::value_t (the value itself). A value's adjoint slot gets its
/// destination: on CUDA the device address, on the cpu an entry in `sums` (which must then
/// be given), whose prepare() points the slot at partial sums.
void pack_launch(PackedParams& out, const KernelDef& kernel, const kj::launch_bounds_t& bounds,
                 const std::vector<LaunchArg>& args, const std::vector<LaunchArg>* adj_args,
                 const Device& device, ValueSums* sums = nullptr);

}  // namespace kjit::detail

// Array arguments of one launch that share memory, and flagged copies of their descriptors:
// what decides whether a kernel's plain adds at the thread's own element are race-free
// (internal).
#pragma once

#include <cstdint>
#include <vector>

#include "kjit/abi.h"
#include "kjit/compiler/kernel_description.hpp"

namespace kjit::detail {

/// Whether an array among `array_args` (indices into the packed parameters) other than
/// `target` overlaps `target`'s memory (byte spans; any stride signs; empty arrays overlap
/// nothing).
bool shares_memory(const std::vector<int>& array_args, void** params, int target);

/// A launch's packed parameters with some array descriptors replaced by flagged copies. The
/// packed parameters themselves, which a captured graph replays, stay as they were; a launch
/// that flags nothing allocates nothing.
class FlaggedArrays {
 public:
  FlaggedArrays(void** params, int param_count, size_t most) : params_(params), count_(param_count), most_(most) {}
  FlaggedArrays(const FlaggedArrays&) = delete;
  FlaggedArrays& operator=(const FlaggedArrays&) = delete;
  /// Sets `flag` on a copy of argument `arg`'s descriptor (at most `most` arguments in all).
  void flag(int arg, kj_int32 flag);
  /// The launch's parameters, with the flagged descriptors in place.
  void** params() { return flagged_params_.empty() ? params_ : flagged_params_.data(); }

 private:
  void** params_;
  int count_;
  size_t most_;
  std::vector<void*> flagged_params_;
  std::vector<kj::array_t<void>> flagged_;
};

/// An adjoint entry's own-element plain adds (codegen's own_adds): the reverse sweep adds into
/// these adjoint arrays without atomics, each thread at its own element. That is race-free
/// unless another array argument of the launch shares the array's memory (x and y views of one
/// array with one gradient buffer, say): then CUDA launches flag the array kArrayShared
/// (kj::own_add adds atomically) and cpu launches run in index order on one thread.
struct OwnAdds {
  int param_count = 0;          ///< packed parameters of the adjoint entry, the bounds included
  std::vector<int> targets;     ///< packed parameter indices of the plainly added arrays
  std::vector<int> array_args;  ///< every array among the packed parameters (what may alias)

  /// Whether another array argument shares the memory of a target in this launch (counted).
  bool shared(void** params) const;
  /// Whether another array argument shares target `target`'s memory.
  bool shared(void** params, int target) const;
};

/// The own adds of `k`'s adjoint entry (none without one).
OwnAdds own_adds_of(const compiler::KernelDescription& k);

/// cpu launches (batch items) that found an own-add target's memory shared, and so ran in
/// index order, since the process started (what tests observe).
uint64_t shared_own_add_launches();

}  // namespace kjit::detail

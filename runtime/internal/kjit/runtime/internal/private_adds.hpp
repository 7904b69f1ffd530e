// Privatized accumulation on the cpu: a launch that adds into an array (and does nothing else
// with it) may give each thread that runs it a private zeroed copy, into which the kernel adds
// plainly, and merge the copies into the array afterwards with atomic adds (internal).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kjit/abi.h"
#include "kjit/compiler/kernel_description.hpp"
#include "kjit/runtime/internal/shared_arrays.hpp"

namespace kjit::detail {

/// How the merge adds one scalar: float, double, or 32- or 64-bit integers (signed or not:
/// both add as two's complement).
enum class MergeKind : uint8_t { F32, F64, U32, U64 };

/// An array parameter a cpu entry point only adds into (codegen's private_adds).
struct PrivateTarget {
  int arg = 0;         ///< index into the packed parameters (the launch bounds are 0)
  MergeKind kind = MergeKind::F32;
  int components = 1;  ///< scalars per element
  int adds = 1;        ///< add statements into it per thread
  bool owned = false;  ///< every add at the thread's own element (PrivateAddDescription::owned)
};

/// Everything run_cpu_entry needs to privatize an entry point's add-only arrays.
struct CpuPrivateAdds {
  int param_count = 0;  ///< packed parameters the entry reads, the launch bounds included
  std::vector<PrivateTarget> targets;
  std::vector<int> array_args;  ///< every array among the packed parameters (what may alias)
};

/// The add-only arrays a launch adds into plainly, in place, with no copy: every one when the
/// launch runs in index order on one thread (deterministic), else the `owned` ones (each
/// thread adds at its own element) whose memory no other array argument of the launch shares.
/// It flags copies of their descriptors kArrayPrivate: the packed parameters, which a captured
/// graph replays, stay as they were. PrivateLaunch leaves flagged arrays alone.
class PlainAdds {
 public:
  PlainAdds(const CpuPrivateAdds* adds, void** params, bool in_order);
  PlainAdds(const PlainAdds&) = delete;
  PlainAdds& operator=(const PlainAdds&) = delete;
  /// The launch's parameters, with the flagged descriptors in place.
  void** params() { return flagged_.params(); }

 private:
  FlaggedArrays flagged_;
};

/// The privatizable targets of an entry point from its kernel's description (`adjoint`: the
/// adjoint entry's). Fails loudly on a description codegen would not write.
CpuPrivateAdds cpu_private_adds(const compiler::KernelDescription& k, bool adjoint);

/// When launches privatize: by the measured rule (default), never, or always where the kernel
/// allows it. KJIT_PRIVATE_ADDS=0 / 1 sets never / always for the process.
enum class PrivatizeMode { Auto, Never, Always };
PrivatizeMode privatize_mode();
/// Overrides the mode (tests and benchmarks); Auto restores the measured rule.
void set_privatize_mode(PrivatizeMode mode);

/// Arrays privatized by launches since the process started (what tests observe).
uint64_t privatized_arrays();
/// Arrays own-element launches added into plainly in place since the process started (what
/// tests observe; in-order launches are not counted).
uint64_t plain_add_arrays();

/// Bytes of private copies one launch may hold in all.
constexpr int64_t kPrivateMaxBytes = int64_t(256) << 20;

/// A private copy up to this size stays in a core's cache while the launch adds into it.
constexpr int64_t kPrivateCachedBytes = int64_t(1) << 20;

/// Whether a launch of `size` threads, each adding `adds` times into an array of `elements`
/// elements of `element_bytes`, run by `threads` threads, privatizes it (the mode aside): when
/// the adds are enough to pay for zeroing, reading and merging a copy per thread. That is one
/// add per element for a copy that stays in cache, one per element per thread for a larger
/// one; never when the copies would exceed kPrivateMaxBytes.
bool worth_privatizing(int64_t size, int adds, int64_t elements, int64_t element_bytes, unsigned threads);

/// One launch's private copies. Each thread that runs part of the launch asks for its
/// parameters (its own copies of the privatized arrays, made on first use); after every part
/// ran, merge() adds the copies into the launch's arrays with atomic adds, each element by one
/// thread, so that it is correct while other launches add into the same arrays, and hands the
/// (zeroed) copies back to a process-wide cache.
class PrivateLaunch {
 public:
  /// Decides which of `adds`' targets to privatize for a launch of `size` threads over
  /// `params`, run by `threads` threads; none when the mode or the rule says no.
  PrivateLaunch(const CpuPrivateAdds& adds, void** params, int64_t size, unsigned threads);
  ~PrivateLaunch();
  PrivateLaunch(const PrivateLaunch&) = delete;
  PrivateLaunch& operator=(const PrivateLaunch&) = delete;

  /// Whether any array is privatized.
  bool active() const { return !chosen_.empty(); }
  /// The calling thread's parameters: the launch's, with its private copies in place of the
  /// privatized arrays (ThreadPool::current_slot() picks them).
  void** params_for_this_thread();
  /// Adds every copy into its array (over the pool when that pays) and releases the copies.
  void merge();

 private:
  struct Chosen;
  struct Slot;
  void** params_;
  int param_count_;
  std::vector<Chosen> chosen_;
  std::vector<std::unique_ptr<Slot>> slots_;
};

}  // namespace kjit::detail

// Which array parameters an entry point only adds into: the cpu runtime may give each thread
// of such a launch a private copy of them and merge the copies afterwards (docs/ARCHITECTURE.md).
#pragma once

#include <vector>

#include "kjit/codegen/codegen.hpp"
#include "kjit/ir/ir.hpp"

namespace kjit::codegen {

/// Whether an array of `element` can be privatized: a scalar, vector, matrix, quaternion or
/// transform of float32, float64 or a 32- or 64-bit integer (what the runtime's merge adds).
/// codegen writes atomic_add / atomic_sub into these as kj::array_add / kj::array_sub.
bool privatizable_element(const ir::Type& element);

/// An array parameter of an entry point that the entry point touches only by adding into it.
struct PrivateAdd {
  int param = 0;  ///< position among the entry's parameters (adjoint: kernel params, then adjoints)
  int adds = 0;   ///< add statements into it (one per thread each, whatever loops they sit in)
  /// Every add is at the thread's own element (a forward `a[tid()] += v`): no two threads of
  /// the launch add into one element, so the cpu may add plainly where no other argument
  /// shares the array's memory.
  bool owned = false;
};

/// The array parameters of `fn`'s entry point of `kind` whose elements the entry only adds
/// into, atomically (an adjoint array every thread adds to at its own index only is left out:
/// its adds are plain already), of a privatizable element kind:
/// - forward: arrays used only by atomic_add / atomic_sub whose results are unused (and for
///   their shape);
/// - adjoint: the adjoint arrays of arrays that are only read (and not all at the thread's own
///   index): the reverse sweep adds into those and reads nothing from them.
/// Anything else done with the array (a read, a store, another atomic, a used result, passing
/// it to a device function) leaves it out.
std::vector<PrivateAdd> private_adds(const ir::Function& fn, EntryKind kind);

/// The adjoint entry's parameters (positions as in PrivateAdd::param) into which the reverse
/// sweep adds plainly at the thread's own element (OwnedArrays). A launch where another array
/// argument shares such an array's memory makes those adds atomic (CUDA: the kArrayShared flag
/// kj::own_add reads) or runs in index order (cpu).
std::vector<int> own_adds(const ir::Function& fn);

}  // namespace kjit::codegen

// Which array accesses are at the launching thread's own element: the one analysis that the
// reverse rules (plain or atomic adds into an adjoint array), the lane functions' block stores
// and block adds and the cpu's privatized adds all read.
#pragma once

#include <map>
#include <set>

#include "kjit/ir/def_use.hpp"
#include "kjit/ir/ir.hpp"

namespace kjit::codegen {

/// The own-index analysis of one function.
class OwnIndex {
 public:
  explicit OwnIndex(const ir::Function& fn) : fn_(fn), def_use_(fn) {}
  /// Whether `access` (an ArrayLoad, ArrayStore or ArrayAtomic: the array, then one index per
  /// dimension) is at the thread's own element: the flat tid() for a 1-D array, or tid<N>()'s
  /// components 0..N-1 in order for an N-D array in an N-D launch. No two threads of a launch
  /// have the same own element, so what a thread does there races with no other thread.
  /// Inside a device function the caller's indices are unknown: never.
  bool operator()(const ir::Stmt& access) const;
  /// The use/def facts it reads (for callers that need them too).
  const ir::DefUse& def_use() const { return def_use_; }

 private:
  const ir::Function& fn_;
  ir::DefUse def_use_;
};

/// Whether a kernel reads an array parameter only at the thread's own launch index (OwnIndex:
/// `x[tid()]`, or `x(i, j)` with `auto [i, j] = tid<2>()`): then no two threads add to one
/// element of its adjoint, and the reverse sweep adds plainly (kj::own_add) unless the launch
/// finds another array argument sharing its memory. One read elsewhere, passing it to a device
/// function, or an array the runtime cannot see (a struct field's, one built from an address)
/// makes every add atomic.
class OwnedArrays {
 public:
  explicit OwnedArrays(const ir::Function& fn) : fn_(fn), own_(fn) {}
  bool operator()(ir::ValueId array);

 private:
  const ir::Function& fn_;
  OwnIndex own_;
  std::map<ir::ValueId, bool> owned_;
};

/// The block accesses of `fn` with op `op` (ArrayStore or ArrayLoad): accesses at its top level
/// (every lane runs them) of a 1-D array parameter at the thread's index, of elements of whole
/// 4-byte words, where that access is all the kernel does with the array (its shape aside). A
/// block of lanes touches one contiguous run of whole cache lines there: the forward lane
/// function writes such a store's lanes as one block (kj::store_block), the adjoint lane
/// function adds such a load's adjoints as one block (kj::add_block), in unmasked vector loops
/// where a masked one does not vectorize (a Vec3's interleaved components).
std::set<const ir::Stmt*> block_accesses(const ir::Function& fn, ir::Op op);

}  // namespace kjit::codegen

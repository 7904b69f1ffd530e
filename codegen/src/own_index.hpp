// Which array accesses are at the launching thread's own element: the one analysis that the
// reverse rules (plain or atomic adds into an adjoint array), the forward lane function's
// block stores and the cpu's privatized adds all read.
#pragma once

#include <optional>

#include "kjit/ir/def_use.hpp"
#include "kjit/ir/ir.hpp"

namespace kjit::codegen {

/// The own-index analysis of one function.
class OwnIndex {
 public:
  /// The analysis of `fn`, over its use/def facts `def_use` when the caller has them.
  explicit OwnIndex(const ir::Function& fn, const ir::DefUse* def_use = nullptr);
  OwnIndex(const ir::Function& fn, const ir::DefUse& def_use) : OwnIndex(fn, &def_use) {}
  OwnIndex(const OwnIndex&) = delete;  // def_use_ may refer to own_
  OwnIndex& operator=(const OwnIndex&) = delete;
  /// Whether `access` (an ArrayLoad, ArrayStore or ArrayAtomic: the array, then one index per
  /// dimension) is at the thread's own element: the flat tid() for a 1-D array, or tid<N>()'s
  /// components 0..N-1 in order for an N-D array in an N-D launch. No two threads of a launch
  /// have the same own element, so what a thread does there races with no other thread.
  /// Inside a device function the caller's indices are unknown: never.
  bool operator()(const ir::Stmt& access) const;

 private:
  const ir::Function& fn_;
  std::optional<ir::DefUse> own_;  ///< built here when the caller gave none
  const ir::DefUse& def_use_;
};

}  // namespace kjit::codegen

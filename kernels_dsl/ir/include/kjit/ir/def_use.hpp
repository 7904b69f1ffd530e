// kjit/ir/def_use.hpp — the use/def facts of a function, from one walk: the statement that
// defines each value and how often each value is read. Passes ask this one analysis rather
// than each building its own map.
#pragma once

#include <cstdint>
#include <vector>

#include "kjit/ir/ir.hpp"

namespace kjit::ir {

/// Use/def facts of one function (valid while the function is unchanged).
class DefUse {
 public:
  explicit DefUse(const Function& fn);
  /// The statement defining `v`; null for a block argument.
  const Stmt* def(ValueId v) const { return def_.at(v); }
  /// Whether `v` is defined by a statement of op `op`.
  bool defined_by(ValueId v, Op op) const { return def_.at(v) && def_[v]->op == op; }
  /// How many operands and region yields read `v` (the function's yield counts too).
  uint32_t uses(ValueId v) const { return uses_.at(v); }
  bool used(ValueId v) const { return uses_.at(v) != 0; }

 private:
  std::vector<const Stmt*> def_;
  std::vector<uint32_t> uses_;
};

}  // namespace kjit::ir

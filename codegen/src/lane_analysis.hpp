// What the cpu's lane functions (forward and adjoint) know about a kernel before writing it:
// which values, variables, branches and loops are the same in every lane of a block (uniform)
// and which differ per lane (varying), which integer values are cheap to recompute, which
// divergent Ifs run inside their lane loop, and which statements must not run for an inactive
// lane.
#pragma once

#include <functional>
#include <set>
#include <vector>

#include "kjit/ir/def_use.hpp"
#include "kjit/ir/ir.hpp"

namespace kjit::codegen {

/// The uniformity analysis of a function whose jumps are lowered (lower_jumps). A value is
/// uniform when every lane computes the same one (constants, parameters and pure operations
/// of them, variables only ever stored uniform values under uniform control); everything else
/// is varying. The analysis runs to a fixed point (a While condition's uniformity depends on
/// its body).
class LaneAnalysis {
 public:
  /// `may_flatten`: a further condition on every statement of a divergent If that runs inside
  /// its lane loop (the adjoint keeps atomic adjoints out of them); null: none.
  explicit LaneAnalysis(const ir::Function& lowered,
                        const std::function<bool(const ir::Stmt&)>& may_flatten = nullptr);

  const ir::Function& fn() const { return fn_; }
  bool varying(ir::ValueId v) const { return varying_.at(v); }
  bool varying_var(int64_t var) const { return varying_var_.at(size_t(var)); }
  bool any_varying(const std::vector<ir::ValueId>& args) const;
  /// Whether varying `v` is a cheap pure integer derived from the thread index (tid,
  /// tid * 3 + 1): a lane loop that uses it recomputes it rather than reading it from a lane
  /// array, which keeps array accesses at it affine (contiguous vector loads, not gathers).
  bool remat(ir::ValueId v) const { return remat_.at(v); }
  /// The statement defining `v` (null for block arguments).
  const ir::Stmt* def(ir::ValueId v) const { return def_use_.def(v); }
  /// Whether If `s` (on a varying condition) runs inside its lane loop, both sides for every
  /// lane under a lane-local bit, as a vectorizer if-converts.
  bool flat(const ir::Stmt& s) const { return flat_.count(&s) != 0; }
  /// Whether `s` is computed once for the block, as ordinary scalar code.
  bool is_uniform_stmt(const ir::Stmt& s) const;
  /// Whether `s` may fault or do work for a lane that should not run it, so that it runs only
  /// for active lanes.
  bool needs_guard(const ir::Stmt& s) const;

  static bool is_control(const ir::Stmt& s) { return ir::op_info(s.op).kind == ir::OpKind::Control; }
  /// A builtin call that must not run for an inactive lane: an effect (expect_near,
  /// breakpoint), a call that reports its site, or a random draw (poisson loops on its input).
  static bool call_needs_guard(const ir::Stmt& call);

 private:
  bool analyze(const ir::Block& b, bool masked);
  void mark_rematerializable();
  bool flattenable(const ir::Stmt& s, int& budget) const;

  const ir::Function& fn_;
  std::function<bool(const ir::Stmt&)> may_flatten_;
  std::vector<bool> varying_;      // by value
  std::vector<bool> varying_var_;  // by local variable
  std::vector<bool> remat_;        // by value
  const ir::DefUse def_use_;
  std::set<const ir::Stmt*> flat_;
};

/// The adjoint lane function's condition on flattening a divergent If (LaneAnalysis's
/// `may_flatten` for `lowered`): nothing in it adds atomically in the reverse sweep (a read at
/// another thread's index); such adds keep lane loops of their own.
std::function<bool(const ir::Stmt&)> no_atomic_adjoint(const ir::Function& lowered);

}  // namespace kjit::codegen

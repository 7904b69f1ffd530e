// The reverse transform's builder: its state while it builds one kernel's adjoint, and its
// steps, defined by concern: reverse_transform.cpp (the adjoint's frame, straight-line code,
// branches, device function calls), reverse_loops.cpp (loops and their checkpoints),
// reverse_struct_print_atomic.cpp (a struct's fields, print() of values, atomic min/max) and
// reverse_function.cpp (what a device function's own adjoint adds).
#pragma once

#include <map>
#include <utility>
#include <vector>

#include "adjoint_loops.hpp"
#include "kjit/ir/builder.hpp"
#include "kjit/ir/ir.hpp"
#include "own_index.hpp"
#include "reverse_rules.hpp"

namespace kjit::codegen {

/// Where a forward value is defined: its statement (none for a loop's induction value), in
/// its block.
struct ForwardDef {
  const ir::Block* block;
  const ir::Stmt* stmt;
};

/// Where each value of block `b` and its regions is defined.
std::map<ir::ValueId, ForwardDef> forward_defs(const ir::Block& b);

/// Builds the adjoint of one jump-lowered kernel or device function (reverse_transform): its adjoint
/// loops (AdjointLoops, the emitter's too) say what each loop checkpoints.
class ReverseBuilder {
 public:
  ReverseBuilder(const ir::Function& in, const AdjointLoops& loops)
      : in_(in), b_(out_), facts_(in), params_(facts_.param_of()), owned_(in), defs_(forward_defs(in.body)), loops_(loops) {}

  /// The adjoint kernel (reverse_transform.hpp).
  ir::Function run();

 private:
  /// An iteration replayed again: each value the loop's body defines (its induction value
  /// too) -> its value in the copy; `keep`: the copy keeps the values the sweep reads out of a
  /// branch (the copy the sweep follows).
  struct Replica {
    std::map<ir::ValueId, ir::ValueId> values;
    bool keep = true;
  };

  /// A branch's forward block and, where its sweep reads them, the values it defines (val);
  /// or a loop's body and the values of the iteration's replay (`iteration`).
  struct Scope {
    const ir::Block* forward;
    std::map<ir::ValueId, ir::ValueId> copies;  ///< value -> its load at the top of the sweep's block
    std::vector<ir::Stmt> loads;
    const std::map<ir::ValueId, ir::ValueId>* iteration = nullptr;
  };

  int64_t new_var(const ir::Type& t, const ir::SourceLoc& loc);

  /// Declares `var` and sets it to zero.
  int64_t declare_zero(ir::Block& b, int64_t var, const ir::SourceLoc& loc);

  /// The zero of `t`: a value built from nothing, T{} in C++ (as the emitter zeroes adjoints
  /// and variables; a half's, an array's too).
  ir::ValueId zero(ir::Block& b, const ir::Type& t, const ir::SourceLoc& loc);

  /// The adjoint variable of `id`, zero, unless it has one.
  void declare_adjoint(ir::Block& b, ir::ValueId id, const ir::SourceLoc& loc);

  int64_t adj_of(ir::ValueId id) const;
  int64_t adj_or_none(ir::ValueId id) const { return facts_.differentiable(id) ? adj_of(id) : -1; }

  /// The forward value `id` where the sweep reads it. The replay's values of the top level are
  /// in scope in the sweep; those of a branch are not (the sweep's branch is another block):
  /// the replay keeps each such value the sweep reads in a variable of its own, declared at
  /// the top, and the sweep's branch that reverses the value's block loads it once, first (a
  /// constant is written there again instead). The emitter declares every value at the top of
  /// the function instead: the same values, so the same bits.
  ir::ValueId val(ir::ValueId id);

  /// For each statement of forward block `b`, the values defined in `b` whose adjoints the
  /// sweep first touches when it reverses it (reverse_rules.hpp, as the emitter's).
  /// Parameters' are declared first.
  std::vector<std::vector<ir::ValueId>> first_touches(const ir::Block& b) const;

  /// Forward block `b` without its effects (the forward launch did those), each value the
  /// sweep reads out of a branch kept (val); as `copy` has it where that is not null (an
  /// iteration replayed again: reverse_loops.cpp).
  void replay(const ir::Block& b, ir::Block& out, const Replica* copy);

  void replay(const ir::Stmt& s, ir::Block& out, const Replica* copy);

  /// Forward block `b` swept back into `out`, last statement first, each value's adjoint
  /// declared where the sweep first touches it.
  void reverse(const ir::Block& b, ir::Block& out);

  /// An If swept back: the same condition (the replay's value), each side's sweep in its
  /// side; the else side only where it has work (as the emitter writes it).
  void reverse_if(const ir::Stmt& s, ir::Block& out);

  /// Whether reversing `s` does anything: it has a reverse rule (AdjointFacts, the emitters'
  /// own test), or a side of its branch or its loop's body (not a While's condition) has. A
  /// statement without work is not swept.
  bool has_work(const ir::Stmt& s) const;
  bool has_work(const ir::Block& b) const;

  /// A call of an adjoint rule that adds into `outs` (one per operand of `s`, -1 for none).
  void call_adjoint(const ir::Stmt& s, ir::Block& out, std::vector<int64_t> outs, bool strong_zero);

  /// A device function call's adjoint, as the emitter calls it: the function's adjoint with
  /// the call's operands, its result, its arrays' adjoint arrays and its result's adjoint,
  /// adding into its operands' adjoint variables (ops.def's CallAdjoint of a CallFunc).
  void call_function_adjoint(const ir::Stmt& s, ir::Block& out);

  /// The adjoint array of differentiable array `array` where the sweep reads it: an array
  /// parameter's adjoint parameter; the gradient buffer of one a struct field holds (GradView,
  /// the emitter's kj::grad_view); a zero array for one over an address, which has none (what
  /// the emitter hands a device function's adjoint for it).
  ir::ValueId adjoint_array(ir::Block& out, ir::ValueId array, const ir::SourceLoc& loc);

  ir::ValueId index_constant(ir::Block& out, int i, const ir::SourceLoc& loc);

  /// Component `i` of `adj`, the adjoint of a Construct of type `t`: what its operand `i`'s
  /// adjoint gains.
  ir::ValueId component(ir::Block& out, ir::ValueId adj, const ir::Type& t, size_t i, const ir::SourceLoc& loc);

  /// The reverse rule of `s`, which has work (the reverse rules' scalar form, as IR).
  void reverse(const ir::Stmt& s, ir::Block& out);

  // ----- a struct's fields, print() of values, atomic min/max ------------------------------
  /// An Insert into a struct's field swept back as the emitter's rule: the field's operand
  /// gains the field of the result's adjoint, the struct's operand the rest of it.
  void reverse_struct_insert(const ir::Stmt& s, ir::Block& out);

  /// print() of values swept back: the adjoints of the values it printed, printed (a zero for
  /// one that is not floating), as the emitter prints them (ops.def's CallAdjoint of a Print).
  void reverse_print(const ir::Stmt& s, ir::Block& out);

  /// atomic_min or atomic_max swept back: the value that won takes the element's adjoint
  /// (ops.def's CallAdjoint of an ArrayAtomic, kj::adj_atomic_select).
  void reverse_atomic_select(const ir::Stmt& s, ir::Block& out);

  // ----- device functions (reverse_function.cpp) -------------------------------------------
  /// A device function's sweep starts from its result's adjoint, which the caller hands in
  /// (the adjoint's last parameter, kj_adj_ret): declared, then gains it, first in `sweep`, as
  /// the emitter writes it. Nothing for a kernel, or a function whose result has no adjoint.
  void seed_result(ir::Block& sweep);

  // ----- loops ---------------------------------------------------------------------------
  /// `s` with its operands, result and regions' arguments and yields as `copy` has them (its
  /// regions empty); an operand from outside the copy as the sweep reads it (val).
  ir::Stmt replica(const ir::Stmt& s, const Replica* copy);

  /// A new value for each value `b`'s statements define, in their regions too.
  void fresh_values(const ir::Block& b, std::map<ir::ValueId, ir::ValueId>& out);

  static const ir::Block& loop_body(const ir::Stmt& loop) { return loop.regions[loop.op == ir::Op::For ? 0 : 1]; }

  /// Part `part` of the checkpoints of loop `index`.
  ir::Stmt checkpoint(size_t index, ir::CheckpointPart part, const ir::SourceLoc& loc);

  /// The loops' bookkeeping at the top: the overflow flag, each loop's counters and slots, and
  /// the copies of what it only reads, as the adjoint emitter declares them.
  void declare_loops(ir::Block& body);

  /// A loop replayed, keeping checkpoints of what it changes (the adjoint emitter's replay):
  /// the copies of what it only reads, its counters set back, then the loop, each iteration
  /// first checkpointed (when one is due) and counted.
  void replay_loop(const ir::Stmt& s, ir::Block& out, const Replica* copy);

  /// Iteration k (block argument of `region`) of loop `s` replayed into `region`: a For's
  /// induction value begin + k * step first (the adjoint emitter's), then the body as a copy.
  Replica iteration(const ir::Stmt& s, ir::Block& region, bool keep);

  /// A loop swept back as the adjoint emitter does: what it only reads restored, then segment
  /// by segment from its checkpoints (ReverseSegments), each iteration replayed and swept back,
  /// its values' adjoints zero in each.
  void reverse_loop(const ir::Stmt& s, ir::Block& out);

  const ir::Function& in_;
  ir::Function out_;
  ir::Builder b_;
  const AdjointFacts facts_;
  const std::map<ir::ValueId, size_t>& params_;  ///< Param values and their parameter index
  OwnedArrays owned_;
  std::map<ir::ValueId, ir::ValueId> adj_array_;  ///< array parameter -> its adjoint array (adjoint_array)
  std::map<ir::ValueId, int64_t> adj_;            ///< value -> its adjoint variable
  std::map<int64_t, int64_t> adj_var_of_var_;     ///< variable -> its adjoint variable
  const std::map<ir::ValueId, ForwardDef> defs_;  ///< where each forward value is defined
  std::map<ir::ValueId, int64_t> kept_;  ///< a branch's value the sweep reads -> the variable keeping it
  std::vector<Scope> scopes_;            ///< the branches and iterations the sweep is in, innermost last
  const AdjointLoops& loops_;
  int64_t overflow_ = -1;  ///< the flag a loop past its checkpoint bound sets (with loops)
  std::map<std::pair<size_t, int64_t>, int64_t> readonly_;  ///< (loop, variable) -> its copy at the loop's entry
};

}  // namespace kjit::codegen

// The reverse rule of each statement (what its adjoint adds to which adjoints), described
// once for both adjoints that write it: the scalar body (adjoint_emitter.hpp) and the cpu's
// lane function (adjoint_lanes.hpp), which runs it under masks.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "expr_emitter.hpp"
#include "own_index.hpp"
#include "source_writer.hpp"

namespace kjit::codegen {

/// A local adjoint a rule changes: a value's or a local variable's.
struct AdjTarget {
  bool var = false;  ///< a local variable's (else a value's)
  int64_t id = 0;    ///< the value id or the variable index
  bool operator<(const AdjTarget& o) const { return var != o.var ? var < o.var : id < o.id; }
  bool operator==(const AdjTarget& o) const { return var == o.var && id == o.id; }
};

/// One step of a reverse rule. Steps read adjoints by their names (Names::adj_value, adj_var).
struct RuleStep {
  enum class Kind {
    Add,     ///< outs[0] += text[0]
    Sub,     ///< outs[0] -= text[0]
    Zero,    ///< outs[0] = {}
    Call,    ///< text[0] outs[0] text[1] outs[1] ... text[n]: code that adds into each out
    Effect,  ///< text[0]: writes adjoint arrays or prints; changes no local adjoint
  };
  Kind kind = Kind::Effect;
  std::vector<AdjTarget> outs;
  std::vector<std::string> text;
};

/// The reverse rule of one statement: no steps when nothing flows back through it.
struct ReverseRule {
  std::vector<RuleStep> steps;
  /// Strong zero: the adjoint whose exact zero skips the rule (an inf or NaN partial times
  /// a zero adjoint would give NaN); empty when the rule always runs.
  std::string nonzero;
  /// A condition on the steps: "adj_p_x.data" (the caller passed that adjoint array).
  std::string when;
  /// The rule adds atomically to memory other threads add to (an array read at another
  /// thread's index, an atomic min/max): the lane function gives it a lane loop of its own.
  bool atomic = false;
  /// The adjoints the steps read besides their outs (the result's, a variable's, printed ones).
  std::vector<AdjTarget> reads;
  std::string comment;  ///< appended to a scalar Effect line
  bool empty() const { return steps.empty(); }
};

/// Which values, variables and arrays of one lowered function have adjoints, and which of its
/// statements have a reverse rule: facts of the IR alone, read by the emitters' rules and by
/// the reverse transform alike.
class AdjointFacts {
 public:
  explicit AdjointFacts(const ir::Function& fn);

  bool differentiable(ir::ValueId v) const;
  bool var_differentiable(int64_t var) const;
  /// Whether `array` has an adjoint array: a parameter's, or the gradient buffer of an array
  /// a struct field holds (arrays built in the kernel from an address have none).
  bool has_adj_array(ir::ValueId array) const { return param_of_.count(array) || field_arrays_.count(array); }
  /// The parameter index of each Param value.
  const std::map<ir::ValueId, size_t>& param_of() const { return param_of_; }
  /// Whether `s` has a reverse rule (ReverseRules::rule(s) is not empty): it adds to an
  /// adjoint or an adjoint array, or prints adjoints. Control flow has none (its regions are
  /// reversed); statements an adjoint cannot contain have one, which rule() refuses.
  bool has_rule(const ir::Stmt& s) const;

 protected:
  const ir::Function& fn_;
  std::map<ir::ValueId, size_t> param_of_;
  std::set<ir::ValueId> field_arrays_;  ///< arrays read out of struct fields
};

/// Reverse rules of the statements of one lowered function.
class ReverseRules : public AdjointFacts {
 public:
  ReverseRules(const ir::Function& fn, const Names& names, ExprEmitter& ex);

  /// The name of `array`'s adjoint array (has_adj_array).
  std::string adj_array(ir::ValueId array) const;
  /// Whether every read of `array` is at the thread's own launch index (OwnedArrays).
  bool owned(ir::ValueId array) { return owned_(array); }

  /// The rule of `s` (empty unless has_rule(s)).
  ReverseRule rule(const ir::Stmt& s);

 private:
  std::string component(const std::string& value, const ir::Type& t, int i) const;

  const Names& names_;
  ExprEmitter& ex_;
  OwnedArrays owned_;
};

/// Whether reversing a statement or a block does anything: the one rule of both adjoints, read
/// from ops.def's `adjoint` column (None: nothing flows back; Rule: the statement's rule runs;
/// Regions: its reversed regions have work: an If's sides, a loop's body, not a While's
/// condition). A rule runs when it is not empty and adds to a tracked adjoint (a loaded,
/// stored or computed value's, a variable's), or when it has an effect (an atomic min/max
/// consumes its element's adjoint; a print, a device function's adjoint). A statement without
/// work is not reversed at all: a loop's reverse neither restores nor replays it, an If's is
/// not written.
class ReverseWork {
 public:
  /// Which local adjoints the adjoint computes: the scalar body every differentiable one, the
  /// lane function those of values that differ per lane (and of printed uniform ones).
  using Tracked = std::function<bool(const AdjTarget&)>;
  ReverseWork(ReverseRules& rules, Tracked tracked) : rules_(rules), tracked_(std::move(tracked)) {}

  /// Whether statement `s`, whose rule is `r`, has work.
  bool runs(const ir::Stmt& s, const ReverseRule& r) const;
  /// Whether reversing `s` does anything.
  bool has_work(const ir::Stmt& s);
  /// Whether reversing `b` does anything.
  bool has_work(const ir::Block& b);

 private:
  ReverseRules& rules_;
  Tracked tracked_;
  std::map<const ir::Block*, bool> blocks_;
};

/// For each statement of `b`, the values whose adjoints a sweep first touches when it reverses
/// that statement: the last statement (in program order) that defines or reads them, counting
/// the statements inside its regions; of the values `declared_here` says the sweep declares
/// the adjoints of in `b` (those `b` defines, but parameters). Both scalar adjoints (the
/// emitter's text, the reverse transform's IR) declare each adjoint there, zero.
std::vector<std::vector<ir::ValueId>> first_touches(const ir::Block& b,
                                                    const std::function<bool(ir::ValueId)>& declared_here);

/// Writes `r` as one thread runs it, each step adding into its adjoint directly.
void write_scalar_rule(SourceWriter& w, const ReverseRule& r, const Names& n, int indent, const ir::SourceLoc& loc);

/// The name of target `t`'s adjoint in generated code.
std::string adj_name(const Names& n, const AdjTarget& t);

}  // namespace kjit::codegen

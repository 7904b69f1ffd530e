// Names of values in generated code, and the C++ expression each value-producing statement
// computes. Shared by the forward emitter and the adjoint's forward replay.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kjit/ir/def_use.hpp"
#include "kjit/ir/ir.hpp"
#include "prelude.hpp"

namespace kjit::codegen {

/// Identifier of kernel parameter `index` ("p_x"), of local variable `var` ("var2"), of
/// value `v` ("v12"), and of the adjoint of each.
/// Whether an array element of type `t` is read and written component by component
/// (kj::load_of / kj::store_to): vectors and matrices. GCC copies a 12-byte vec3 as 8 + 4
/// bytes through the stack, and reading 8 bytes that two 4-byte stores just wrote stalls
/// store forwarding (Warp's particle step: 0.79 -> 0.020 ms for 200,000 vec3 updates).
inline bool copies_by_component(const ir::Type& t) {
  return !t.is_array() && (t.shape == ir::Shape::Vector || t.shape == ir::Shape::Matrix);
}

struct Names {
  explicit Names(const ir::Function& fn);
  const std::string& value(ir::ValueId v) const { return values.at(v); }
  std::string var(int64_t var) const { return "var" + std::to_string(var); }
  std::string adj_value(ir::ValueId v) const { return "adj_v" + std::to_string(v); }
  std::string adj_var(int64_t var) const { return "adj_var" + std::to_string(var); }
  std::string param(size_t index) const;
  std::string adj_param(size_t index) const { return "adj_" + param(index); }

  const ir::Function& fn;
  std::vector<std::string> values;
};

/// The condition under which a For loop with induction `i` runs another iteration: toward
/// `end` in the direction of `step`; a zero step runs none.
std::string for_condition(const std::string& i, const std::string& end, const std::string& step);

/// The C++ text of a literal of scalar type `t` (from a Const statement).
std::string const_literal(const ir::Stmt& s);

/// The name of a device function adjoint's last parameter: its caller's adjoint of the result
/// (the signature's, the emitter's and the reverse transform's seed, a user adjoint's binding).
inline constexpr const char kAdjointOfResult[] = "kj_adj_ret";

/// Whether generated array parameter `a` is there: a launch passes no adjoint array for an
/// argument whose gradient it does not want, and a user adjoint's call none for an argument
/// that has no adjoint, so every access to such an array is guarded by this condition.
inline std::string array_present(const std::string& a) { return a + ".data"; }
/// `if (<a is there>) `, put before a statement that touches array `a` (array_present).
inline std::string if_present(const std::string& a) { return "if (" + array_present(a) + ") "; }
/// The adjoint array of array `a` that no parameter is (a struct field holds it): its own
/// gradient buffer (the emitter's rules' adjoint array and the reverse transform's GradView).
inline std::string grad_view(const std::string& a) { return "kj::grad_view(" + a + ")"; }

/// The call of device function `name`'s adjoint, as its adjoint's signature takes them:
/// adj_<name>(dim, kj_index, the operands, the result (none: ""), the adjoint of each
/// differentiable operand, the result's adjoint (none: "")), in pieces around the adjoint
/// variables it adds into (RuleStep::Call's form): `adjoints` holds, per differentiable
/// operand, its adjoint array's text, or "" for a value's adjoint variable, which goes between
/// two pieces. The emitter's rule and the reverse transform's CallAdjoint both write it here.
std::vector<std::string> function_adjoint_call(const std::string& name, const std::vector<std::string>& operands,
                                               const std::string& result, const std::vector<std::string>& adjoints,
                                               const std::string& adj_ret);

/// The C++ names of a module's device functions (kjit/dsl/functions.hpp), by IR function.
using FunctionNames = std::map<const ir::Function*, std::string>;

/// The identifier of field `field` of struct type `t` ("mass").
const std::string& field_name(const ir::Type& t, int64_t field);
/// The setter generated for a user struct's field ("kj::demo__Particle__set_mass").
std::string field_setter(const ir::Type& t, int64_t field);

/// The adjoint of atomic_min/atomic_max of `value` into the element at `indices` (", v3") of
/// `array`, whose adjoint array is `adj_array`: the text before and after the value's adjoint
/// (kj::adj_atomic_select: the value that won takes the element's adjoint, per component).
/// Both adjoint printers (the emitter's rules and the reverse transform's CallAdjoint) write it.
std::pair<std::string, std::string> atomic_select_adjoint(const std::string& array, const std::string& indices,
                                                          const std::string& value, const std::string& adj_array);
/// What follows a struct's adjoint to add `adj`, the adjoint of its field `field`, into it
/// (".mass += adj_v4"): the rule of Extract of a struct, in both adjoint printers.
std::string field_adjoint_add(const ir::Type& whole, int64_t field, const std::string& adj);

/// Writes expressions for value-producing statements (the prelude chunks they call were
/// planned from the IR: prelude_requirements.hpp).
class ExprEmitter {
 public:
  explicit ExprEmitter(const Names& names, const FunctionNames* functions = nullptr)
      : n_(names), functions_(functions) {}

  /// Whether `s` produces its value with an expression (rather than being control flow,
  /// a store, an atomic or a print).
  static bool is_expression(const ir::Stmt& s);
  /// The expression computing `s`'s value, e.g. "kj::sin(v3)" or "v4 * v5".
  std::string expr(const ir::Stmt& s);
  /// "kj::elem(p_x, v4)": the element an array access refers to (args[0] array, then
  /// `count` indices).
  std::string element(const ir::Stmt& s, size_t count) const;
  /// The expression of an atomic statement (a call returning the previous value; an exchange
  /// whose previous value nothing reads is kj::atomic_exch_unread, a plain atomic store on the
  /// cpu, where a locked exchange costs several times as much).
  std::string atomic(const ir::Stmt& s);
  /// An atomic add (sub) of `value` into `element` of `array`: kj::array_add, which adds
  /// plainly into a cpu thread's private copy of the array, for the element kinds the runtime
  /// privatizes (private_adds.hpp), else kj::atomic_add.
  std::string add_into(const std::string& array, const std::string& element, const std::string& value,
                       const ir::Type& element_type, bool sub = false);
  /// The add of adjoint `value` into `element` of adjoint array `array`: kj::own_add where each
  /// thread adds only to its own element (`own`: a plain add), else add_into. Both adjoint
  /// printers (the emitter's rules and the reverse transform's AdjArrayAdd) write it here.
  std::string adjoint_add(const std::string& array, const std::string& element, const std::string& value,
                          const ir::Type& element_type, bool own);
  /// The comment an own-element adjoint add carries.
  static constexpr const char* kOwnAddComment = "  // own element: plain add";
  /// The call of adjoint rule CallAdjoint `s` ("kj::adj_sin_ref(v3, v4, var7, v9)"): the
  /// forward operands, the result, the adjoint variables it adds into, the result's adjoint
  /// (a device function's adjoint: as the adjoint emitter calls it).
  std::string call_adjoint(const ir::Stmt& s) const;
  /// The call of device function CallFunc `s` (`replay`: its side-effect-free variant), or of
  /// the gradient GradFunc `s` takes (grad_<name>).
  std::string call_function(const ir::Stmt& s, bool replay);
  /// The name a module gives device function `f`.
  const std::string& function_name(const ir::Function& f) const;
  /// printf(...) of a Print statement (`adjoint`: the adjoints of its arguments, for the
  /// reverse sweep of print()), or of the reverse transform's CallAdjoint of one (its
  /// arguments are the adjoints it prints).
  std::string print(const ir::Stmt& s, bool adjoint) const;

 private:
  std::string call(const ir::Stmt& s);
  /// CallAdjoint `s` of a device function call: adj_<name>(dim, kj_index, operands, result,
  /// each differentiable operand's adjoint array or variable, the result's adjoint).
  std::string function_adjoint(const ir::Stmt& s) const;
  /// A TangentCall: the builtin's prelude tangent function, or its forward function on duals.
  std::string tangent_call(const ir::Stmt& s);
  /// Whether anything reads `s`'s result (the use counts of the function, found once).
  bool result_read(const ir::Stmt& s);
  const Names& n_;
  const FunctionNames* functions_;
  std::shared_ptr<const ir::DefUse> def_use_;
};

}  // namespace kjit::codegen

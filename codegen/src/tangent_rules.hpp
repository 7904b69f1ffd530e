// The tangent (forward-mode) rules of the builtins and the context they build IR in. Each
// rule appends the statements computing the derivative of one builtin call in the direction
// of its arguments' tangents: over other builtins where it can (so that the tangent kernel
// is itself differentiable, for second derivatives), else as one TangentCall statement that
// the prelude evaluates (a dual-number evaluation of the builtin, or a prelude function).
#pragma once

#include <cstddef>
#include <vector>

#include "kjit/ir/ir.hpp"

namespace kjit::codegen {

/// Where a rule builds: the call, the tangents of its arguments and builders that know
/// zeros. A tangent of kNoValue is an exact zero: the builders propagate it (x * 0 is 0,
/// x + 0 is x, where(c, 0, 0) is 0) and materialise it only where an operand must exist, so
/// constants and non-differentiable inputs cost nothing in the tangent kernel.
class TangentContext {
 public:
  /// `tangents[k]` is the tangent of `call.args[k]` (kNoValue: zero, or not floating).
  TangentContext(ir::Function& fn, ir::Block& out, const ir::Stmt& call, std::vector<ir::ValueId> tangents);

  const ir::Stmt& call() const { return call_; }
  /// Argument k, its tangent, the call's result.
  ir::ValueId a(size_t k) const { return call_.args.at(k); }
  ir::ValueId d(size_t k) const { return tangents_.at(k); }
  ir::ValueId r() const { return call_.result; }
  size_t arity() const { return call_.args.size(); }
  ir::Type type(ir::ValueId v) const { return fn_.type_of(v); }

  // Zero-aware arithmetic (kNoValue operands are zeros).
  ir::ValueId add(ir::ValueId x, ir::ValueId y);
  ir::ValueId sub(ir::ValueId x, ir::ValueId y);
  ir::ValueId neg(ir::ValueId x);
  ir::ValueId mul(ir::ValueId x, ir::ValueId y);
  /// x * y + z, fused (the fma builtin: one rounding, one operation on the chain through x or
  /// y) where one of x and y is a float32/float64 scalar and the other a scalar, vector,
  /// matrix or quaternion of its type; else a product and a sum.
  ir::ValueId mul_add(ir::ValueId x, ir::ValueId y, ir::ValueId z);
  /// x / y: zero when x is.
  ir::ValueId div(ir::ValueId x, ir::ValueId y);
  /// where(c, x, y): zero when both are.
  ir::ValueId where(ir::ValueId c, ir::ValueId x, ir::ValueId y);
  /// Builtin `b` of `args` (no zeros among them), its type from the builtin's type rule.
  ir::ValueId call(ir::Builtin b, std::vector<ir::ValueId> args);
  /// The scalar constant `v` of `like`'s scalar kind.
  ir::ValueId constant(double v, const ir::Type& like);
  /// The zero of type `t` (a constant, or an aggregate with no operands).
  ir::ValueId zero(const ir::Type& t);
  /// `x`, or the zero of type `t` when x is zero.
  ir::ValueId value_or_zero(ir::ValueId x, const ir::Type& t);
  /// Component i of a vector, quaternion or transform, row i of a matrix (zero for a zero).
  ir::ValueId component(ir::ValueId x, const ir::Type& whole, int i);
  /// The value of type `t` with `parts` (zeros allowed) as its components; zero if all are.
  ir::ValueId construct(const ir::Type& t, const std::vector<ir::ValueId>& parts);
  /// `whole` with row or component i replaced by `part`.
  ir::ValueId insert(ir::ValueId whole, ir::ValueId part, int i);
  /// The TangentCall of builtin `as` on this call's arguments and their tangents.
  ir::ValueId tangent_call(ir::Builtin as);

 private:
  ir::ValueId emit(ir::Op op, const ir::Type& t, std::vector<ir::ValueId> args, int64_t imm, uint64_t bits = 0);
  ir::ValueId index(int i);

  ir::Function& fn_;
  ir::Block& out_;
  const ir::Stmt& call_;
  std::vector<ir::ValueId> tangents_;
};

/// A builtin's tangent rule: appends the IR of the tangent of `ctx.call()` and returns it
/// (kNoValue: exactly zero). `set` says, at compile time, whether there is one (the address
/// of a function is not a constant to every compiler: GCC's sanitizer builds cannot compare
/// it with null in a static_assert).
struct TangentRule {
  using Fn = ir::ValueId (*)(TangentContext& ctx);
  constexpr TangentRule(Fn f) : fn(f), set(true) {}
  constexpr TangentRule(std::nullptr_t) : fn(nullptr), set(false) {}
  Fn fn;
  bool set;
};

/// The rules builtins.def names (KJ_TANGENT). Several builtins share one:
/// `linear` (the call on the tangents), `bilinear` (f(da, b) + f(a, db)), `tangent_call`.
namespace tangent_rules {
ir::ValueId linear(TangentContext&);
ir::ValueId bilinear(TangentContext&);
ir::ValueId identity(TangentContext&);
ir::ValueId tangent_call(TangentContext&);
ir::ValueId add(TangentContext&);
ir::ValueId sub(TangentContext&);
ir::ValueId neg(TangentContext&);
ir::ValueId mul(TangentContext&);
ir::ValueId div(TangentContext&);
ir::ValueId mod(TangentContext&);
ir::ValueId sin(TangentContext&);
ir::ValueId cos(TangentContext&);
ir::ValueId tan(TangentContext&);
ir::ValueId exp(TangentContext&);
ir::ValueId log(TangentContext&);
ir::ValueId sqrt(TangentContext&);
ir::ValueId pow(TangentContext&);
ir::ValueId abs(TangentContext&);
ir::ValueId min(TangentContext&);
ir::ValueId max(TangentContext&);
ir::ValueId clamp(TangentContext&);
ir::ValueId acos(TangentContext&);
ir::ValueId asin(TangentContext&);
ir::ValueId atan(TangentContext&);
ir::ValueId atan2(TangentContext&);
ir::ValueId cbrt(TangentContext&);
ir::ValueId copysign(TangentContext&);
ir::ValueId cosh(TangentContext&);
ir::ValueId sinh(TangentContext&);
ir::ValueId tanh(TangentContext&);
ir::ValueId erf(TangentContext&);
ir::ValueId erfc(TangentContext&);
ir::ValueId erfinv(TangentContext&);
ir::ValueId erfcinv(TangentContext&);
ir::ValueId log2(TangentContext&);
ir::ValueId log10(TangentContext&);
ir::ValueId length(TangentContext&);
ir::ValueId normalize(TangentContext&);
ir::ValueId length_sq(TangentContext&);
ir::ValueId norm_l1(TangentContext&);
ir::ValueId norm_huber(TangentContext&);
ir::ValueId norm_pseudo_huber(TangentContext&);
ir::ValueId smooth_normalize(TangentContext&);
ir::ValueId cw_div(TangentContext&);
ir::ValueId determinant(TangentContext&);
ir::ValueId inverse(TangentContext&);
ir::ValueId lerp(TangentContext&);
ir::ValueId fma(TangentContext&);
ir::ValueId smoothstep(TangentContext&);
}  // namespace tangent_rules

}  // namespace kjit::codegen

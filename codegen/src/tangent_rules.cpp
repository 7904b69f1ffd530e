// The tangent rules of the builtins, as IR over other builtins. Each follows its adjoint in
// the prelude (the same partials, the same conventions at kinks and ties: docs/AUTODIFF.md),
// so that <J v, w> = <v, J^T w> holds exactly where the adjoint's rule is exact.
#include "tangent_rules.hpp"

#include "kjit/error.hpp"

namespace kjit::codegen::tangent_rules {

namespace {
using B = ir::Builtin;
using V = ir::ValueId;
constexpr V kZero = ir::kNoValue;

V c(TangentContext& x, double v) { return x.constant(v, x.type(x.r())); }
V f(TangentContext& x, B b, std::vector<V> args) { return x.call(b, std::move(args)); }
/// `scale` * the tangent of argument 0: the rule of a unary function with derivative `scale`.
V chain(TangentContext& x, V scale) { return x.mul(scale, x.d(0)); }

/// The tangent of a componentwise function of vectors: `scalar(components of the arguments,
/// their tangents)` per component, put back together.
template <class Scalar>
V per_component(TangentContext& x, Scalar scalar) {
  const ir::Type& t = x.type(x.r());
  std::vector<V> parts;
  for (int i = 0; i < t.rows; ++i) {
    std::vector<V> args, tangents;
    for (size_t k = 0; k < x.arity(); ++k) {
      args.push_back(x.component(x.a(k), x.type(x.a(k)), i));
      tangents.push_back(x.component(x.d(k), x.type(x.a(k)), i));
    }
    parts.push_back(scalar(args, tangents));
  }
  return x.construct(t, parts);
}

/// where(x > 0, dx, where(x < 0, -dx, 0)): the derivative of |x| times dx, 0 at 0.
V abs_tangent(TangentContext& x, V v, V dv) {
  if (dv == kZero) return kZero;
  V zero = x.constant(0, x.type(v));
  return x.where(f(x, B::Gt, {v, zero}), dv, x.where(f(x, B::Lt, {v, zero}), x.neg(dv), kZero));
}
}  // namespace

V linear(TangentContext& x) {
  std::vector<V> args;
  bool any = false;
  for (size_t k = 0; k < x.arity(); ++k) {
    const ir::Type& t = x.type(x.a(k));
    if (!t.is_differentiable()) {
      args.push_back(x.a(k));  // a condition or an index: the same in the tangent
      continue;
    }
    any = any || x.d(k) != kZero;
    args.push_back(x.value_or_zero(x.d(k), t));
  }
  return any ? x.call(x.call().builtin(), args) : kZero;
}

V bilinear(TangentContext& x) {
  const B b = x.call().builtin();
  V left = x.d(0) == kZero ? kZero : f(x, b, {x.d(0), x.a(1)});
  V right = x.d(1) == kZero ? kZero : f(x, b, {x.a(0), x.d(1)});
  return x.add(left, right);
}

V identity(TangentContext& x) { return x.d(0); }

V tangent_call(TangentContext& x) { return x.tangent_call(x.call().builtin()); }

V add(TangentContext& x) { return x.add(x.d(0), x.d(1)); }
V sub(TangentContext& x) { return x.sub(x.d(0), x.d(1)); }
V neg(TangentContext& x) { return x.neg(x.d(0)); }

V mul(TangentContext& x) {
  // The product of transforms composes them (a rotation of b's translation): not bilinear.
  if (x.type(x.a(0)).shape == ir::Shape::Transform && x.type(x.a(1)).shape == ir::Shape::Transform)
    return x.tangent_call(B::TransformMultiply);
  // da b + a db, fused where mul_add can: the tangent defined last (most likely the one a loop
  // carries, as `dw` in `w = w * c`) goes into the fused product, so that the chain through it
  // is one operation per iteration, as the primal's is. A zero tangent (kZero, the largest id)
  // leaves the other product alone.
  if (x.d(0) > x.d(1) && x.d(0) != kZero) return x.mul_add(x.d(0), x.a(1), x.mul(x.a(0), x.d(1)));
  return x.mul_add(x.a(0), x.d(1), x.mul(x.d(0), x.a(1)));
}

V div(TangentContext& x) {
  const ir::Type &ta = x.type(x.a(0)), &tb = x.type(x.a(1));
  if (ta.is_scalar() && tb.is_vector()) {  // s / v, componentwise: ds / v - r dv / v
    V left = x.div(x.d(0), x.a(1));
    V right = x.d(1) == kZero ? kZero : f(x, B::CwDiv, {f(x, B::CwMul, {x.r(), x.d(1)}), x.a(1)});
    return x.sub(left, right);
  }
  // (da - r db) / b
  return x.div(x.sub(x.d(0), x.mul(x.r(), x.d(1))), x.a(1));
}

V mod(TangentContext& x) {  // d/da = 1, d/db = -trunc(a / b) = -(a - r) / b
  return x.sub(x.d(0), x.mul(x.div(f(x, B::Sub, {x.a(0), x.r()}), x.a(1)), x.d(1)));
}

V sin(TangentContext& x) { return chain(x, f(x, B::Cos, {x.a(0)})); }
V cos(TangentContext& x) { return x.neg(chain(x, f(x, B::Sin, {x.a(0)}))); }
V tan(TangentContext& x) { return chain(x, f(x, B::Add, {c(x, 1), f(x, B::Mul, {x.r(), x.r()})})); }
V exp(TangentContext& x) { return chain(x, x.r()); }
V log(TangentContext& x) { return x.div(x.d(0), x.a(0)); }
V sqrt(TangentContext& x) { return x.div(x.d(0), f(x, B::Mul, {c(x, 2), x.r()})); }

V pow(TangentContext& x) {
  V base = x.d(0) == kZero ? kZero
                           : x.mul(x.d(0), f(x, B::Mul, {x.a(1), f(x, B::Pow, {x.a(0), f(x, B::Sub, {x.a(1), c(x, 1)})})}));
  V exponent = x.d(1) == kZero ? kZero
                               : x.where(f(x, B::Gt, {x.a(0), c(x, 0)}),
                                         x.mul(x.d(1), f(x, B::Mul, {x.r(), f(x, B::Log, {x.a(0)})})), kZero);
  return x.add(base, exponent);
}

V abs(TangentContext& x) {
  if (x.type(x.a(0)).is_scalar()) return abs_tangent(x, x.a(0), x.d(0));
  return per_component(x, [&](const std::vector<V>& v, const std::vector<V>& d) { return abs_tangent(x, v[0], d[0]); });
}

namespace {
/// min (`is_min`) or max: the tangent of the selected operand, the first on ties; of one
/// vector, the tangent of the first component holding the extreme value.
V min_max(TangentContext& x, bool is_min) {
  auto pick = [&](V a, V b, V da, V db) {
    if (da == kZero && db == kZero) return kZero;
    V second = is_min ? f(x, B::Lt, {b, a}) : f(x, B::Lt, {a, b});
    return x.where(second, db, da);
  };
  const ir::Type& t = x.type(x.a(0));
  if (x.arity() == 1) {
    if (x.d(0) == kZero) return kZero;
    V out = x.component(x.d(0), t, t.rows - 1);
    for (int i = t.rows - 2; i >= 0; --i)
      out = x.where(f(x, B::Eq, {x.component(x.a(0), t, i), x.r()}), x.component(x.d(0), t, i), out);
    return out;
  }
  if (t.is_scalar()) return pick(x.a(0), x.a(1), x.d(0), x.d(1));
  return per_component(x, [&](const std::vector<V>& v, const std::vector<V>& d) { return pick(v[0], v[1], d[0], d[1]); });
}
}  // namespace

V min(TangentContext& x) { return min_max(x, true); }
V max(TangentContext& x) { return min_max(x, false); }

V clamp(TangentContext& x) {  // lo when x < lo, hi when hi < x, else x (at the limits: x)
  return x.where(f(x, B::Lt, {x.a(0), x.a(1)}), x.d(1), x.where(f(x, B::Lt, {x.a(2), x.a(0)}), x.d(2), x.d(0)));
}

namespace {
/// sqrt(1 - x^2), the denominator of asin' and acos'.
V unit_root(TangentContext& x) { return f(x, B::Sqrt, {f(x, B::Sub, {c(x, 1), f(x, B::Mul, {x.a(0), x.a(0)})})}); }
}  // namespace

V acos(TangentContext& x) { return x.neg(x.div(x.d(0), unit_root(x))); }
V asin(TangentContext& x) { return x.div(x.d(0), unit_root(x)); }
V atan(TangentContext& x) { return x.div(x.d(0), f(x, B::Add, {c(x, 1), f(x, B::Mul, {x.a(0), x.a(0)})})); }

V atan2(TangentContext& x) {  // (x dy - y dx) / (x^2 + y^2), 0 at the origin
  V y = x.a(0), xx = x.a(1);
  V r2 = f(x, B::Add, {f(x, B::Mul, {xx, xx}), f(x, B::Mul, {y, y})});
  V num = x.sub(x.mul(xx, x.d(0)), x.mul(y, x.d(1)));
  return x.where(f(x, B::Gt, {r2, c(x, 0)}), x.div(num, r2), kZero);
}

V cbrt(TangentContext& x) {  // dx / (3 r^2), 0 at 0
  if (x.d(0) == kZero) return kZero;
  V denominator = f(x, B::Mul, {c(x, 3), f(x, B::Mul, {x.r(), x.r()})});
  return x.where(f(x, B::Ne, {x.r(), c(x, 0)}), x.div(x.d(0), denominator), kZero);
}

V copysign(TangentContext& x) {  // ±dx, the product of the signs; y only chooses the sign
  if (x.d(0) == kZero) return kZero;
  V same = f(x, B::Eq, {f(x, B::Lt, {x.a(0), c(x, 0)}), f(x, B::Lt, {x.r(), c(x, 0)})});
  return x.where(same, x.d(0), x.neg(x.d(0)));
}

V cosh(TangentContext& x) { return chain(x, f(x, B::Sinh, {x.a(0)})); }
V sinh(TangentContext& x) { return chain(x, f(x, B::Cosh, {x.a(0)})); }
V tanh(TangentContext& x) { return chain(x, f(x, B::Sub, {c(x, 1), f(x, B::Mul, {x.r(), x.r()})})); }

namespace {
/// 2 / sqrt(pi) exp(-x^2), the derivative of erf.
V erf_slope(TangentContext& x) {
  return f(x, B::Mul, {c(x, 1.1283791670955126), f(x, B::Exp, {f(x, B::Neg, {f(x, B::Mul, {x.a(0), x.a(0)})})})});
}
/// sqrt(pi) / 2 exp(r^2), the derivative of erfinv.
V erfinv_slope(TangentContext& x) {
  return f(x, B::Mul, {c(x, 0.886226925452758), f(x, B::Exp, {f(x, B::Mul, {x.r(), x.r()})})});
}
}  // namespace

V erf(TangentContext& x) { return x.d(0) == kZero ? kZero : chain(x, erf_slope(x)); }
V erfc(TangentContext& x) { return x.d(0) == kZero ? kZero : x.neg(chain(x, erf_slope(x))); }
V erfinv(TangentContext& x) { return x.d(0) == kZero ? kZero : chain(x, erfinv_slope(x)); }
V erfcinv(TangentContext& x) { return x.d(0) == kZero ? kZero : x.neg(chain(x, erfinv_slope(x))); }
V log2(TangentContext& x) { return x.div(x.d(0), f(x, B::Mul, {x.a(0), c(x, 0.6931471805599453)})); }
V log10(TangentContext& x) { return x.div(x.d(0), f(x, B::Mul, {x.a(0), c(x, 2.302585092994046)})); }

V length(TangentContext& x) {  // dot(v, dv) / |v|, 0 at the origin
  if (x.d(0) == kZero) return kZero;
  return x.where(f(x, B::Gt, {x.r(), c(x, 0)}), x.div(f(x, B::Dot, {x.a(0), x.d(0)}), x.r()), kZero);
}

V normalize(TangentContext& x) {  // (dv - r dot(r, dv)) / |v|, 0 at the origin
  if (x.d(0) == kZero) return kZero;
  V l = f(x, B::Length, {x.a(0)});
  V along = f(x, B::Mul, {x.r(), f(x, B::Dot, {x.r(), x.d(0)})});
  return x.where(f(x, B::Gt, {l, c(x, 0)}), x.mul(x.sub(x.d(0), along), x.div(c(x, 1), l)), kZero);
}

V length_sq(TangentContext& x) {
  return x.d(0) == kZero ? kZero : f(x, B::Mul, {c(x, 2), f(x, B::Dot, {x.a(0), x.d(0)})});
}

V norm_l1(TangentContext& x) {
  const ir::Type& t = x.type(x.a(0));
  V sum = kZero;
  for (int i = 0; i < t.rows; ++i) sum = x.add(sum, abs_tangent(x, x.component(x.a(0), t, i), x.component(x.d(0), t, i)));
  return sum;
}

V norm_huber(TangentContext& x) {  // inside delta: dot(v, dv); outside: delta dot(v, dv) / |v| + ddelta (|v| - delta)
  V v = x.a(0), delta = x.a(1);
  V a = f(x, B::Dot, {v, v});
  V vdv = x.d(0) == kZero ? kZero : f(x, B::Dot, {v, x.d(0)});
  V l = f(x, B::Sqrt, {a});
  V outside = x.add(x.mul(vdv, f(x, B::Div, {delta, l})), x.mul(x.d(1), f(x, B::Sub, {l, delta})));
  return x.where(f(x, B::Le, {a, f(x, B::Mul, {delta, delta})}), vdv, outside);
}

namespace {
/// The tangent of the pseudo-Huber norm h of (v, delta), given h.
V pseudo_huber_tangent(TangentContext& x, V h) {
  V v = x.a(0), delta = x.a(1);
  V vdv = x.d(0) == kZero ? kZero : f(x, B::Dot, {v, x.d(0)});
  V by_delta = x.d(1) == kZero ? kZero
                               : f(x, B::Sub, {f(x, B::Div, {h, delta}),
                                               f(x, B::Div, {f(x, B::Dot, {v, v}), f(x, B::Mul, {delta, h})})});
  return x.add(x.div(vdv, h), x.mul(x.d(1), by_delta));
}
}  // namespace

V norm_pseudo_huber(TangentContext& x) { return pseudo_huber_tangent(x, x.r()); }

V smooth_normalize(TangentContext& x) {  // r = v / h: dv / h - v dh / h^2
  V h = f(x, B::NormPseudoHuber, {x.a(0), x.a(1)});
  V dh = pseudo_huber_tangent(x, h);
  return x.sub(x.div(x.d(0), h), x.mul(x.a(0), x.div(dh, f(x, B::Mul, {h, h}))));
}

V cw_div(TangentContext& x) {  // (da - r db) / b, componentwise
  V num = x.sub(x.d(0), x.d(1) == kZero ? kZero : f(x, B::CwMul, {x.r(), x.d(1)}));
  return num == kZero ? kZero : f(x, B::CwDiv, {num, x.a(1)});
}

V determinant(TangentContext& x) {  // Jacobi: sum over rows i of det(A with row i from dA)
  if (x.d(0) == kZero) return kZero;
  const ir::Type& t = x.type(x.a(0));
  V sum = kZero;
  for (int i = 0; i < t.rows; ++i)
    sum = x.add(sum, f(x, B::Determinant, {x.insert(x.a(0), x.component(x.d(0), t, i), i)}));
  return sum;
}

V inverse(TangentContext& x) {  // d(A^-1) = -A^-1 dA A^-1
  if (x.d(0) == kZero) return kZero;
  return x.neg(f(x, B::Mul, {f(x, B::Mul, {x.r(), x.d(0)}), x.r()}));
}

V lerp(TangentContext& x) {  // da (1 - t) + db t + (b - a) dt
  V t = x.a(2);
  V ends = x.add(x.d(0) == kZero ? kZero : x.mul(x.d(0), f(x, B::Sub, {c(x, 1), t})), x.mul(x.d(1), t));
  return x.add(ends, x.d(2) == kZero ? kZero : x.mul(f(x, B::Sub, {x.a(1), x.a(0)}), x.d(2)));
}

V fma(TangentContext& x) {  // da b + a db + dc
  return x.mul_add(x.d(0), x.a(1), x.mul_add(x.a(0), x.d(1), x.d(2)));
}

V smoothstep(TangentContext& x) {  // 6 t (1 - t) dt inside (0, 1), t = (x - a) / (b - a); 0 outside
  V a = x.a(0), b = x.a(1), v = x.a(2);
  if (x.d(0) == kZero && x.d(1) == kZero && x.d(2) == kZero) return kZero;
  V span = f(x, B::Sub, {b, a});
  V t = f(x, B::Div, {f(x, B::Sub, {v, a}), span});
  V inside = f(x, B::LogicalAnd, {f(x, B::Gt, {t, c(x, 0)}), f(x, B::Lt, {t, c(x, 1)})});
  V slope = f(x, B::Mul, {f(x, B::Mul, {c(x, 6), t}), f(x, B::Sub, {c(x, 1), t})});
  V dt = x.add(x.add(x.div(x.d(2), span), x.mul(x.d(0), f(x, B::Div, {f(x, B::Sub, {v, b}), f(x, B::Mul, {span, span})}))),
               x.neg(x.mul(x.d(1), f(x, B::Div, {t, span}))));
  return x.where(inside, x.mul(slope, dt), kZero);
}

}  // namespace kjit::codegen::tangent_rules

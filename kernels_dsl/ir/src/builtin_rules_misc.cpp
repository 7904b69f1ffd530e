// Type rules of the random, noise and utility builtins (see builtins.def).
#include <cstring>

#include "builtin_rules.hpp"

namespace kjit::ir::rules {

namespace {
bool is(const char* fn, const char* name) { return std::strcmp(fn, name) == 0; }
const Type kU32 = Type::scalar_of(Scalar::U32);
const Type kI32 = Type::scalar_of(Scalar::I32);
const Type kF32 = Type::scalar_of(Scalar::F32);

/// {value, state}: what a random draw returns.
Type draw(const Type& value) {
  return result_struct("kj::rand_t<" + value.cpp() + ">", "random", {{"value", value}, {"state", kU32}});
}
/// Noise coordinates: a float32/float64 scalar or 2..4-vector.
bool coordinate(const Type& t) { return real(t) && !t.is_array() && (t.is_scalar() || (t.is_vector() && t.rows <= 4)); }
}  // namespace

KJIT_RULE(rand_init) {
  if ((n == 1 || n == 2) && int32_like(a[0]) && (n == 1 || int32_like(a[1]))) return kU32;
  return fail(error, fn, "a seed (and an offset), int32 or uint32", a, n);
}

KJIT_RULE(randi) {
  if ((n == 1 && u32(a[0])) || (n == 3 && u32(a[0]) && i32(a[1]) && i32(a[2]))) return draw(kI32);
  return fail(error, fn, "a uint32 state (and int32 low, high)", a, n);
}

KJIT_RULE(randu) {
  if ((n == 1 && u32(a[0])) || (n == 3 && u32(a[0]) && u32(a[1]) && u32(a[2]))) return draw(kU32);
  return fail(error, fn, "a uint32 state (and uint32 low, high)", a, n);
}

KJIT_RULE(randf) {
  if ((n == 1 && u32(a[0])) || (n == 3 && u32(a[0]) && a[1] == kF32 && a[2] == kF32)) return draw(kF32);
  return fail(error, fn, "a uint32 state (and float32 low, high)", a, n);
}

KJIT_RULE(rand_state_only) {
  if (n == 1 && u32(a[0])) {
    if (is(fn, "randn")) return draw(kF32);
    bool two = is(fn, "sample_triangle") || is(fn, "sample_unit_square") || is(fn, "sample_unit_disk") ||
               is(fn, "sample_unit_ring");
    return draw(Type::vector(two ? 2 : 3, Scalar::F32));
  }
  return fail(error, fn, "a uint32 state", a, n);
}

KJIT_RULE(poisson) {
  if (n == 2 && u32(a[0]) && a[1] == kF32) return draw(kU32);
  return fail(error, fn, "a uint32 state and a float32 rate", a, n);
}

KJIT_RULE(sample_cdf) {
  if (n == 2 && u32(a[0]) && a[1] == Type::array(kF32, 1)) return draw(kI32);
  return fail(error, fn, "a uint32 state and a 1-D float32 array holding a CDF", a, n);
}

KJIT_RULE(noise) {
  if (n == 2 && u32(a[0]) && coordinate(a[1])) return Type::scalar_of(a[1].scalar);
  return fail(error, fn, "a uint32 state and a float scalar or 2-, 3- or 4-vector", a, n);
}

KJIT_RULE(pnoise) {
  if (n >= 3 && u32(a[0]) && coordinate(a[1]) && n == 2 + int(a[1].rows)) {
    bool ok = true;
    for (int i = 2; i < n; ++i) ok = ok && i32(a[i]);
    if (ok) return Type::scalar_of(a[1].scalar);
  }
  return fail(error, fn, "a uint32 state, a coordinate, and one int32 period per dimension", a, n);
}

KJIT_RULE(curlnoise) {
  if (n == 5 && u32(a[0]) && coordinate(a[1]) && a[1].is_vector() && int32_like(a[2]) &&
      a[3] == Type::scalar_of(a[1].scalar) && a[4] == a[3])
    return Type::vector(a[1].rows == 2 ? 2 : 3, a[1].scalar);
  return fail(error, fn, "a uint32 state, a 2-, 3- or 4-vector, octaves, lacunarity and gain", a, n);
}

KJIT_RULE(lerp) {
  if (n == 3 && value(a[0]) && a[0].is_float() && a[1] == a[0] &&
      a[2] == Type::scalar_of(a[0].scalar))
    return a[0];
  return fail(error, fn, "two floating values of the same type and a scalar t", a, n);
}

KJIT_RULE(fma) {
  // a * b + c with one rounding: a float32/float64 scalar, vector, matrix or quaternion a and
  // c, and a scalar b of their scalar type (componentwise a * b + c).
  const bool shaped = value(a[0]) && real(a[0]) && a[0].shape != Shape::Transform;
  if (n == 3 && shaped && a[1] == Type::scalar_of(a[0].scalar) && a[2] == a[0]) return a[0];
  return fail(error, fn, "a float32 or float64 value a, a scalar b and a value c of a's type", a, n);
}

KJIT_RULE(smoothstep) {
  if (n == 3 && float_scalar(a[0]) && a[1] == a[0] && a[2] == a[0]) return a[0];
  return fail(error, fn, "three floating-point scalars of the same type", a, n);
}

KJIT_RULE(lower_bound) {
  const Type& arr = a[0];
  bool ok_arr = n >= 2 && arr.ndim == 1 && arr.element().is_scalar() && arr.scalar != Scalar::Bool;
  if (ok_arr && n == 2 && a[1] == arr.element()) return kI32;
  if (ok_arr && n == 4 && i32(a[1]) && i32(a[2]) && a[3] == arr.element()) return kI32;
  return fail(error, fn, "a sorted 1-D array and a value (or the array, begin, end and a value)", a, n);
}

KJIT_RULE(block_dim) {
  if (n == 0) return kI32;
  return fail(error, fn, "no arguments", a, n);
}

KJIT_RULE(no_arguments_void) {
  if (n == 0) return Type::void_type();
  return fail(error, fn, "no arguments", a, n);
}

KJIT_RULE(expect_near) {
  if (n == 3 && value(a[0]) && a[0].is_float() && a[1] == a[0] && a[2] == Type::scalar_of(a[0].scalar))
    return Type::void_type();
  return fail(error, fn, "two floating values of the same type and a tolerance", a, n);
}

}  // namespace kjit::ir::rules

// kjit/dsl/utility.hpp — utility builtins under Warp's names: lerp, smoothstep, select,
// lower_bound, len, zeros (fixed-size local arrays), array (an array over an address),
// block_dim, breakpoint, and the debugging aids print, printf and expect_near.
#pragma once

#include "kjit/dsl/array.hpp"
#include "kjit/dsl/math.hpp"

namespace kjit::dsl {

/// a + (b - a) t for floating scalars, vectors, matrices, quaternions and transforms.
template <class T, std::enable_if_t<is_floating_v<T>, int> = 0>
Value<T> lerp(const Value<T>& a, detail::same_t<Operand<T>> b, detail::same_t<Operand<scalar_of_t<T>>> t) {
  return detail::call<T>(ir::Builtin::Lerp, t.loc, a.use(t.loc), b.id, t.id);
}
namespace detail {
/// What fma takes: a float32/float64 scalar, vector, matrix or quaternion (not a transform, not half).
template <class T>
constexpr bool fma_operand_v = is_floating_v<T> && type_traits<T>::shape != ir::Shape::Transform &&
                               (std::is_same_v<scalar_of_t<T>, float> || std::is_same_v<scalar_of_t<T>, double>);
}  // namespace detail
/// a * b + c rounded once (a fused multiply-add): for float32/float64 scalars, and
/// componentwise for vectors, matrices and quaternions scaled by a scalar b.
template <class T, std::enable_if_t<detail::fma_operand_v<T>, int> = 0>
Value<T> fma(const Value<T>& a, detail::same_t<Operand<scalar_of_t<T>>> b, detail::same_t<Operand<T>> c) {
  return detail::call<T>(ir::Builtin::Fma, c.loc, a.use(c.loc), b.id, c.id);
}
/// The Hermite step t^2 (3 - 2t), t = clamp((x - a) / (b - a), 0, 1).
template <class T, std::enable_if_t<is_float_scalar_v<T>, int> = 0>
Value<T> smoothstep(const Value<T>& a, detail::same_t<Operand<T>> b, detail::same_t<Operand<T>> x) {
  return detail::call<T>(ir::Builtin::Smoothstep, x.loc, a.use(x.loc), b.id, x.id);
}
template <class T, std::enable_if_t<is_float_scalar_v<T>, int> = 0>
Value<T> smoothstep(detail::same_t<Literal<T>> a, detail::same_t<Operand<T>> b, const Value<T>& x) {
  return detail::call<T>(ir::Builtin::Smoothstep, a.loc, a.id, b.id, x.use(a.loc));
}
/// Warp's select(cond, value_if_false, value_if_true) (where() with the values swapped).
template <class T>
Value<T> select(const Bool& cond, const Value<T>& if_false, detail::same_t<Operand<T>> if_true) {
  return detail::call<T>(ir::Builtin::Select, if_true.loc, cond.use(if_true.loc), if_false.use(if_true.loc), if_true.id);
}
/// The first index of a sorted 1-D array whose element is not less than `value` (in
/// [lo, hi) when given); the end when none is.
template <class T>
Int lower_bound(const ArrayHandle<T, 1>& a, detail::same_t<Operand<T>> value) {
  return detail::call<int32_t>(ir::Builtin::LowerBound, value.loc, a.id(), value.id);
}
template <class T>
Int lower_bound(const ArrayHandle<T, 1>& a, Operand<int32_t> lo, Operand<int32_t> hi, detail::same_t<Operand<T>> value) {
  return detail::call<int32_t>(ir::Builtin::LowerBound, value.loc, a.id(), lo.id, hi.id, value.id);
}
/// Threads per block of this launch (CUDA); 1 on the cpu.
inline Int block_dim(Loc loc = Loc::here()) { return detail::call<int32_t>(ir::Builtin::BlockDim, loc); }
/// Stops in an attached debugger (without one, the process receives SIGTRAP).
inline void breakpoint(Loc loc = Loc::here()) { detail::call_builtin(ir::Builtin::Breakpoint, {}, loc); }

/// A device-side check: when some component of a and b differs by more than `tolerance`, the
/// thread prints its index, the location and the values, and the launch reports a failure
/// (kjit::launch throws a User error naming the check).
template <class T, std::enable_if_t<is_floating_v<T>, int> = 0>
void expect_near(const Value<T>& a, detail::same_t<Operand<T>> b, detail::same_t<Operand<scalar_of_t<T>>> tolerance) {
  detail::call_builtin(ir::Builtin::ExpectNear, {a.use(tolerance.loc), b.id, tolerance.id}, tolerance.loc);
}
template <class T, std::enable_if_t<is_floating_v<T>, int> = 0>
void expect_near(const Value<T>& a, detail::same_t<Operand<T>> b) {
  expect_near(a, b, detail::same_t<Operand<scalar_of_t<T>>>(1e-6, b.loc));
}

/// The number of components of a vector, the rows of a matrix, the extent of dimension 0 of
/// an array.
template <class T, std::enable_if_t<!is_scalar_v<T> && !is_struct_v<T>, int> = 0>
Int len(const Value<T>&, Loc loc = Loc::here()) { return Int(type_traits<T>::rows, loc); }
template <class T, int N>
Int len(const ArrayHandle<T, N>& a, Loc loc = Loc::here()) { return a.shape(0, loc); }

/// A fixed-size local array of N scalars or vectors (Warp's zeros(shape, dtype) in a kernel):
/// a mutable local whose elements are read with a[i] and assigned with a[i] = v, with
/// gradients through both.
template <class T, int N>
class LocalArray {
  static_assert(is_scalar_v<T> || is_vector_v<T>, "kjit: zeros<T, N>() holds scalars or vectors");
  using Storage = std::conditional_t<is_scalar_v<T>, vec<N, T>, mat<N, type_traits<T>::rows, scalar_of_t<T>>>;

 public:
  explicit LocalArray(Loc loc = Loc::here()) : var_(loc) {}
  /// Element i (assignable: `a[i] = v`, `a[i] += v`).
  Ref<T> operator[](Index i) const { return var_[i]; }
  static constexpr int size() { return N; }

 private:
  VarHandle<Storage> var_;
};
/// zeros<Float, 8>(): a local array of 8 zeros.
template <class T, int N>
LocalArray<detail::element_of_t<T>, N> zeros(Loc loc = Loc::here()) { return LocalArray<detail::element_of_t<T>, N>(loc); }
template <class T, int N>
Int len(const LocalArray<T, N>&, Loc loc = Loc::here()) { return Int(N, loc); }

/// An N-D array of element type T over device memory at `address` (contiguous, row-major):
/// `array<float>(address, n)`. It has no gradient buffer.
template <class T, class... I>
ArrayHandle<detail::element_of_t<T>, int(sizeof...(I))> array(const UInt64& address, const I&... extents) {
  static_assert(sizeof...(I) >= 1 && sizeof...(I) <= 4, "kjit: array(address, n...) takes 1 to 4 extents");
  Loc loc = detail::last_loc();
  using E = detail::element_of_t<T>;
  ir::ValueId id = detail::emit(ir::Op::Construct, ir::Type::array(ir_type_of<E>(), int(sizeof...(I))),
                          {address.use(loc), Operand<int32_t>(extents, loc).id...}, 0, loc);
  return ArrayHandle<E, int(sizeof...(I))>(detail::BoundTag{}, id);
}

namespace detail {
/// Emits a Print of value `v` of type `t` with all its components ("(%g, %g, %g)" for a
/// vector) and a newline; `adjoint`: the reverse sweep prints the adjoints.
void print_value(const ir::Type& t, ir::ValueId v, bool adjoint, Loc loc);
/// Emits a Print of `format` (a newline added when `newline`) with `args`.
void emit_print(const char* format, bool newline, const ir::ValueId* args, size_t count, Loc loc);
template <class A>
ir::ValueId printf_arg(const A& a, Loc loc) {
  if constexpr (std::is_base_of_v<ValueBase, A>) {
    static_assert(is_scalar_v<typename A::element_type>, "kjit: printf takes scalars; use print() for vectors");
    return a.use(loc);
  } else {
    static_assert(std::is_arithmetic_v<A>, "kjit: printf takes DSL scalars and C++ numbers");
    return make_literal<std::conditional_t<std::is_floating_point_v<A>, double, A>>(a, loc);
  }
}
}  // namespace detail

/// Prints a value of any type with its components, from every thread (in the reverse sweep
/// of an adjoint launch it prints the value's adjoint, as Warp's print does).
template <class T>
void print(const Value<T>& v, Loc loc = Loc::here()) {
  detail::print_value(Value<T>::ir_type(), v.use(loc), is_floating_v<T>, loc);
}
/// Prints a message.
inline void print(const char* text, Loc loc = Loc::here()) { detail::emit_print(text, true, nullptr, 0, loc); }
/// C printf with DSL scalars as arguments (forward launches only). A format without
/// arguments can clash with ::printf; write print("...") for plain text.
template <class... A>
void printf(const char* format, const A&... args) {
  Loc loc = detail::last_loc();
  const ir::ValueId ids[] = {detail::printf_arg(args, loc)..., ir::kNoValue};  // sentinel: no args
  detail::emit_print(format, false, ids, sizeof...(A), loc);
}

}  // namespace kjit::dsl

// kjit/dsl/value.hpp — Value<T>, the handle a kernel computes with, and the operand wrappers
// that carry the user's source location into every traced operation.
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "kjit/dsl/tracer.hpp"
#include "kjit/types.hpp"

namespace kjit::dsl {

template <class T> class Value;

namespace detail {

/// Blocks template argument deduction through a parameter, so that only the other
/// parameters deduce T and this one accepts implicit conversions.
template <class T> struct identity { using type = T; };
template <class T> using same_t = typename identity<T>::type;

/// The element type named by T: T itself, or U for a handle type Value<U>.
template <class T> struct element_of { using type = T; };
template <class U> struct element_of<Value<U>> { using type = U; };
template <class T> using element_of_t = typename element_of<T>::type;

/// Tag for constructing a handle around an existing IR value.
struct BoundTag {};

/// Whether a C++ arithmetic literal of type P may stand for a value of element type T.
template <class T, class P>
constexpr bool is_literal_for_v =
    std::is_arithmetic_v<P> && is_scalar_v<T> &&
    (std::is_same_v<T, bool> == std::is_same_v<P, bool>);

/// "Float", "Vec3f", ...: the DSL's name of an IR type, for messages.
std::string dsl_type_name(const ir::Type& t);

/// Emits a constant of element type T for the literal `v`, checking that it fits.
template <class T, class P>
ir::ValueId make_literal(P v, Loc loc) {
  Tracer& t = Tracer::get(loc);
  ir::Type type = ir_type_of<T>();
  if constexpr (is_float_scalar_v<T>) {
    return t.constant_float(type, double(v), loc);
  } else if constexpr (std::is_same_v<T, bool>) {
    return t.constant_int(type, v ? 1 : 0, loc);
  } else {
    if constexpr (std::is_floating_point_v<P>) {
      t.fail(loc, "the floating literal " + std::to_string(v) + " cannot stand for a " +
                      dsl_type_name(type) + "; write an integer literal or convert explicitly");
    } else {
      using L = std::numeric_limits<T>;
      bool fits = true;
      if constexpr (std::is_signed_v<P>) {
        fits = (L::is_signed || v >= 0) &&
               static_cast<long double>(v) >= static_cast<long double>(L::lowest()) &&
               static_cast<long double>(v) <= static_cast<long double>(L::max());
      } else {
        fits = static_cast<long double>(v) <= static_cast<long double>(L::max());
      }
      if (!fits)
        t.fail(loc, "the literal " + std::to_string(v) + " does not fit in " +
                        dsl_type_name(type));
      return t.constant_int(type, int64_t(v), loc);
    }
  }
}

}  // namespace detail

/// Common part of every value handle: which IR value (or local variable) it stands for and
/// the region it was created in.
class ValueBase {
 public:
  /// The IR value this handle stands for at this point of the trace. A Var emits a load.
  ir::ValueId use(Loc loc) const;
  /// Whether the handle names a mutable local variable (Var<T>).
  bool is_var() const { return kind_ == Kind::Var; }

 protected:
  enum class Kind : uint8_t { Unbound, Bound, Var };
  ValueBase();
  /// Makes this handle stand for `id`.
  void bind(ir::ValueId id) {
    id_ = id;
    kind_ = Kind::Bound;
  }
  /// Plain-handle assignment: rebinding is only allowed in the region the handle was created
  /// in, because the tracer runs each region once; anything else is an error that says so.
  void rebind(ir::ValueId id, const ir::Type& type, Loc loc);
  /// Var<T>: declares the variable and stores `init` into it.
  void declare_var(const ir::Type& type, ir::ValueId init, Loc loc);
  /// Var<T>: stores `id` into the variable.
  void store(ir::ValueId id, Loc loc) const;

  ir::ValueId id_ = ir::kNoValue;
  uint32_t var_ = 0;
  uint32_t home_ = 0;
  Kind kind_ = Kind::Unbound;
};

/// An operand in an expression: a DSL value or a C++ literal, with the location of the
/// expression it appears in (captured through the implicit conversion's default arguments).
template <class T>
struct Operand {
  ir::ValueId id;
  Loc loc;
  Operand(const Value<T>& v, Loc loc = Loc::here());
  template <class P, std::enable_if_t<detail::is_literal_for_v<T, P>, int> = 0>
  Operand(P literal, Loc loc = Loc::here()) : id(detail::make_literal<T>(literal, loc)), loc(loc) {}
};

/// A C++ literal on the left of an operator (`2.0f * x`), with its location.
template <class T>
struct Literal {
  ir::ValueId id;
  Loc loc;
  template <class P, std::enable_if_t<detail::is_literal_for_v<T, P>, int> = 0>
  Literal(P literal, Loc loc = Loc::here()) : id(detail::make_literal<T>(literal, loc)), loc(loc) {}
};

/// An index (of an array, a vector component, a matrix row): any integer DSL value or
/// integer literal, with its source location.
struct Index {
  ir::ValueId id;
  Loc loc;
  template <class I, std::enable_if_t<is_int_scalar_v<I>, int> = 0>
  Index(const Value<I>& v, Loc loc = Loc::here());
  template <class P, std::enable_if_t<std::is_integral_v<P> && !std::is_same_v<P, bool>, int> = 0>
  Index(P literal, Loc loc = Loc::here())
      : id(detail::make_literal<int32_t>(literal, loc)), loc(loc) {}
};

namespace detail {
/// The type of one component: a scalar for vectors and quaternions, a row for matrices.
template <class T> struct component_of { using type = scalar_of_t<T>; };
template <int R, int C, class S> struct component_of<mat<R, C, S>> { using type = vec<C, S>; };
/// Emits an Extract of `v` at indices `idx`, typed as element type R.
template <class R>
Value<R> extract(ir::ValueId v, std::initializer_list<ir::ValueId> idx, Loc loc);
}  // namespace detail

/// A value of element type T (float, int32_t, kjit::vec3f, ...) inside a kernel. Handles are
/// immutable SSA values: assigning one rebinds the name, which is only allowed in the region
/// where it was created. Use Var<T> for state that changes inside If, For or While.
template <class T>
class Value : public ValueBase {
  static_assert(type_traits<T>::known, "kjit: Value<T> needs a kernel element type");

 public:
  using element_type = T;
  /// The IR type of this handle.
  static ir::Type ir_type() { return ir_type_of<T>(); }

  /// An unbound handle; give it a value before use.
  Value() = default;
  /// A copy reads the source now (a Var's current value). Copying an unbound handle gives
  /// an unbound handle.
  Value(const Value& o, Loc loc = Loc::here()) {
    if (o.kind_ != Kind::Unbound) bind(o.use(loc));
  }
  Value(Value&& o, Loc loc = Loc::here()) {
    if (o.kind_ != Kind::Unbound) bind(o.use(loc));
  }
  /// A constant from a C++ literal: `Float x = 1.5f;`, `Int n = 3;`.
  template <class P, std::enable_if_t<detail::is_literal_for_v<T, P>, int> = 0>
  Value(P literal, Loc loc = Loc::here()) {
    bind(detail::make_literal<T>(literal, loc));
  }
  /// Explicit conversion between element types: `Float(i)`, `Int(x)`, `Double(x)`.
  template <class U,
            std::enable_if_t<!std::is_same_v<U, T> && is_scalar_v<U> && is_scalar_v<T>, int> = 0>
  explicit Value(const Value<U>& o, Loc loc = Loc::here()) {
    auto& t = detail::Tracer::get(loc);
    bind(t.emit(ir::Op::Cast, ir_type(), {o.use(loc)}, 0, loc));
  }
  /// A vector, matrix, quaternion or transform from its components (scalars, row-major),
  /// or a vector filled with one scalar: `Vec3f(x, y, z)`, `Vec3f(0.0f)`.
  template <class... A, class U = T,
            std::enable_if_t<!is_scalar_v<U> && (sizeof...(A) >= 1) &&
                                 (sizeof...(A) == 1 || sizeof...(A) == type_traits<U>::rows *
                                                                          type_traits<U>::cols) &&
                                 (std::is_convertible_v<const A&, Operand<scalar_of_t<U>>> && ...),
                             int> = 0>
  explicit Value(const A&... components) {
    auto& t = detail::Tracer::get(Loc{});
    Loc loc = t.last_loc();
    std::vector<ir::ValueId> ids;
    if constexpr (sizeof...(A) == 1) {
      ir::ValueId s = Operand<scalar_of_t<U>>(components...).id;
      ids.assign(size_t(type_traits<U>::rows * type_traits<U>::cols), s);
    } else {
      (ids.push_back(Operand<scalar_of_t<U>>(components).id), ...);
    }
    bind(t.emit(ir::Op::Construct, ir_type(), std::move(ids), 0, loc));
  }

  Value& operator=(const Value& o) {
    Loc loc = detail::Tracer::get(Loc{}).last_loc();
    rebind(o.use(loc), ir_type(), loc);
    return *this;
  }
  Value& operator=(Value&& o) { return *this = static_cast<const Value&>(o); }
  template <class P, std::enable_if_t<detail::is_literal_for_v<T, P>, int> = 0>
  Value& operator=(P literal) {
    Loc loc = detail::Tracer::get(Loc{}).last_loc();
    rebind(detail::make_literal<T>(literal, loc), ir_type(), loc);
    return *this;
  }

  /// Component i of a vector or quaternion, or row i of a matrix: `v[i]`, `m[i]`.
  template <class U = T, std::enable_if_t<!is_scalar_v<U>, int> = 0>
  Value<typename detail::component_of<U>::type> operator[](Index i) const {
    return detail::extract<typename detail::component_of<U>::type>(use(i.loc), {i.id}, i.loc);
  }
  /// Element (i, j) of a matrix.
  template <class U = T, std::enable_if_t<is_matrix_v<U>, int> = 0>
  Value<scalar_of_t<U>> operator()(Index i, Index j) const {
    return detail::extract<scalar_of_t<U>>(use(i.loc), {i.id, j.id}, i.loc);
  }
  /// Components 0..3 of a vector or quaternion.
  template <class U = T, std::enable_if_t<!is_scalar_v<U> && !is_matrix_v<U>, int> = 0>
  Value<scalar_of_t<U>> x(Loc loc = Loc::here()) const { return (*this)[Index(0, loc)]; }
  template <class U = T, std::enable_if_t<!is_scalar_v<U> && !is_matrix_v<U>, int> = 0>
  Value<scalar_of_t<U>> y(Loc loc = Loc::here()) const { return (*this)[Index(1, loc)]; }
  template <class U = T, std::enable_if_t<!is_scalar_v<U> && !is_matrix_v<U>, int> = 0>
  Value<scalar_of_t<U>> z(Loc loc = Loc::here()) const { return (*this)[Index(2, loc)]; }
  template <class U = T, std::enable_if_t<!is_scalar_v<U> && !is_matrix_v<U>, int> = 0>
  Value<scalar_of_t<U>> w(Loc loc = Loc::here()) const { return (*this)[Index(3, loc)]; }

  /// A handle around IR value `id` (for DSL implementers).
  Value(detail::BoundTag, ir::ValueId id) { bind(id); }
};

template <class T>
Operand<T>::Operand(const Value<T>& v, Loc loc) : id(v.use(loc)), loc(loc) {}

template <class I, std::enable_if_t<is_int_scalar_v<I>, int>>
Index::Index(const Value<I>& v, Loc loc) : id(v.use(loc)), loc(loc) {}

using Bool = Value<bool>;
using Int8 = Value<int8_t>;
using UInt8 = Value<uint8_t>;
using Int16 = Value<int16_t>;
using UInt16 = Value<uint16_t>;
using Int = Value<int32_t>;
using UInt32 = Value<uint32_t>;
using Int64 = Value<int64_t>;
using UInt64 = Value<uint64_t>;
using Half = Value<half>;
using BFloat16 = Value<bfloat16>;
using Float = Value<float>;
using Double = Value<double>;
using Vec2f = Value<vec2f>;
using Vec3f = Value<vec3f>;
using Vec4f = Value<vec4f>;
using Vec2d = Value<vec2d>;
using Vec3d = Value<vec3d>;
using Vec4d = Value<vec4d>;
using Vec2i = Value<vec2i>;
using Vec3i = Value<vec3i>;
using Vec4i = Value<vec4i>;
using Mat22f = Value<mat22f>;
using Mat33f = Value<mat33f>;
using Mat44f = Value<mat44f>;
using Mat22d = Value<mat22d>;
using Mat33d = Value<mat33d>;
using Mat44d = Value<mat44d>;
using Quatf = Value<quatf>;
using Quatd = Value<quatd>;
using Transformf = Value<transformf>;
using Transformd = Value<transformd>;
using SpatialVectorf = Value<spatial_vectorf>;
using SpatialVectord = Value<spatial_vectord>;
using SpatialMatrixf = Value<spatial_matrixf>;
using SpatialMatrixd = Value<spatial_matrixd>;

namespace detail {
/// A handle of element type R around the result `id` of a traced operation.
template <class R>
Value<R> wrap(ir::ValueId id) {
  return Value<R>(BoundTag{}, id);
}
/// Calls builtin `b` on operand ids and wraps the result as element type R.
template <class R, class... Ids>
Value<R> call(ir::Builtin b, Loc loc, Ids... ids) {
  Tracer& t = Tracer::get(loc);
  ir::ValueId r = t.call(b, {ids...}, loc);
  KJIT_CHECK(t.function().type_of(r) == ir_type_of<R>(),
             std::string("builtin ") + ir::builtin_info(b).name + " typed as " +
                 t.function().type_of(r).str() + ", DSL expected " + ir_type_of<R>().str());
  return wrap<R>(r);
}
template <class R>
Value<R> extract(ir::ValueId v, std::initializer_list<ir::ValueId> idx, Loc loc) {
  auto& t = Tracer::get(loc);
  std::vector<ir::ValueId> args{v};
  args.insert(args.end(), idx.begin(), idx.end());
  return wrap<R>(t.emit(ir::Op::Extract, ir_type_of<R>(), std::move(args), 0, loc));
}
}  // namespace detail

}  // namespace kjit::dsl

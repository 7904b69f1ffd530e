// kjit/dsl/value.hpp — Value<T>, the handle a kernel computes with, and the operand wrappers
// that carry the user's source location into every traced operation.
#pragma once

#include <limits>
#include <type_traits>

#include "kjit/dsl/diagnostics.hpp"
#include "kjit/dsl/trace_api.hpp"
#include "kjit/types.hpp"

namespace kjit::ir {
struct Function;
}

namespace kjit::dsl {

template <class T> class Value;
template <class T> class Ref;

namespace detail {

/// One step from an aggregate to a part of it: a component index (a vector, quaternion or
/// transform lane, or a matrix row), a matrix element (two indices), or a struct field.
struct PathStep {
  enum Kind : uint8_t { Index, Index2, Field } kind = Index;
  ir::ValueId i = ir::kNoValue;
  ir::ValueId j = ir::kNoValue;
  int field = -1;
};

/// Emits an Extract of `step` from `value`.
ir::ValueId extract_step(ir::ValueId value, const PathStep& step, Loc loc);


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

/// The index of field `name` of struct type `t` (a tracing error when there is none).
int struct_field_index(const ir::Type& t, const char* name, Loc loc);
/// Emits a Construct of struct type `t` from one value per field.
ir::ValueId construct_struct(const ir::Type& t, const ir::ValueId* fields, size_t count, Loc loc);
/// The IR value for field `k` of struct `t` from a constructor argument (a handle of the
/// field's type, or a literal).
template <class A>
ir::ValueId struct_field_arg(const ir::Type& t, int k, const A& a, Loc loc);
/// A constant for field `k` of struct `t` from a C++ literal.
ir::ValueId struct_field_literal(const ir::Type& t, int k, bool is_float, double f, int64_t i, Loc loc);

/// Emits a constant of element type T for the literal `v`, checking that it fits.
template <class T, class P>
ir::ValueId make_literal(P v, Loc loc) {
  ir::Type type = ir_type_of<T>();
  if constexpr (is_float_scalar_v<T>) {
    return constant_float(type, double(v), loc);
  } else if constexpr (std::is_same_v<T, bool>) {
    return constant_int(type, v ? 1 : 0, loc);
  } else {
    if constexpr (std::is_floating_point_v<P>) {
      fail_float_literal(double(v), type, loc);
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
      if (!fits) fail_literal_range(std::is_signed_v<P>, uint64_t(v), type, loc);
      return constant_int(type, int64_t(v), loc);
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
  /// The local variable a Var<T> names (an Internal error for other handles).
  uint32_t var_id() const;
  /// The assignable location of part `step` of this handle: a Var, or a component reached
  /// from one through a Ref, extended by `step`; 0 when the handle is not assignable. Paths
  /// live in the tracer of the function being traced.
  uint32_t extend_path(const detail::PathStep& step) const;
  /// Stores `value` into the location this handle's path names (a Ref's write-through), or a
  /// tracing error saying how to assign a component when it names none.
  void write_path(ir::ValueId value, const ir::Type& type, Loc loc) const;

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
  /// The function being traced when the handle was made: a handle of a kernel captured into a
  /// device function (or the other way round) is an error, not a silently wrong value id.
  const ir::Function* owner_ = nullptr;
  /// Set by Ref: where a write-through assignment stores (0: nowhere).
  uint32_t path_ = 0;
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
/// The part of `self` that `step` selects, as a Ref that writes through when `self` is
/// assignable (a Var or a Ref into one).
template <class C>
Ref<C> component_ref(const ValueBase& self, PathStep step, Loc loc);

/// Named accessors a handle of element type T offers: x() .. w() on vectors, quaternions
/// and transforms; the fields of a KJIT_STRUCT; nothing on scalars and matrices.
template <class T, class Self, class = void>
struct accessors {};
template <class T, class Self>
struct accessors<T, Self, std::enable_if_t<is_vector_v<T> || is_quat_v<T> || is_transform_v<T>>> {
  using S = scalar_of_t<T>;
  /// Components 0..3 (x, y, z, w); on a Var (or a Ref into one) they can be assigned.
  Ref<S> x(Loc loc = Loc::here()) const { return at(0, loc); }
  Ref<S> y(Loc loc = Loc::here()) const { return at(1, loc); }
  Ref<S> z(Loc loc = Loc::here()) const { return at(2, loc); }
  Ref<S> w(Loc loc = Loc::here()) const { return at(3, loc); }

 private:
  Ref<S> at(int k, Loc loc) const;
};
template <class T, class Self>
struct accessors<T, Self, std::enable_if_t<is_struct_v<T>>> : T::template kjit_accessors<Self> {};
/// A transform's translation and rotation (read-only; set them with transform_set_*).
template <class T, class Self, class = void>
struct transform_parts {};
template <class T, class Self>
struct transform_parts<T, Self, std::enable_if_t<is_transform_v<T>>> {
  Value<vec<3, scalar_of_t<T>>> p(Loc loc = Loc::here()) const;
  Value<quat<scalar_of_t<T>>> q(Loc loc = Loc::here()) const;
};
}  // namespace detail

/// A value of element type T (float, int32_t, kjit::vec3f, ...) inside a kernel. Handles are
/// immutable SSA values: assigning one rebinds the name, which is only allowed in the region
/// where it was created. Use Var<T> for state that changes inside If, For or While.
template <class T>
class Value : public ValueBase, public detail::accessors<T, Value<T>>, public detail::transform_parts<T, Value<T>> {
  static_assert(type_traits<T>::known, "kjit: Value<T> needs a kernel element type");

 public:
  using element_type = T;
  /// The IR type of this handle.
  static ir::Type ir_type() { return ir_type_of<T>(); }

  /// An unbound handle; give it a value before use.
  Value() = default;
  /// `Int tid = tid();` calls the variable being declared (C++ puts a name in scope before its
  /// initializer): kjit's advice instead of "no match for call".
  template <class U = T, std::enable_if_t<is_int_scalar_v<U>, int> = 0>
  detail::CallsTheVariable<U> operator()() const;
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
    bind(detail::emit(ir::Op::Cast, ir_type(), {o.use(loc)}, 0, loc));
  }
  /// A vector, matrix, quaternion or transform from its components (scalars, row-major),
  /// or a vector filled with one scalar: `Vec3f(x, y, z)`, `Vec3f(0.0f)`.
  template <class... A, class U = T,
            std::enable_if_t<!is_scalar_v<U> && !is_struct_v<U> && (sizeof...(A) >= 1) &&
                                 (sizeof...(A) == 1 || sizeof...(A) == type_traits<U>::rows *
                                                                          type_traits<U>::cols) &&
                                 (std::is_convertible_v<const A&, Operand<scalar_of_t<U>>> && ...),
                             int> = 0>
  explicit Value(const A&... components) {
    Loc loc = detail::last_loc();
    constexpr size_t n = size_t(type_traits<U>::rows * type_traits<U>::cols);
    ir::ValueId ids[n];
    if constexpr (sizeof...(A) == 1) {
      ir::ValueId s = Operand<scalar_of_t<U>>(components...).id;
      for (size_t k = 0; k < n; ++k) ids[k] = s;
    } else {
      size_t k = 0;
      ((ids[k++] = Operand<scalar_of_t<U>>(components).id), ...);
    }
    bind(detail::emit(ir::Op::Construct, ir_type(), ids, n, 0, loc));
  }
  /// A struct from its fields in declaration order: `Value<Particle>(mass, pos)`.
  template <class... A, class U = T,
            std::enable_if_t<is_struct_v<U> && (sizeof...(A) >= 1), int> = 0>
  explicit Value(const A&... fields) {
    Loc loc = detail::last_loc();
    ir::ValueId ids[sizeof...(A)];
    int k = 0;
    ((ids[k] = detail::struct_field_arg(ir_type(), k, fields, loc), ++k), ...);
    bind(detail::construct_struct(ir_type(), ids, sizeof...(A), loc));
  }

  // Assignment rebinds the name (lvalues only: assigning to a temporary would be lost).
  Value& operator=(const Value& o) & {
    Loc loc = detail::last_loc();
    rebind(o.use(loc), ir_type(), loc);
    return *this;
  }
  Value& operator=(Value&& o) & { return *this = static_cast<const Value&>(o); }
  template <class P, std::enable_if_t<detail::is_literal_for_v<T, P>, int> = 0>
  Value& operator=(P literal) & {
    Loc loc = detail::last_loc();
    rebind(detail::make_literal<T>(literal, loc), ir_type(), loc);
    return *this;
  }

  /// Component i of a vector, quaternion or transform, or row i of a matrix: `v[i]`, `m[i]`.
  /// On a Var, `w[i] = x` and `w[i] += x` store into the variable.
  template <class U = T, std::enable_if_t<!is_scalar_v<U> && !is_struct_v<U>, int> = 0>
  Ref<typename detail::component_of<U>::type> operator[](Index i) const {
    return detail::component_ref<typename detail::component_of<U>::type>(
        *this, detail::PathStep{detail::PathStep::Index, i.id}, i.loc);
  }
  /// Element (i, j) of a matrix; assignable on a Var: `m(i, j) = x`.
  template <class U = T, std::enable_if_t<is_matrix_v<U>, int> = 0>
  Ref<scalar_of_t<U>> operator()(Index i, Index j) const {
    return detail::component_ref<scalar_of_t<U>>(
        *this, detail::PathStep{detail::PathStep::Index2, i.id, j.id}, i.loc);
  }

  /// A handle around IR value `id` (for DSL implementers).
  Value(detail::BoundTag, ir::ValueId id) { bind(id); }
};

template <class T>
Operand<T>::Operand(const Value<T>& v, Loc loc) : id(v.use(loc)), loc(loc) {}

template <class I, std::enable_if_t<is_int_scalar_v<I>, int>>
Index::Index(const Value<I>& v, Loc loc) : id(v.use(loc)), loc(loc) {}

namespace detail {
/// A handle of element type R around the result `id` of a traced operation.
template <class R>
Value<R> wrap(ir::ValueId id) {
  return Value<R>(BoundTag{}, id);
}
/// Calls builtin `b` on operand ids and wraps the result as element type R.
template <class R, class... Ids>
Value<R> call(ir::Builtin b, Loc loc, Ids... ids) {
  const ir::ValueId args[] = {ids..., ir::kNoValue};  // the sentinel allows no operands
  return wrap<R>(call_builtin_as(b, ir_type_of<R>(), args, sizeof...(Ids), loc));
}
template <class R>
Value<R> extract(ir::ValueId v, std::initializer_list<ir::ValueId> idx, Loc loc) {
  ir::ValueId args[4] = {v};
  size_t n = 1;
  for (ir::ValueId i : idx) args[n++] = i;
  return wrap<R>(emit(ir::Op::Extract, ir_type_of<R>(), args, n, 0, loc));
}
}  // namespace detail

/// A component of an aggregate value (`v.x()`, `v[i]`, `m(i, j)`, `p.mass()`). It reads like
/// the value it holds; when it was reached from a Var, assigning to it directly
/// (`w.x() = 1.0f`, `m[i][j] += a`) stores into the variable, with correct adjoints. A named
/// Ref (`auto c = w.x();`) behaves like a plain value: assigning it rebinds the name.
template <class C>
class Ref : public Value<C> {
  using Base = Value<C>;

 public:
  Ref(detail::BoundTag tag, ir::ValueId current, uint32_t path) : Base(tag, current) {
    this->path_ = path;
  }
  Ref(const Ref& o) : Base(o) { this->path_ = o.path_; }

  // Write-through on temporaries: `w.x() = v`.
  Ref&& operator=(const Value<C>& v) && {
    Loc loc = detail::last_loc();
    write(v.use(loc), loc);
    return std::move(*this);
  }
  Ref&& operator=(const Ref& v) && { return std::move(*this) = static_cast<const Value<C>&>(v); }
  template <class P, std::enable_if_t<detail::is_literal_for_v<C, P>, int> = 0>
  Ref&& operator=(P literal) && {
    Loc loc = detail::last_loc();
    write(detail::make_literal<C>(literal, loc), loc);
    return std::move(*this);
  }
  // Rebinding on named Refs: `auto c = w.x(); c = v;` changes c only.
  Ref& operator=(const Value<C>& v) & {
    this->path_ = 0;
    Base::operator=(v);
    return *this;
  }
  Ref& operator=(const Ref& v) & { return *this = static_cast<const Value<C>&>(v); }
  template <class P, std::enable_if_t<detail::is_literal_for_v<C, P>, int> = 0>
  Ref& operator=(P literal) & {
    this->path_ = 0;
    Base::operator=(literal);
    return *this;
  }

  /// Stores `value` (an IR value of type C) into the location this Ref names.
  void write(ir::ValueId value, Loc loc) const { this->write_path(value, Base::ir_type(), loc); }
};

namespace detail {
template <class C>
Ref<C> component_ref(const ValueBase& self, PathStep step, Loc loc) {
  ir::ValueId current = extract_step(self.use(loc), step, loc);
  return Ref<C>(BoundTag{}, current, self.extend_path(step));
}

template <class T, class Self>
Ref<scalar_of_t<T>> accessors<T, Self, std::enable_if_t<is_vector_v<T> || is_quat_v<T> || is_transform_v<T>>>::at(
    int k, Loc loc) const {
  constexpr int lanes = type_traits<T>::rows * type_traits<T>::cols;
  if (k >= lanes) fail_component(k, lanes, ir_type_of<T>(), loc);
  ir::ValueId i = make_literal<int32_t>(k, loc);
  return component_ref<scalar_of_t<T>>(static_cast<const Self&>(*this), PathStep{PathStep::Index, i}, loc);
}

template <class A>
ir::ValueId struct_field_arg(const ir::Type& t, int k, const A& a, Loc loc) {
  if constexpr (std::is_base_of_v<ValueBase, A>) {
    return a.use(loc);
  } else {
    static_assert(std::is_arithmetic_v<A>, "kjit: a struct field is built from a DSL value or a literal");
    return struct_field_literal(t, k, std::is_floating_point_v<A>, double(a), int64_t(a), loc);
  }
}

template <class T, class Self>
Value<vec<3, scalar_of_t<T>>> transform_parts<T, Self, std::enable_if_t<is_transform_v<T>>>::p(Loc loc) const {
  return call<vec<3, scalar_of_t<T>>>(ir::Builtin::TransformGetTranslation, loc, static_cast<const Self&>(*this).use(loc));
}
template <class T, class Self>
Value<quat<scalar_of_t<T>>> transform_parts<T, Self, std::enable_if_t<is_transform_v<T>>>::q(Loc loc) const {
  return call<quat<scalar_of_t<T>>>(ir::Builtin::TransformGetRotation, loc, static_cast<const Self&>(*this).use(loc));
}

/// Reads field `name` of a struct handle as a Ref (used by KJIT_STRUCT's accessors).
template <class F>
Ref<F> field_ref(const ValueBase& self, const ir::Type& struct_type, const char* name, Loc loc) {
  PathStep step;
  step.kind = PathStep::Field;
  step.field = struct_field_index(struct_type, name, loc);
  return component_ref<F>(self, step, loc);
}
}  // namespace detail

/// Adds `b` to a component in place: `w.x() += 1.0f`, `m(i, j) -= a` (on Var components).
#define KJIT_DSL_REF_COMPOUND(op, builtin)                                                   \
  template <class C>                                                                         \
  void operator op(Ref<C>&& r, detail::same_t<Operand<C>> b) {                               \
    r.write(detail::call<C>(ir::Builtin::builtin, b.loc, r.use(b.loc), b.id).use(b.loc), b.loc); \
  }
KJIT_DSL_REF_COMPOUND(+=, Add)
KJIT_DSL_REF_COMPOUND(-=, Sub)
#undef KJIT_DSL_REF_COMPOUND
/// Scales a component in place: `w.x() *= 2.0f`, `m[i] *= s`.
template <class C>
void operator*=(Ref<C>&& r, detail::same_t<Operand<scalar_of_t<C>>> b) {
  r.write(detail::call<C>(ir::Builtin::Mul, b.loc, r.use(b.loc), b.id).use(b.loc), b.loc);
}
template <class C>
void operator/=(Ref<C>&& r, detail::same_t<Operand<scalar_of_t<C>>> b) {
  r.write(detail::call<C>(ir::Builtin::Div, b.loc, r.use(b.loc), b.id).use(b.loc), b.loc);
}

}  // namespace kjit::dsl

#include "kjit/dsl/aliases.hpp"

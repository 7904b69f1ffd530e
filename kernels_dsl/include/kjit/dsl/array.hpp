// kjit/dsl/array.hpp — Array<T, N> kernel parameters: element reads, stores, atomics, shapes.
#pragma once

#include "kjit/dsl/value.hpp"

namespace kjit::dsl {

template <class T> class Element;
template <class T, int N> class ArrayHandle;

namespace detail {
/// An Array<T, N> named as a struct field's type holds an ArrayRef<T, N> on the host.
template <class T, int N> struct element_of<ArrayHandle<T, N>> { using type = ArrayRef<T, N>; };
}  // namespace detail

/// Array<Float>, Array<Vec3f, 2>: the element may be written as a DSL handle type or as the
/// host element type (Array<float> is the same type as Array<Float>).
template <class T, int N = 1>
using Array = ArrayHandle<detail::element_of_t<T>, N>;

namespace detail {
/// Emits a load of element `idx` of array `array` with element type T.
template <class T>
Element<T> load_element(ir::ValueId array, std::initializer_list<Index> idx, Loc loc);

/// A dimension of an array (a C++ integer), with the location of the expression naming it.
struct ShapeDim {
  int dim;
  Loc loc;
  template <class P, std::enable_if_t<std::is_integral_v<P> && !std::is_same_v<P, bool>, int> = 0>
  ShapeDim(P d, Loc loc = Loc::here()) : dim(int(d)), loc(loc) {}  // NOLINT: implicit, as an index
};

/// The extents of an N-D array, spelled as in Warp (`a.shape[0]`) or called (`a.shape(0)`).
/// A member object rather than a function so that both spellings work.
template <int N>
class ArrayShape {
 public:
  explicit ArrayShape(ir::ValueId array = ir::kNoValue) : array_(array) {}
  /// Extent of dimension `d` (0-based).
  Int operator[](ShapeDim d) const { return extent(d.dim, d.loc); }
  Int operator()(int dim, Loc loc = Loc::here()) const { return extent(dim, loc); }

 private:
  Int extent(int dim, Loc loc) const {
    if (dim < 0 || dim >= N) fail_shape_dim(dim, N, loc);
    return wrap<int32_t>(emit(ir::Op::ArrayShape, ir::Type::scalar_of(ir::Scalar::I32), {array_}, dim, loc));
  }
  ir::ValueId array_;
};
}  // namespace detail

/// A kernel parameter naming an N-dimensional array (1 <= N <= 4) of element type T.
/// `a[i]` and `a(i, j, ...)` read an element (and can be assigned to store one);
/// `a.shape[d]` (or `a.shape(d)`) is the extent of dimension d. Spelled Array<Float>, Array<Vec3f, 2>, ...
template <class T, int N>
class ArrayHandle {
  static_assert(N >= 1 && N <= 4, "kjit: arrays have 1 to 4 dimensions");
  static_assert(type_traits<T>::known, "kjit: Array<T> needs a kernel element type");
  static_assert(type_traits<T>::shape != ir::Shape::Void,
                "kjit: arrays of arrays are not supported: use an array with more dimensions, or a struct with an array field");

 public:
  using element_type = T;
  static constexpr int ndim = N;
  static ir::Type ir_type() { return ir::Type::array(ir_type_of<T>(), N); }

  ArrayHandle() = default;
  ArrayHandle(detail::BoundTag, ir::ValueId id) : shape(id), id_(id) {}

  /// Element i of a 1-D array.
  Element<T> operator[](Index i) const {
    static_assert(N == 1, "kjit: a[i] indexes a 1-D array; index an N-D array with a(i, j, ...)");
    return detail::load_element<T>(id_, {i}, i.loc);
  }
  template <int M = N, std::enable_if_t<M == 1, int> = 0>
  Element<T> operator()(Index i, Loc loc = Loc::here()) const {
    return detail::load_element<T>(id_, {i}, loc);
  }
  template <int M = N, std::enable_if_t<M == 2, int> = 0>
  Element<T> operator()(Index i, Index j, Loc loc = Loc::here()) const {
    return detail::load_element<T>(id_, {i, j}, loc);
  }
  template <int M = N, std::enable_if_t<M == 3, int> = 0>
  Element<T> operator()(Index i, Index j, Index k, Loc loc = Loc::here()) const {
    return detail::load_element<T>(id_, {i, j, k}, loc);
  }
  template <int M = N, std::enable_if_t<M == 4, int> = 0>
  Element<T> operator()(Index i, Index j, Index k, Index l, Loc loc = Loc::here()) const {
    return detail::load_element<T>(id_, {i, j, k, l}, loc);
  }
  /// Wrong number of indices: a compile-time error that says so.
  template <class... I, std::enable_if_t<sizeof...(I) != N && (sizeof...(I) < 5) &&
                                             !(std::is_same_v<I, Loc> || ...),
                                         int> = 0>
  void operator()(const I&...) const {
    static_assert(sizeof...(I) == N,
                  "kjit: wrong number of indices: an N-D array takes exactly N indices");
  }

  /// Extent of dimension d (0-based): `a.shape[d]` (Warp's spelling) or `a.shape(d)`.
  detail::ArrayShape<N> shape;

  /// The IR value naming this array.
  ir::ValueId id() const { return id_; }

 private:
  ir::ValueId id_ = ir::kNoValue;
};

/// An array element that was read (its value) and can be stored to: `a[i] = v` stores,
/// `a[i] += v` and `a[i] -= v` are atomic adds (as in Warp), `Float x = a[i]` reads.
template <class T>
class Element : public Value<T> {
 public:
  Element(detail::BoundTag tag, ir::ValueId loaded, ir::ValueId array,
          std::initializer_list<Index> idx)
      : Value<T>(tag, loaded), array_(array), n_(int(idx.size())) {
    int k = 0;
    for (const Index& i : idx) idx_[k++] = i.id;
  }

  /// Stores `v` into the element.
  Element& operator=(const Value<T>& v) {
    Loc loc = detail::last_loc();
    store(v.use(loc), loc);
    return *this;
  }
  Element& operator=(const Element& v) { return *this = static_cast<const Value<T>&>(v); }
  template <class P, std::enable_if_t<detail::is_literal_for_v<T, P>, int> = 0>
  Element& operator=(P literal) {
    Loc loc = detail::last_loc();
    store(detail::make_literal<T>(literal, loc), loc);
    return *this;
  }
  template <class U, std::enable_if_t<!std::is_same_v<U, T>, int> = 0>
  Element& operator=(const Value<U>&) {
    static_assert(std::is_same_v<U, T>,
                  "kjit: cannot store a value of another element type into this array; convert "
                  "it first, e.g. Float(i) or Int(x)");
    return *this;
  }
  /// Atomic add / subtract into the element.
  void operator+=(Operand<T> v) { atomic(ir::AtomicOp::Add, v); }
  void operator-=(Operand<T> v) { atomic(ir::AtomicOp::Sub, v); }

  /// Emits an atomic `op` with operand `v` on this element; returns the previous value.
  Value<T> atomic(ir::AtomicOp op, Operand<T> v) const {
    ir::ValueId args[6];
    size_t n = operands(args, v.id);
    return detail::wrap<T>(
        detail::emit(ir::Op::ArrayAtomic, Value<T>::ir_type(), args, n, int64_t(op), v.loc));
  }

 private:
  /// The operands array, indices..., `last` into `out`; returns their count.
  size_t operands(ir::ValueId* out, ir::ValueId last) const {
    size_t n = 0;
    out[n++] = array_;
    for (int k = 0; k < n_; ++k) out[n++] = idx_[k];
    out[n++] = last;
    return n;
  }
  void store(ir::ValueId v, Loc loc) const {
    ir::ValueId args[6];
    size_t n = operands(args, v);
    detail::emit(ir::Op::ArrayStore, ir::Type::void_type(), args, n, 0, loc);
  }

  ir::ValueId array_;
  ir::ValueId idx_[4] = {};
  int n_;
};

namespace detail {
template <class T>
Element<T> load_element(ir::ValueId array, std::initializer_list<Index> idx, Loc loc) {
  ir::ValueId args[5] = {array};
  size_t n = 1;
  for (const Index& i : idx) args[n++] = i.id;
  ir::ValueId v = emit(ir::Op::ArrayLoad, ir_type_of<T>(), args, n, 0, loc);
  return Element<T>(BoundTag{}, v, array, idx);
}

/// An atomic op on element `idx` of `a`.
template <class T, int N>
Value<T> atomic_on(ir::AtomicOp op, const ArrayHandle<T, N>& a, std::initializer_list<Index> idx,
                   Operand<T> v) {
  if (int(idx.size()) != N) fail_atomic_indices(N, v.loc);
  ir::ValueId args[6] = {a.id()};
  size_t n = 1;
  for (const Index& i : idx) args[n++] = i.id;
  args[n++] = v.id;
  return wrap<T>(emit(ir::Op::ArrayAtomic, ir_type_of<T>(), args, n, int64_t(op), v.loc));
}
}  // namespace detail

// Atomic read-modify-write on array elements; each returns the element's previous value.
// The index count must equal the array's dimensionality.
#define KJIT_DSL_ATOMIC(name, op)                                                            \
  template <class T>                                                                         \
  Value<T> name(const ArrayHandle<T, 1>& a, Index i, detail::same_t<Operand<T>> v) {               \
    return detail::atomic_on(ir::AtomicOp::op, a, {i}, v);                                   \
  }                                                                                          \
  template <class T>                                                                         \
  Value<T> name(const ArrayHandle<T, 2>& a, Index i, Index j, detail::same_t<Operand<T>> v) {      \
    return detail::atomic_on(ir::AtomicOp::op, a, {i, j}, v);                                \
  }                                                                                          \
  template <class T>                                                                         \
  Value<T> name(const ArrayHandle<T, 3>& a, Index i, Index j, Index k,                             \
                detail::same_t<Operand<T>> v) {                                              \
    return detail::atomic_on(ir::AtomicOp::op, a, {i, j, k}, v);                             \
  }                                                                                          \
  template <class T>                                                                         \
  Value<T> name(const ArrayHandle<T, 4>& a, Index i, Index j, Index k, Index l,                    \
                detail::same_t<Operand<T>> v) {                                              \
    return detail::atomic_on(ir::AtomicOp::op, a, {i, j, k, l}, v);                          \
  }

/// atomic_add(a, i..., v): adds v to a(i...) atomically; returns the previous value.
KJIT_DSL_ATOMIC(atomic_add, Add)
/// atomic_sub(a, i..., v): subtracts v from a(i...) atomically.
KJIT_DSL_ATOMIC(atomic_sub, Sub)
/// atomic_min(a, i..., v): a(i...) = min(a(i...), v) atomically.
KJIT_DSL_ATOMIC(atomic_min, Min)
/// atomic_max(a, i..., v): a(i...) = max(a(i...), v) atomically.
KJIT_DSL_ATOMIC(atomic_max, Max)
/// atomic_and / atomic_or / atomic_xor (a, i..., v): bitwise update of an integer element.
KJIT_DSL_ATOMIC(atomic_and, And)
KJIT_DSL_ATOMIC(atomic_or, Or)
KJIT_DSL_ATOMIC(atomic_xor, Xor)
/// atomic_exch(a, i..., v): stores v; returns the previous value.
KJIT_DSL_ATOMIC(atomic_exch, Exch)
#undef KJIT_DSL_ATOMIC

namespace detail {
/// atomic_cas on element `idx` of `a`: operands compare, then value.
template <class T, int N>
Value<T> atomic_cas_on(const ArrayHandle<T, N>& a, std::initializer_list<Index> idx, Operand<T> compare, Operand<T> v) {
  ir::ValueId args[7] = {a.id()};
  size_t n = 1;
  for (const Index& i : idx) args[n++] = i.id;
  args[n++] = compare.id;
  args[n++] = v.id;
  return wrap<T>(emit(ir::Op::ArrayAtomic, ir_type_of<T>(), args, n, int64_t(ir::AtomicOp::Cas), v.loc));
}
}  // namespace detail

/// atomic_cas(a, i..., compare, v): stores v if the element equals `compare` (bitwise);
/// returns the previous value either way.
template <class T>
Value<T> atomic_cas(const ArrayHandle<T, 1>& a, Index i, detail::same_t<Operand<T>> compare, detail::same_t<Operand<T>> v) {
  return detail::atomic_cas_on(a, {i}, compare, v);
}
template <class T>
Value<T> atomic_cas(const ArrayHandle<T, 2>& a, Index i, Index j, detail::same_t<Operand<T>> compare, detail::same_t<Operand<T>> v) {
  return detail::atomic_cas_on(a, {i, j}, compare, v);
}
template <class T>
Value<T> atomic_cas(const ArrayHandle<T, 3>& a, Index i, Index j, Index k, detail::same_t<Operand<T>> compare,
                    detail::same_t<Operand<T>> v) {
  return detail::atomic_cas_on(a, {i, j, k}, compare, v);
}

}  // namespace kjit::dsl

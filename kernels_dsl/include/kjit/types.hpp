// kjit/types.hpp — host-side element types (vectors, matrices, quaternions, transforms, half
// floats) laid out exactly as kernels see them, and their IR types.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kjit/ir_vocab.hpp"

namespace kjit {

/// IEEE 754 binary16, stored as bits. Arithmetic in kernels promotes to float32.
struct half {
  uint16_t bits = 0;
  half() = default;
  half(float f);
  operator float() const;
};

/// bfloat16 (the upper 16 bits of a float32), stored as bits. Arithmetic promotes to float32.
struct bfloat16 {
  uint16_t bits = 0;
  bfloat16() = default;
  bfloat16(float f);
  operator float() const;
};

/// A vector of N components of T, as kernels store it (no padding). Built like Warp's:
/// `vec3f(1, 2, 3)`, `vec3f(s)` (every component s), `vec3f()` (zero), and `vec3f{{1, 2, 3}}`
/// (the array of components). Arithmetic and Warp's builtins: kjit/host_math.hpp.
template <int N, class T>
struct vec {
  T c[N];
  /// Trivial, as the aggregate was: `vec3f()` and `vec3f{}` are zero, `vec3f v;` is not
  /// initialized. (A user-provided one would make memcpy into vectors warn: -Wclass-memaccess.)
  vec() = default;
  /// The components as an array, so the aggregate spelling `vec3f{{1, 2, 3}}` still builds.
  constexpr vec(const T (&a)[N]) : c{} { for (int i = 0; i < N; ++i) c[i] = a[i]; }
  /// N components, converted to T (ints or doubles for a vec3f, as Warp takes them).
  template <class... A, std::enable_if_t<sizeof...(A) == N && (std::is_convertible_v<A, T> && ...), int> = 0>
  constexpr vec(A... a) : c{static_cast<T>(a)...} {}
  /// Every component `s`; explicit, so that a scalar never turns into a vector unasked.
  template <int M = N, std::enable_if_t<(M > 1), int> = 0>
  constexpr explicit vec(T s) : c{} { for (int i = 0; i < N; ++i) c[i] = s; }
  constexpr T& operator[](int i) { return c[i]; }
  constexpr const T& operator[](int i) const { return c[i]; }
};

/// An R x C matrix of T, row-major, as kernels store it. Built from R * C scalars (row-major),
/// from 2 to 4 row vectors, from the nested array (`mat22f{{{1, 2}, {3, 4}}}`), or zero;
/// `mat33f::identity()`. `m[i][j]` and `m(i, j)` are element (i, j).
template <int R, int C, class T>
struct mat {
  T c[R][C];
  /// Trivial, as for vec: `mat33f()` and `mat33f{}` are zero.
  mat() = default;
  constexpr mat(const T (&a)[R][C]) : c{} {
    for (int i = 0; i < R; ++i)
      for (int j = 0; j < C; ++j) c[i][j] = a[i][j];
  }
  template <class... A, std::enable_if_t<sizeof...(A) == R * C && (R * C > 1) && (std::is_convertible_v<A, T> && ...), int> = 0>
  constexpr mat(A... a) : c{} {
    const T flat[] = {static_cast<T>(a)...};
    for (int k = 0; k < R * C; ++k) c[k / C][k % C] = flat[k];
  }
  // One constructor per row count (not a pack), so rows can be braced: `mat22f({1, 2}, {3, 4})`.
  template <int M = R, std::enable_if_t<M == 2, int> = 0>
  constexpr mat(const vec<C, T>& r0, const vec<C, T>& r1) : c{} {
    const vec<C, T>* rows[] = {&r0, &r1};
    set_rows(rows);
  }
  template <int M = R, std::enable_if_t<M == 3, int> = 0>
  constexpr mat(const vec<C, T>& r0, const vec<C, T>& r1, const vec<C, T>& r2) : c{} {
    const vec<C, T>* rows[] = {&r0, &r1, &r2};
    set_rows(rows);
  }
  template <int M = R, std::enable_if_t<M == 4, int> = 0>
  constexpr mat(const vec<C, T>& r0, const vec<C, T>& r1, const vec<C, T>& r2, const vec<C, T>& r3) : c{} {
    const vec<C, T>* rows[] = {&r0, &r1, &r2, &r3};
    set_rows(rows);
  }
  /// The identity (square matrices only).
  static constexpr mat identity() {
    static_assert(R == C, "kjit: identity() is for square matrices");
    mat m{};
    for (int i = 0; i < R; ++i) m.c[i][i] = T(1);
    return m;
  }
  constexpr T* operator[](int r) { return c[r]; }
  constexpr const T* operator[](int r) const { return c[r]; }
  constexpr T& operator()(int i, int j) { return c[i][j]; }
  constexpr const T& operator()(int i, int j) const { return c[i][j]; }

 private:
  constexpr void set_rows(const vec<C, T>* const* rows) {
    for (int i = 0; i < R; ++i)
      for (int j = 0; j < C; ++j) c[i][j] = rows[i]->c[j];
  }
};

/// A quaternion (x, y, z, w), the real part last: `quatf(x, y, z, w)`, `quatf(v, w)`, zero by
/// default (`quat_identity<float>()` or `quatf::identity()` is the identity rotation); `q[i]`
/// is component i in that order.
template <class T>
struct quat {
  T x, y, z, w;
  quat() = default;  // trivial: quatf() and quatf{} are zero
  constexpr quat(T x_, T y_, T z_, T w_) : x(x_), y(y_), z(z_), w(w_) {}
  constexpr quat(const vec<3, T>& v, T w_) : x(v.c[0]), y(v.c[1]), z(v.c[2]), w(w_) {}
  static constexpr quat identity() { return quat(T(0), T(0), T(0), T(1)); }
  // Named members, not an array, as kernels store it; the index picks one (no pointer
  // arithmetic across members).
  constexpr T& operator[](int i) { return i == 0 ? x : i == 1 ? y : i == 2 ? z : w; }
  constexpr const T& operator[](int i) const { return i == 0 ? x : i == 1 ? y : i == 2 ? z : w; }
};

/// A rigid transform: translation p, then rotation q. `transformf(p, q)`, zero by default
/// (`transform_identity<float>()` or `transformf::identity()` is the identity); `t[i]` is
/// component i of (p, q), seven in all, as Warp indexes a transform.
template <class T>
struct transform {
  vec<3, T> p;
  quat<T> q;
  transform() = default;  // trivial: transformf() and transformf{} are zero
  constexpr transform(const vec<3, T>& p_, const quat<T>& q_) : p(p_), q(q_) {}
  static constexpr transform identity() { return transform(vec<3, T>(), quat<T>::identity()); }
  constexpr T& operator[](int i) { return i < 3 ? p.c[i] : q[i - 3]; }
  constexpr const T& operator[](int i) const { return i < 3 ? p.c[i] : q[i - 3]; }
};

static_assert(sizeof(vec<3, float>) == 12 && sizeof(mat<3, 3, float>) == 36 && sizeof(quat<float>) == 16 &&
                  sizeof(transform<float>) == 28 && sizeof(transform<double>) == 56,
              "kjit: host element types are packed as kernels read them");
static_assert(std::is_standard_layout_v<transform<float>> && std::is_trivial_v<transform<float>> &&
                  std::is_standard_layout_v<mat<3, 3, double>> && std::is_trivial_v<mat<3, 3, double>>,
              "kjit: host element types are copied as bytes into kernel arguments and arrays");

}  // namespace kjit

#include "kjit/type_aliases.hpp"

namespace kjit {

namespace detail {
template <class T> struct scalar_kind;
template <> struct scalar_kind<bool> { static constexpr ir::Scalar value = ir::Scalar::Bool; };
template <> struct scalar_kind<int8_t> { static constexpr ir::Scalar value = ir::Scalar::I8; };
template <> struct scalar_kind<uint8_t> { static constexpr ir::Scalar value = ir::Scalar::U8; };
template <> struct scalar_kind<int16_t> { static constexpr ir::Scalar value = ir::Scalar::I16; };
template <> struct scalar_kind<uint16_t> { static constexpr ir::Scalar value = ir::Scalar::U16; };
template <> struct scalar_kind<int32_t> { static constexpr ir::Scalar value = ir::Scalar::I32; };
template <> struct scalar_kind<uint32_t> { static constexpr ir::Scalar value = ir::Scalar::U32; };
template <> struct scalar_kind<int64_t> { static constexpr ir::Scalar value = ir::Scalar::I64; };
template <> struct scalar_kind<uint64_t> { static constexpr ir::Scalar value = ir::Scalar::U64; };
template <> struct scalar_kind<half> { static constexpr ir::Scalar value = ir::Scalar::F16; };
template <> struct scalar_kind<bfloat16> { static constexpr ir::Scalar value = ir::Scalar::BF16; };
template <> struct scalar_kind<float> { static constexpr ir::Scalar value = ir::Scalar::F32; };
template <> struct scalar_kind<double> { static constexpr ir::Scalar value = ir::Scalar::F64; };
}  // namespace detail

/// Compile-time facts about an element type T: its scalar and shape. Specialised for every
/// type kernels can hold; `type_traits<T>::ir()` is the IR type.
template <class T, class = void>
struct type_traits {
  static constexpr bool known = false;
};

template <class T>
struct type_traits<T, std::void_t<decltype(detail::scalar_kind<T>::value)>> {
  static constexpr bool known = true;
  using scalar = T;
  static constexpr ir::Shape shape = ir::Shape::Scalar;
  static constexpr int rows = 1, cols = 1;
  static ir::Type ir() { return ir::Type::scalar_of(detail::scalar_kind<T>::value); }
};

template <int N, class T>
struct type_traits<vec<N, T>> {
  static constexpr bool known = true;
  using scalar = T;
  static constexpr ir::Shape shape = ir::Shape::Vector;
  static constexpr int rows = N, cols = 1;
  static ir::Type ir() { return ir::Type::vector(N, detail::scalar_kind<T>::value); }
};

template <int R, int C, class T>
struct type_traits<mat<R, C, T>> {
  static constexpr bool known = true;
  using scalar = T;
  static constexpr ir::Shape shape = ir::Shape::Matrix;
  static constexpr int rows = R, cols = C;
  static ir::Type ir() { return ir::Type::matrix(R, C, detail::scalar_kind<T>::value); }
};

template <class T>
struct type_traits<quat<T>> {
  static constexpr bool known = true;
  using scalar = T;
  static constexpr ir::Shape shape = ir::Shape::Quat;
  static constexpr int rows = 4, cols = 1;
  static ir::Type ir() { return ir::Type::quat(detail::scalar_kind<T>::value); }
};

template <class T>
struct type_traits<transform<T>> {
  static constexpr bool known = true;
  using scalar = T;
  static constexpr ir::Shape shape = ir::Shape::Transform;
  static constexpr int rows = 7, cols = 1;
  static ir::Type ir() { return ir::Type::transform(detail::scalar_kind<T>::value); }
};

/// A user struct declared with KJIT_STRUCT (kjit/dsl/structs.hpp): its static
/// kjit_struct_id() registers the layout on first use.
template <class T>
struct type_traits<T, std::void_t<decltype(T::kjit_struct_id())>> {
  static constexpr bool known = true;
  using scalar = void;
  static constexpr ir::Shape shape = ir::Shape::Struct;
  static constexpr int rows = 1, cols = 1;
  static ir::Type ir() { return ir::Type::structure(T::kjit_struct_id()); }
};

/// What a KJIT_STRUCT field declared `(Array<T, N>, name)` holds on the host: a plain,
/// non-owning record of an array (Warp's array member of a @wp.struct), laid out as the kernel
/// ABI's array_t (kjit/abi.h): set it from an NdArray (`queue.buffer = buffer;`, which checks
/// the element type and dimensionality); the array must outlive the launches that read it.
template <class T, int N = 1>
struct ArrayRef {
  T* data = nullptr;           ///< element (0, ..., 0); null for no array
  T* grad = nullptr;           ///< the array's gradient buffer, or null
  int32_t shape[4] = {};       ///< extent per dimension; unused ones are 0
  int32_t ndim = 0;            ///< N (0 for no array)
  int32_t flags = 0;           ///< always 0 on the host
  int64_t strides[4] = {};     ///< byte stride per dimension
};
static_assert(sizeof(ArrayRef<float>) == 72 && alignof(ArrayRef<float>) == 8, "kjit: ArrayRef is laid out as array_t");

/// An array field: its IR type is the array type (a kernel reads it as an Array<T, N>).
template <class T, int N>
struct type_traits<ArrayRef<T, N>> {
  static constexpr bool known = true;
  using scalar = void;
  static constexpr ir::Shape shape = ir::Shape::Void;  // not a value: no vector, matrix... operations
  static constexpr int rows = 1, cols = 1;
  static ir::Type ir() { return ir::Type::array(type_traits<T>::ir(), N); }
};

/// The IR type of host element type T.
template <class T>
ir::Type ir_type_of() {
  static_assert(type_traits<T>::known, "kjit: this C++ type is not a kernel element type");
  return type_traits<T>::ir();
}

/// The scalar component type of T (float for vec3f).
template <class T>
using scalar_of_t = typename type_traits<T>::scalar;

/// Whether T is a known element type of shape S (false, not an error, for unknown T).
template <class T, ir::Shape S, class = void>
constexpr bool shape_is_v = false;
template <class T, ir::Shape S>
constexpr bool shape_is_v<T, S, std::enable_if_t<type_traits<T>::known>> = type_traits<T>::shape == S;

template <class T>
constexpr bool is_scalar_v = shape_is_v<T, ir::Shape::Scalar>;
template <class T>
constexpr bool is_float_scalar_v = is_scalar_v<T> && (std::is_floating_point_v<T> ||
                                                      std::is_same_v<T, half> ||
                                                      std::is_same_v<T, bfloat16>);
template <class T>
constexpr bool is_int_scalar_v = is_scalar_v<T> && std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <class T>
constexpr bool is_vector_v = shape_is_v<T, ir::Shape::Vector>;
template <class T>
constexpr bool is_matrix_v = shape_is_v<T, ir::Shape::Matrix>;
template <class T>
constexpr bool is_quat_v = shape_is_v<T, ir::Shape::Quat>;
template <class T>
constexpr bool is_transform_v = shape_is_v<T, ir::Shape::Transform>;
template <class T>
constexpr bool is_struct_v = shape_is_v<T, ir::Shape::Struct>;
/// Numeric: any known type whose scalar is not bool.
template <class T, class = void>
constexpr bool is_numeric_v = false;
template <class T>
constexpr bool is_numeric_v<T, std::enable_if_t<type_traits<T>::known>> =
    type_traits<T>::shape != ir::Shape::Struct && type_traits<T>::shape != ir::Shape::Void &&
    !std::is_same_v<typename type_traits<T>::scalar, bool>;
/// Floating: any known type whose scalar is a floating type.
template <class T, class = void>
constexpr bool is_floating_v = false;
template <class T>
constexpr bool is_floating_v<T, std::enable_if_t<type_traits<T>::known>> =
    is_float_scalar_v<typename type_traits<T>::scalar>;

}  // namespace kjit

#include "kjit/host_math.hpp"

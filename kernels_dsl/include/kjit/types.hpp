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

/// A vector of N components of T, as kernels store it (no padding).
template <int N, class T>
struct vec {
  T c[N];
  constexpr T& operator[](int i) { return c[i]; }
  constexpr const T& operator[](int i) const { return c[i]; }
};

/// An R x C matrix of T, row-major, as kernels store it.
template <int R, int C, class T>
struct mat {
  T c[R][C];
  constexpr T* operator[](int r) { return c[r]; }
  constexpr const T* operator[](int r) const { return c[r]; }
};

/// A quaternion (x, y, z, w), the real part last.
template <class T>
struct quat {
  T x, y, z, w;
};

/// A rigid transform: translation p, then rotation q.
template <class T>
struct transform {
  vec<3, T> p;
  quat<T> q;
};

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
    type_traits<T>::shape != ir::Shape::Struct &&
    !std::is_same_v<typename type_traits<T>::scalar, bool>;
/// Floating: any known type whose scalar is a floating type.
template <class T, class = void>
constexpr bool is_floating_v = false;
template <class T>
constexpr bool is_floating_v<T, std::enable_if_t<type_traits<T>::known>> =
    is_float_scalar_v<typename type_traits<T>::scalar>;

}  // namespace kjit

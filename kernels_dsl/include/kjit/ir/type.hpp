// kjit/ir/type.hpp — IR value types: scalars, vectors, matrices, quaternions, transforms,
// structs, and arrays of any of them.
#pragma once

#include <cstdint>
#include <string>

namespace kjit::ir {

/// Scalar element kinds (see scalar_types.def).
enum class Scalar : uint8_t {
#define X(E, name, short_name, cpp, bytes, is_float, is_signed) E,
#include "kjit/ir/scalar_types.def"
#undef X
};

/// Number of scalar kinds.
constexpr int kScalarCount = 0
#define X(E, name, short_name, cpp, bytes, is_float, is_signed) +1
#include "kjit/ir/scalar_types.def"
#undef X
    ;

/// "float32", "int32", ...
const char* scalar_name(Scalar s);
/// Short suffix used in type names: "f" for float32 (vec3f), "d", "i", "h", ...
const char* scalar_short_name(Scalar s);
/// The prelude's C++ spelling of the scalar ("float", "kj::half", ...).
const char* scalar_cpp(Scalar s);
/// Size in bytes.
int scalar_bytes(Scalar s);
bool scalar_is_float(Scalar s);
bool scalar_is_signed(Scalar s);

/// The shape of a value, independent of its scalar kind.
enum class Shape : uint8_t {
  Void,       ///< no value (statements)
  Scalar,     ///< one scalar
  Vector,     ///< rows components (spatial vectors are 6-vectors)
  Matrix,     ///< rows x cols, row-major (spatial matrices are 6x6)
  Quat,       ///< x, y, z, w: the real part last
  Transform,  ///< translation (3) then rotation quaternion (4)
  Struct,     ///< a user struct (struct_id indexes the struct registry)
};

/// A value type, or an array of them when `ndim` > 0. Small, trivially copyable, compared
/// by value.
struct Type {
  Shape shape = Shape::Void;
  Scalar scalar = Scalar::F32;
  uint8_t rows = 1;     ///< vector length / matrix rows
  uint8_t cols = 1;     ///< matrix columns
  uint8_t ndim = 0;     ///< 0: a value; 1..4: an array of this element type
  uint16_t struct_id = 0;

  static Type void_type() { return Type{}; }
  static Type scalar_of(Scalar s) { return Type{Shape::Scalar, s, 1, 1, 0, 0}; }
  static Type vector(int n, Scalar s) { return Type{Shape::Vector, s, uint8_t(n), 1, 0, 0}; }
  static Type matrix(int r, int c, Scalar s) {
    return Type{Shape::Matrix, s, uint8_t(r), uint8_t(c), 0, 0};
  }
  static Type quat(Scalar s) { return Type{Shape::Quat, s, 4, 1, 0, 0}; }
  static Type transform(Scalar s) { return Type{Shape::Transform, s, 7, 1, 0, 0}; }
  static Type structure(uint16_t id) { return Type{Shape::Struct, Scalar::F32, 1, 1, 0, id}; }
  static Type array(Type element, int ndim) { element.ndim = uint8_t(ndim); return element; }

  bool is_void() const { return shape == Shape::Void; }
  bool is_array() const { return ndim > 0; }
  bool is_scalar() const { return shape == Shape::Scalar && ndim == 0; }
  bool is_vector() const { return shape == Shape::Vector && ndim == 0; }
  bool is_matrix() const { return shape == Shape::Matrix && ndim == 0; }
  bool is_struct() const { return shape == Shape::Struct && ndim == 0; }
  /// The element type of an array (the type itself for a value).
  Type element() const { Type t = *this; t.ndim = 0; return t; }
  /// Scalar components in one value: 1, n, r*c, 4, 7 (0 for void, structs and arrays).
  int lanes() const;
  bool is_float() const { return shape != Shape::Void && shape != Shape::Struct && scalar_is_float(scalar); }
  bool is_integer() const {
    return shape != Shape::Void && shape != Shape::Struct && !scalar_is_float(scalar) &&
           scalar != Scalar::Bool;
  }
  bool is_bool() const { return shape == Shape::Scalar && scalar == Scalar::Bool; }
  /// Carries an adjoint: a floating value, a struct with floating fields, or an array of them.
  bool is_differentiable() const;
  /// Bytes of one element as the ABI lays it out.
  int element_bytes() const;

  /// Readable name: "float32", "vec3f", "mat33d", "quatf", "transformf", "array2d<vec3f>".
  std::string str() const;
  /// The prelude's C++ type: "float", "kj::vec_t<3,float>", "kj::array_t<float>".
  std::string cpp() const;

  bool operator==(const Type& o) const {
    return shape == o.shape && scalar == o.scalar && rows == o.rows && cols == o.cols &&
           ndim == o.ndim && struct_id == o.struct_id;
  }
  bool operator!=(const Type& o) const { return !(*this == o); }
};

}  // namespace kjit::ir

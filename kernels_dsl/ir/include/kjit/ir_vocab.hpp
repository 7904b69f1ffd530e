// kjit/ir_vocab.hpp — the part of the IR's vocabulary that kernel code names: scalar kinds,
// shapes, value types, statement and builtin codes, value ids. Light on purpose (no <string>,
// no containers): <kjit/dsl.hpp> reaches it, while the IR itself (kjit/ir/*.hpp) stays internal.
#pragma once

#include <cstdint>

#include "kjit/string_fwd.hpp"  // Type::str() and Type::cpp() return std::string

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

/// Statement kinds (see ops.def).
enum class Op : uint8_t {
#define KJIT_IR_OP(E, name, regions, kind, adjoint) E,
#include "kjit/ir/ops.def"
#undef KJIT_IR_OP
};

/// Every builtin function (see builtins.def).
enum class Builtin : uint16_t {
#define KJIT_BUILTIN(E, ...) E,
#include "kjit/ir/builtins.def"
};

/// The atomic read-modify-write operations on array elements.
enum class AtomicOp : uint8_t { Add, Sub, Min, Max, And, Or, Xor, Exch, Cas };

/// Index of a value in Function::values.
using ValueId = uint32_t;
/// "No value": statements that produce none, blocks that yield none.
constexpr ValueId kNoValue = ~0u;

/// Where in the user's source a statement was traced.
struct SourceLoc {
  const char* file = nullptr;  ///< a string with static storage (from __builtin_FILE)
  int line = 0;
  bool known() const { return file != nullptr && line > 0; }
  /// "springs.hpp:23" (just the file's base name) or "<unknown>".
  std::string short_str() const;
  /// "path/to/springs.hpp:23" or "<unknown>".
  std::string str() const;
};

}  // namespace kjit::ir

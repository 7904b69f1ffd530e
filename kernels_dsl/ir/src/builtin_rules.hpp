// Shared pieces of the builtin type rules (internal to kernels_dsl): predicates on types,
// the failure message, and the result structs of multi-output builtins.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kjit/ir/builtins.hpp"
#include "kjit/ir/structs.hpp"

namespace kjit::ir::rules {

/// The signature of every rule: the builtin's name, its argument types, and where to put
/// the message when the arguments do not fit.
#define KJIT_RULE(name) \
  std::optional<Type> name(const char* fn, const Type* a, int n, std::string* error)

/// Every rule named in builtins.def (repeated declarations are harmless).
#define KJIT_BUILTIN(E, name, category, rule, ...) KJIT_RULE(rule);
#include "kjit/ir/builtins.def"

/// "a, b, c" of the argument types, for messages.
std::string list(const Type* a, int n);
/// Sets "<fn> expects <expected>, got <args>" and returns nullopt.
std::optional<Type> fail(std::string* error, const char* fn, const char* expected, const Type* a, int n);

inline bool value(const Type& t) { return !t.is_array() && !t.is_void() && t.shape != Shape::Struct; }
inline bool numeric(const Type& t) { return value(t) && t.scalar != Scalar::Bool; }
inline bool numeric_scalar(const Type& t) { return t.is_scalar() && t.scalar != Scalar::Bool; }
inline bool integer_scalar(const Type& t) { return t.is_scalar() && t.is_integer(); }
inline bool float_scalar(const Type& t) { return t.is_scalar() && t.is_float(); }
inline bool float_vector(const Type& t) { return t.is_vector() && t.is_float(); }
/// float32 or float64: the precisions of the geometric builtins (float16 values convert).
inline bool real(const Type& t) { return t.scalar == Scalar::F32 || t.scalar == Scalar::F64; }
inline bool real_scalar(const Type& t) { return t.is_scalar() && real(t); }
inline bool vec_of(const Type& t, int n) { return t.is_vector() && t.rows == n && real(t); }
inline bool mat_of(const Type& t, int r, int c) { return t.is_matrix() && t.rows == r && t.cols == c && real(t); }
inline bool quat(const Type& t) { return t.shape == Shape::Quat && !t.is_array() && real(t); }
inline bool xform(const Type& t) { return t.shape == Shape::Transform && !t.is_array() && real(t); }
inline bool i32(const Type& t) { return t == Type::scalar_of(Scalar::I32); }
inline bool u32(const Type& t) { return t == Type::scalar_of(Scalar::U32); }
inline bool int32_like(const Type& t) { return i32(t) || u32(t); }
inline Type bool_type() { return Type::scalar_of(Scalar::Bool); }
inline Type scalar_like(const Type& t) { return Type::scalar_of(t.scalar); }
/// "float" or "double": the prelude's template argument for scalar `t`.
inline std::string cpp_scalar(const Type& t) { return scalar_cpp(t.scalar); }

/// One field of a result struct.
struct ResultField {
  const char* name;
  Type type;
};
/// The result struct `cpp_name` (a prelude type such as "kj::svd3_t<float>") with `fields`,
/// defined by prelude chunk `chunk`; registered once.
Type result_struct(const std::string& cpp_name, const char* chunk, std::vector<ResultField> fields);

}  // namespace kjit::ir::rules

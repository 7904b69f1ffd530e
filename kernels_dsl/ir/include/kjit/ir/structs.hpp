// kjit/ir/structs.hpp — the registry of user struct types that kernels can hold.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kjit/ir/type.hpp"

namespace kjit::ir {

/// One field of a struct, at a byte offset.
struct StructField {
  std::string name;
  Type type;
  int offset = 0;
  /// Whether the field carries an adjoint in the struct's adjoint (an array field does not:
  /// its gradients live in its own gradient buffer).
  bool differentiable() const { return !type.is_array() && type.is_differentiable(); }
};

/// Bytes of an array field (the kernel ABI's array_t; kjit::ArrayRef on the host).
constexpr int kArrayFieldBytes = 72;

/// A struct type as kernels lay it out (C layout rules, as the host compiler does).
struct StructInfo {
  std::string name;      ///< qualified C++ name, e.g. "demo::Particle"
  std::string cpp_name;  ///< identifier used in generated code
  std::vector<StructField> fields;
  int size = 0;
  int align = 1;
  /// Non-empty for the result structs of multi-output builtins (svd3, random draws, ...):
  /// the prelude chunk that defines the struct (codegen emits user structs itself).
  std::string prelude_chunk;
};

/// Fills in the field offsets, size and alignment of `info` by C layout rules (each field
/// at the next multiple of its alignment; vectors, matrices, quaternions and transforms
/// align as their scalar), as both the host compiler and NVRTC lay the struct out.
void layout_struct(StructInfo& info);
/// The alignment of a value of type `t` in memory.
int type_align(const Type& t);

/// Whether a value of type `t` carries a forward-mode tangent: a differentiable type, or a
/// struct holding (at any depth) an array field of floating elements, whose tangent is the
/// same field of the struct's tangent; an array: whether its elements do.
bool carries_tangent(const Type& t);
/// The struct with id `id`; throws an Internal error for unknown ids.
const StructInfo& struct_info(uint16_t id);
/// Registers a struct (or returns the id of an identical one already registered). Ids start
/// at 1. Two different layouts under one name are a User error.
uint16_t register_struct(StructInfo info);

/// The struct that carries several results of types `types` (a device function's, or a value
/// and its tangent): "results(float32, vec3f)", fields r0, r1, ...; registered once per list
/// of types, so the same list in two functions or modules is one type.
Type results_struct(const Type* types, size_t count);

struct Function;
/// What grad(f) (IR GradFunc) gives for device function `f`: the adjoint of its one
/// parameter, typed as it; for several, the results struct of the parameters' types.
Type gradient_type(const Function& f);

}  // namespace kjit::ir

// kjit/ir/builtins.hpp — builtin functions: ids, names, categories and type rules.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kjit/ir/type.hpp"

namespace kjit::ir {

/// Number of builtins.
constexpr int kBuiltinCount = 0
#define KJIT_BUILTIN(...) +1
#include "kjit/ir/builtins.def"
    ;

/// The groups of Warp's builtin reference.
enum class BuiltinCategory {
  Operators, ScalarMath, VectorMath, MatrixMath, Quaternion, Spatial, Random, Noise, Utility, Geometry,
};

/// What the IR knows about a builtin.
struct BuiltinInfo {
  const char* name;           ///< Warp's name ("add", "sin", "dot", ...)
  BuiltinCategory category;
  bool differentiable;        ///< has an adjoint through its floating arguments
};

/// Static facts of `b`.
const BuiltinInfo& builtin_info(Builtin b);

/// What kjit offers for one of Warp's builtin names: a builtin call (builtins.def) or an
/// intrinsic the DSL writes as another IR statement (intrinsics.def).
struct Counterpart {
  const char* warp_name;
  const char* kjit_spelling;  ///< how kernels write it
  bool differentiable;
  std::optional<Builtin> builtin;  ///< set for builtin calls
  const char* statement;           ///< the IR statement of an intrinsic ("ArrayAtomic add")
};
/// The counterpart of Warp builtin `warp_name`, if kjit has one.
std::optional<Counterpart> find_counterpart(std::string_view warp_name);
/// Every counterpart: the builtins, then the intrinsics.
std::vector<Counterpart> all_counterparts();
/// The builtin named `name` (Warp's name), if any.
std::optional<Builtin> find_builtin(std::string_view name);

/// The result type of `b` applied to `args`, or nullopt with a message in `*error` saying
/// what was expected ("dot expects two vectors of the same length, got vec3f and vec4f").
std::optional<Type> infer_builtin_type(Builtin b, const Type* args, int count,
                                       std::string* error);

/// "add", "sub", ...
const char* atomic_op_name(AtomicOp op);

}  // namespace kjit::ir

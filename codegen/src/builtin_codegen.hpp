// How each builtin is written in generated code, forward, adjoint and tangent, and which
// prelude chunks it needs. One row per builtin of kjit/ir/builtins.def, checked at compile time.
#pragma once

#include <set>
#include <string>

#include "kjit/ir/builtins.hpp"
#include "tangent_rules.hpp"

namespace kjit::codegen {

/// The generated-code form of one builtin.
struct BuiltinCodegen {
  ir::Builtin id;
  /// C++ operator: binary infix for two operands, prefix for one, "?:" for where; null when
  /// the builtin is a prelude function.
  const char* op;
  /// Prelude function, when `op` is null or does not apply (see op_integers_only).
  const char* function;
  /// Prelude chunk of the forward function; null when C++ operators suffice.
  const char* chunk;
  /// Prelude adjoint function: adj(args..., ret, adj_args of floating args..., adj_ret).
  /// Null for builtins with no gradient.
  const char* adjoint;
  /// Prelude chunk of the adjoint.
  const char* adjoint_chunk;
  /// The tangent (forward-mode) rule: builds the call's derivative in IR (tangent_rules.hpp).
  /// Null exactly for builtins with no gradient.
  TangentRule tangent;
  /// `op` applies to integer operands only (float % is kj::mod).
  bool op_integers_only;
  /// The function also takes the call site: the thread index and "file:line" (expect_near
  /// reports where and in which thread it failed).
  bool takes_site;
  /// The adjoint's partials are constants (±1): an exactly zero incoming adjoint adds ±0,
  /// so the reverse sweep needs no strong-zero test around it. The tests are branches, and
  /// one per statement made GCC's and NVRTC's time grow faster than the kernel.
  bool adjoint_linear = false;
  /// For the rules that emit a TangentCall: the prelude function computing the tangent,
  /// f(args..., tangent of each floating argument...), and its chunk. Null: the forward
  /// function is evaluated once on dual numbers (dual.h).
  const char* tangent_function = nullptr;
  const char* tangent_chunk = nullptr;
};

/// The row of `b`.
const BuiltinCodegen& builtin_codegen(ir::Builtin b);

/// What generated code calls to apply adjoint rule `rule` ("kj::adj_mul"): a wrapper taking
/// every argument by non-const reference ("kj::adj_mul_ref"). NVRTC's C++17 front end takes
/// time quadratic in the number of calls in one function that pass two or more variables by
/// value or by const reference (4,000 such calls: 5 s; 8,000: 16 s), and linear time for
/// calls whose arguments bind to non-const references; a long reverse sweep is such calls.
std::string rule_by_reference(const char* rule);

/// The definitions of those wrappers for every adjoint rule of the table whose chunk is in
/// `chunks` (one line each, for the text after the prelude).
std::string rule_wrappers(const std::set<std::string>& chunks);

}  // namespace kjit::codegen

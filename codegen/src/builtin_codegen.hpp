// How each builtin is written in generated code, forward, adjoint and tangent, and which
// prelude chunks it needs: the codegen fields of each record of kjit/ir/builtins.def.
#pragma once

#include <set>
#include <string>

#include "kjit/ir/builtins.hpp"
#include "tangent_rules.hpp"

namespace kjit::codegen {

/// The generated-code form of one builtin: the fields of its record in builtins.def.
struct BuiltinCodegen {
  ir::Builtin id;
  /// KJ_OPERATOR: C++ operator, binary infix for two operands, prefix for one, "?:" for
  /// where; null when the builtin is a prelude function.
  const char* op = nullptr;
  /// KJ_FORWARD: prelude function, when `op` is null or does not apply (op_integers_only).
  const char* function = nullptr;
  /// Prelude chunk of the forward function; null when C++ operators suffice.
  const char* chunk = nullptr;
  /// KJ_ADJOINT: prelude adjoint function, adj(args..., ret, adj_args of floating args...,
  /// adj_ret). Null for builtins with no gradient.
  const char* adjoint = nullptr;
  /// Prelude chunk of the adjoint.
  const char* adjoint_chunk = nullptr;
  /// KJ_TANGENT: the tangent (forward-mode) rule, building the call's derivative in IR
  /// (tangent_rules.hpp). Null exactly for builtins with no gradient.
  TangentRule tangent = nullptr;
  /// KJ_OPERATOR_ON_INTEGERS: `op` applies to integer operands only (float % is kj::mod).
  bool op_integers_only = false;
  /// KJ_TAKES_SITE: the function also takes the call site, the thread index and
  /// "file:line" (expect_near reports where and in which thread it failed).
  bool takes_site = false;
  /// KJ_LINEAR_ADJOINT: the adjoint's partials are constants (±1), so an exactly zero
  /// incoming adjoint adds ±0 and the reverse sweep needs no strong-zero test around it. The
  /// tests are branches, and one per statement made GCC's and NVRTC's time grow faster than
  /// the kernel.
  bool adjoint_linear = false;
  /// KJ_TANGENT_FUNCTION: for the rules that emit a TangentCall, the prelude function
  /// computing the tangent, f(args..., tangent of each floating argument...), and its chunk.
  /// Null: the forward function is evaluated once on dual numbers (dual.h).
  const char* tangent_function = nullptr;
  const char* tangent_chunk = nullptr;

  // The field macros of builtins.def, applied in a record's order to a copy of the row.
  constexpr BuiltinCodegen with_operator(const char* o, bool integers_only) const {
    BuiltinCodegen r = *this;
    r.op = once(op, o);
    r.op_integers_only = integers_only;
    return r;
  }
  constexpr BuiltinCodegen with_forward(const char* f, const char* c) const {
    BuiltinCodegen r = *this;
    r.function = once(function, f);
    r.chunk = c;
    return r;
  }
  constexpr BuiltinCodegen with_adjoint(const char* f, const char* c, bool linear) const {
    BuiltinCodegen r = *this;
    r.adjoint = once(adjoint, f);
    r.adjoint_chunk = c;
    r.adjoint_linear = linear;
    return r;
  }
  constexpr BuiltinCodegen with_tangent(TangentRule rule) const {
    BuiltinCodegen r = *this;
    r.tangent = tangent.set ? throw "builtins.def: a record names a field twice" : rule;
    return r;
  }
  constexpr BuiltinCodegen with_tangent_function(const char* f, const char* c) const {
    BuiltinCodegen r = *this;
    r.tangent_function = once(tangent_function, f);
    r.tangent_chunk = c;
    return r;
  }
  constexpr BuiltinCodegen with_site() const {
    BuiltinCodegen r = *this;
    r.takes_site = true;
    return r;
  }

 private:
  /// `now` for a field that is still unset (`had` null); a record naming one field twice
  /// fails the build (a throw in a constant expression).
  static constexpr const char* once(const char* had, const char* now) {
    return had ? throw "builtins.def: a record names a field twice" : now;
  }
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

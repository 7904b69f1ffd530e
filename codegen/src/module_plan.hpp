// What a module holds besides its kernels, decided once for both generate_module and
// describe_module: its device functions (deduplicated, callees first, with stable names), the
// user structs it defines (inner ones first), and the status code of every adjoint loop.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "expr_emitter.hpp"
#include "kjit/codegen/codegen.hpp"
#include "lower.hpp"
#include "source_writer.hpp"

namespace kjit::codegen {

/// One adjoint loop: its status code (reported when it exceeds its checkpoints) and where
/// it is.
struct PlannedLoop {
  int status = 0;
  ir::SourceLoc loc;
};

/// The plan of one module.
struct ModulePlan {
  /// Every kernel and function after codegen's passes (lower.cpp), which the printers print.
  LoweredModule lowered;
  /// Distinct device functions in emission order (every callee before its callers).
  std::vector<const ir::Function*> functions;
  /// The C++ name of every device function object the kernels reach ("kjf_0", ...);
  /// identical functions share one name.
  FunctionNames names;
  /// User structs (not the prelude's result structs), inner structs first.
  std::vector<uint16_t> structs;
  /// Per kernel (in order): its own adjoint loops, then those of the functions it calls.
  std::vector<std::vector<PlannedLoop>> kernel_loops;
  /// Per distinct function (in `functions` order): the first status code of its loops.
  std::map<const ir::Function*, int> function_first_loop;
  /// Why each kernel gets no adjoint ("" when it gets one).
  std::vector<std::string> obstacles;
  /// Whether device functions get adjoints (lower.hpp's function_adjoints).
  bool function_adjoints = false;
  /// The names of the functions whose gradient the module takes (grad(f): IR GradFunc); each
  /// gets a `grad_<name>` beside its adjoint.
  std::set<std::string> gradients;
};

/// Plans the module of `kernels`: runs the pass list (lower_module), then names the device
/// functions, orders the structs and numbers the adjoint loops.
ModulePlan plan_module(const std::vector<const ir::Function*>& kernels, const CodegenOptions& options);

/// Writes the definitions of the plan's user structs: the struct, a check that its layout is
/// the host's, field setters, `+=` over the floating fields and, when `with_atomics`, an
/// atomic_add (adjoint arrays of structs).
void emit_structs(SourceWriter& w, const ModulePlan& plan, bool with_atomics);

/// Writes every device function of the plan: the function, its side-effect-free replay,
/// (when the plan's function_adjoints) its adjoint and, for those whose gradient the module
/// takes, its gradient.
void emit_functions(SourceWriter& w, const ModulePlan& plan, const CodegenOptions& options);

}  // namespace kjit::codegen

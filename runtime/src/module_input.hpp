// What the compiler needs to build a module: its traced kernels turned into a ModuleSource
// (identity known at once, text generated only on a cache miss) and compile options
// (internal).
#pragma once

#include "kjit/compiler/compile_options.hpp"
#include "kjit/compiler/module_source.hpp"
#include "kjit/kernel.hpp"

namespace kjit::detail {

/// The compiler's input for a module.
struct ModuleInput {
  compiler::ModuleSource source;
  compiler::CompileOptions compile;
};

/// `options` with what the environment adds to every module: KJIT_BOUNDS_CHECK=1 turns on
/// bounds_check.
ModuleOptions with_environment(ModuleOptions options);

/// Traces the module's kernels (User errors for tracing mistakes) and describes them.
ModuleInput module_input(const ModuleDef& module, const ModuleOptions& options);

}  // namespace kjit::detail

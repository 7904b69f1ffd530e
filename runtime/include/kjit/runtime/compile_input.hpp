// kjit/runtime/compile_input.hpp — what the compiler is given for a module (for tools and tests
// that print or identify modules without building them). Not part of <kjit/kjit.hpp>: it
// reaches the compiler's internal headers.
#pragma once

#include <optional>
#include <string>

#include "kjit/compiler/compile_options.hpp"
#include "kjit/compiler/module_source.hpp"
#include "kjit/module_options.hpp"

namespace kjit {

/// What the compiler is given for a module: its source (identity at once, text generated on
/// demand) and compile options.
struct ModuleCompileInput {
  compiler::ModuleSource source;
  compiler::CompileOptions options;
};

/// The compiler's input for module `module_name` built with `options` (default: the
/// module's own). Traces its kernels; throws a User error for an unknown module or a
/// tracing mistake. For tools that print or identify modules without building them.
ModuleCompileInput module_compile_input(const std::string& module_name,
                                        const std::optional<ModuleOptions>& options = {});

}  // namespace kjit

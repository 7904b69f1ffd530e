// The host-compiler driver for the `cpu` target: one module text to a shared object that the
// runtime opens with dlopen.
#pragma once

#include <string>
#include <vector>

#include "compile_output.hpp"
#include "kjit/compiler/compile_options.hpp"

namespace kjit::compiler {

/// The host C++ compiler: $KJIT_CXX (a path, or a name looked up in PATH) when set, else the
/// compiler CMake found when kjit was built. Throws a User error when KJIT_CXX names nothing
/// runnable.
std::string host_compiler_path();

/// The host compiler's part of every `cpu` module key: the compiler kjit was built with
/// (CMake's id and version), or for $KJIT_CXX the first line of its `--version` (run once per
/// process and compiler), plus the host architecture and the driver's fixed flags.
std::string host_compiler_identity();

/// The command-line options (without input and output) for `options`.
std::vector<std::string> host_options(const CompileOptions& options);

/// Writes `text` to `work_dir`/source.cu and compiles it into `work_dir`/module.so. Never
/// throws for a compile error (the log is in the result); throws a Compile error when the
/// compiler cannot be started.
CompileOutput host_compile(const std::string& text, const CompileOptions& options,
                           const std::string& work_dir);

/// File names inside an entry or work folder.
inline constexpr const char* kSourceFile = "source.cu";
inline constexpr const char* kHostLibraryFile = "module.so";

}  // namespace kjit::compiler

// kjit/compiler/key.hpp — what a module key is made of: the cache format version, the
// compiler's identity, and the exact text that is hashed.
#pragma once

#include <string>

#include "kjit/compiler/compile_options.hpp"
#include "kjit/compiler/module_source.hpp"
#include "kjit/compiler/target.hpp"

namespace kjit::compiler {

/// Version of the cache's layout, of meta.json and of the key recipe. It names the cache's
/// subfolder ("v1") and enters every key; bump it with any change to any of them.
constexpr int kCacheFormatVersion = 1;

/// The identity of the compiler that builds `target`: "nvrtc <major>.<minor> flags ..." for
/// GPU targets; for `cpu` the host compiler's id and version (or the first line of
/// `$KJIT_CXX --version`), the host architecture and the fixed flags. Never a path.
std::string compiler_identity(const Target& target);

/// The exact text whose SHA-256 is the module key: the format version, kj::kAbiVersion, the
/// module name, the target, the compiler identity, the options' fingerprint, and the
/// module's identity (its text when the identity is empty), each on its own labelled line
/// with lengths where a value could contain a newline. Exposed for tests and `kjit` tools.
std::string module_key_material(const ModuleSource& source, const Target& target,
                                const CompileOptions& options);

}  // namespace kjit::compiler

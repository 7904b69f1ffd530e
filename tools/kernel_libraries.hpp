// Opening kernel libraries (shared libraries whose kernels register themselves when they
// load) and finding the modules and kernels they brought, with clear errors for bad input.
#pragma once

#include <string>
#include <vector>

#include "kjit/kernel.hpp"

namespace kjit::tool {

/// What the kernel libraries given to a command registered.
struct KernelLibraries {
  std::vector<std::string> paths;            ///< as given
  std::vector<const KernelDef*> kernels;     ///< their kernels, sorted by name
  std::vector<const ModuleDef*> modules;     ///< the modules of those kernels, sorted by name

  /// Names of the modules.
  std::vector<std::string> module_names() const;
  /// Qualified names of the kernels.
  std::vector<std::string> kernel_names() const;
  /// The module named `name`; a UsageError listing the modules (and a likely typo) if none.
  const ModuleDef& module(const std::string& name) const;
  /// The kernel named `name`: its qualified name ("demo::saxpy"), or its unqualified name
  /// ("saxpy") when only one kernel has it. A UsageError listing the kernels otherwise.
  const KernelDef& kernel(const std::string& name) const;
};

/// Loads each library in order. Throws UsageError, before loading anything, when no library
/// is given or a path is missing or not a file; and when a library cannot be loaded (not a
/// shared library, a missing dependency: the loader's message is included) or registers no
/// kernels that the libraries before it did not.
KernelLibraries load_kernel_libraries(const std::vector<std::string>& paths);

}  // namespace kjit::tool
